"""GPU time by kind of work (docs/report.md, "Kernel categories"),
recomputed from a trace's views and its kernel_category_rules table, for
tests/oracle.py and tests/test_categories.py.

Each GPU operation the report's busy time is made of (Trace.ops: the
kernels, memcpys and memsets views, gpu_activity before version 5) falls in
a category: copies `copy`, memsets `memset`, a kernel the category of the
first rule (user's rules first, then the trace's by priority) whose GLOB
pattern matches its name, else `other`. Per category: the operations and
their GPU time; per phase and per listed step: the part of each
operation's interval inside the phase's (step's) ranges, and the
operations that start inside them."""
import os
import sqlite3
from collections import defaultdict

import oracle_model as model

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TSV = os.path.join(ROOT, "analyzer", "trace", "kernel_categories.tsv")
STANDARD = ["matmul", "attention", "convolution", "elementwise", "reduction", "collective", "copy", "memset", "other"]


def read_rules(path):
    """[(pattern, category)] of a rules file (the .tsv form)."""
    out = []
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n").rstrip("\r").rstrip(" ")
            if not line or line.startswith("#"):
                continue
            pattern, category = line.split("\t", 1)
            out.append((pattern, category.strip("\t")))
    return out


def trace_rules(path):
    """The trace's rules by priority; a trace before version 9 has none of
    its own and is read with the defaults."""
    con = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
    try:
        has = con.execute("SELECT count(*) FROM sqlite_master WHERE name = 'kernel_category_rules'").fetchone()[0]
        if has:
            return con.execute("SELECT pattern, category FROM kernel_category_rules ORDER BY priority").fetchall()
    finally:
        con.close()
    return read_rules(TSV)


class Rules:
    def __init__(self, rules):
        self.rules = list(rules)
        self.glob = sqlite3.connect(":memory:")
        self.seen = {}

    def category(self, name):
        if name is None:
            return "other"
        if name not in self.seen:
            cat = "other"
            for pattern, c in self.rules:
                if self.glob.execute("SELECT ? GLOB ?", (name, pattern)).fetchone()[0]:
                    cat = c
                    break
            self.seen[name] = cat
        return self.seen[name]

    def names(self):
        """Every category the report can name, in its order."""
        out = list(STANDARD)
        for _, c in self.rules:
            if c not in out:
                out.append(c)
        return out


def op_category(rules, o):
    if o.kind == "memcpy":
        return "copy"
    if o.kind == "memset":
        return "memset"
    return rules.category(o.name)


def _rows(order, count, ns):
    """The report's rows: categories with operations, most GPU time first
    (ties: in the categories' order)."""
    total = sum(ns.values())
    cats = [c for c in order if count.get(c)]
    cats.sort(key=lambda c: -ns.get(c, 0))  # stable: ties keep the order
    return [{"category": c, "gpu_ns": ns.get(c, 0), "share_pct": model.pct(ns.get(c, 0), total),
             "count": count[c]} for c in cats]


def _inside(iv, x):
    return any(a <= x < b for a, b in iv)


def _grouped(rules, ops, iv):
    count, ns = defaultdict(int), defaultdict(int)
    for o in ops:
        c = op_category(rules, o)
        t = model.intersect_len(iv, [(o.start, o.end)]) if o.end > o.start else 0
        ns[c] += t
        if _inside(iv, o.start):
            count[c] += 1
    return count, ns


def expected(p, user_rules=(), slowest=()):
    """(whole rows, {phase name: rows}, [rows per listed step]) for an
    oracle.Process p; slowest: the steps' rows (start_ns, dur_ns)."""
    rules = Rules(list(user_rules) + list(trace_rules(p.path)))
    order = rules.names()
    count, ns = defaultdict(int), defaultdict(int)
    for o in p.t.ops:
        c = op_category(rules, o)
        count[c] += 1
        ns[c] += max(0, o.end - o.start)
    whole = _rows(order, count, ns)
    phases = {}
    if p.t.version >= 6:
        con = sqlite3.connect("file:%s?mode=ro" % p.path, uri=True)
        try:
            tops = con.execute("SELECT COALESCE(name, '(unnamed)'), start_ns, end_ns FROM ranges "
                               "WHERE kind = 'push' AND depth = 0 AND end_ns IS NOT NULL").fetchall()
        finally:
            con.close()
        by_name = defaultdict(list)
        for name, a, b in tops:
            if p.window is None or model.inside_window(p.window, a, b):
                by_name[name].append((a, b))
        for name, iv in by_name.items():
            phases[name] = _rows(order, *_grouped(rules, p.t.ops, model.union(iv)))
    steps = [_rows(order, *_grouped(rules, p.t.ops, [(s["start_ns"], s["start_ns"] + s["dur_ns"])]))
             for s in slowest]
    return whole, phases, steps


def _check_rows(c, where, got, want):
    if not isinstance(got, list) or len(got) != len(want):
        c.err("%s: %r, want %r" % (where, got, want))
        return
    for i, (g, w) in enumerate(zip(got, want)):
        g = {k: v for k, v in g.items() if k != "pid"} if isinstance(g, dict) else g
        c.row("%s[%d]" % (where, i), g, w)


def check(c, procs, report, user_rules=()):
    """The report's categories (top level, each phase's, each listed
    step's) against expected(); reports missing or extra rows in order."""
    steps_by_pid = {s.get("pid"): s for s in report.get("steps", []) if isinstance(s, dict)}
    for p in procs:
        slowest = steps_by_pid.get(p.pid, {}).get("slowest", [])
        whole, phases, steps = expected(p, user_rules, slowest)
        got = [r for r in report.get("categories", []) if isinstance(r, dict) and r.get("pid") == p.pid]
        _check_rows(c, "categories[pid %d]" % p.pid, got, whole)
        for r in report.get("phases", []):
            if isinstance(r, dict) and r.get("pid") == p.pid:
                _check_rows(c, "phases[pid %d, %r].categories" % (p.pid, r.get("name")), r.get("categories"),
                            phases.get(r.get("name"), []))
        for i, (s, want) in enumerate(zip(slowest, steps)):
            _check_rows(c, "steps[pid %d].slowest[%d].categories" % (p.pid, i), s.get("categories"), want)


def strip(report):
    """The report without what check() reads, for the checks of the rest."""
    for r in report.get("phases", []):
        if isinstance(r, dict):
            r.pop("categories", None)
    for s in report.get("steps", []):
        for x in s.get("slowest", []) if isinstance(s, dict) else []:
            if isinstance(x, dict):
                x.pop("categories", None)
    return report

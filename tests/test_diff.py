"""`gputrace diff` and `audit --baseline` on build/tests/progs/diff_work:
each variant plants one known change (a pageable copy in load_batch, a
sync in wait_step, a slower step_kernel), recorded twice; the diff must
name exactly that change and stay silent between repeats of one variant.
The JSON figures are re-checked by plain SQL over the public views, and
every row of the gate pairs of build/tests/progs/gate_work (an improvement
only, a regression only, the same program twice, runs of different length)
by tests/diff_oracle.py."""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import diff_oracle  # noqa: E402
import gtlib  # noqa: E402
from gtlib import assert_eq  # noqa: E402

GPUTRACE = gtlib.GPUTRACE
_TRACES = {}


def traces(variant, build="diff_work", rep=0, steps=True):
    """Two traces of one variant of one build, recorded once per test run
    (rep: another two); with steps, the NVTX step ranges are recorded, so
    the diff is per step; without, NVTX is off (GPUTRACE_NVTX=0)."""
    key = (variant, build, rep, steps)
    if key not in _TRACES:
        paths = []
        env = {"NVTX_INJECTION64_PATH": gtlib.SHIM} if steps else {"GPUTRACE_NVTX": "0"}
        for _ in range(2):
            r = gtlib.run_traced([gtlib.prog(build), variant], env=env)
            assert r.proc.returncode == 0, r.proc.stderr
            paths.append(r.trace)
        _TRACES[key] = paths
    return _TRACES[key]


def gt(*args):
    return subprocess.run([GPUTRACE] + list(args), capture_output=True, text=True, timeout=120)


def diff_json(base, new):
    r = gt("diff", "--format", "json", *base, "--vs", *new)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def reported(doc):
    """(kind, function or figure) of every row beyond noise or new/vanished."""
    out = set()
    for row in doc["rows"]:
        if row["status"] == "same":
            continue
        name = row["name"]
        if row["kind"] in ("h2d_site", "sync_site", "launch_site"):
            name = gtlib.site_function(name.split(" < ")[0])
        out.add((row["kind"], name, row["status"]))
    return out


def span_s(db):
    return gtlib.query(db, "SELECT max(end_ns) - min(start_ns) FROM api_calls")[0][0] / 1e9


def nsteps(db):
    return gtlib.query(db, "SELECT count(*) FROM ranges WHERE name = 'train_step' AND end_ns IS NOT NULL")[0][0]


def per_(doc, db):
    """What the diff divides db's totals and counts by: its steps, or 1 (per run)."""
    return nsteps(db) if doc["per"] == "step" else 1


def assert_per_step(doc, dbs):
    assert_eq(doc["per"], "step")
    assert all(nsteps(db) == 10 for db in dbs), [nsteps(db) for db in dbs]


def row(doc, kind, pred, measure="total"):
    rows = [r for r in doc["rows"] if r["kind"] == kind and pred(r["name"]) and r["measure"] == measure]
    assert len(rows) == 1, rows
    return rows[0]


def close(a, b, what):
    assert abs(a - b) <= 1e-6 * max(1.0, abs(b)) + 0.01, "%s: %r vs %r" % (what, a, b)


def test_diff_repeats_silent():
    # two repeats a side: their spread is the noise a loaded machine adds
    # to per-second figures (a 10 ms sleep that overshoots stretches the
    # span), which one trace a side cannot tell from a change
    for v in ("base", "sync"):
        doc = diff_json(traces(v), traces(v, rep=1))
        assert reported(doc) == set(), (v, reported(doc))
    r = gt("diff", *traces("base"), "--vs", *traces("base"))
    assert "no change beyond noise" in r.stdout, r.stdout


def test_diff_pageable_named():
    base, new = traces("base"), traces("pageable")
    doc = diff_json(base, new)
    # the copies are work of a new kind too (docs/report.md, Kernel categories)
    assert reported(doc) == {("summary", "pageable_h2d_bytes", "changed"), ("h2d_site", "load_batch", "new"),
                             ("category", "copy", "new")}, reported(doc)
    sql = "SELECT coalesce(sum(bytes), 0) FROM memcpys WHERE kind = 'HtoD' AND host_mem = 'pageable'"
    per = [gtlib.query(db, sql)[0][0] for db in new]
    assert per[0] > 0
    s = row(doc, "summary", lambda n: n == "pageable_h2d_bytes")
    close(s["new_raw"], sum(per) / 2, "pageable bytes per trace")
    assert_per_step(doc, new)
    close(s["new"], sum(p / per_(doc, db) for p, db in zip(per, new)) / 2, "pageable bytes per step")
    close(s["base"], 0, "base pageable")
    h = row(doc, "h2d_site", lambda n: "load_batch" in n, "count")
    assert "+0x" not in h["name"]
    close(h["new_raw"], sum(per) / 2, "load_batch bytes")


def sync_count(db, fn):
    rows = gtlib.query(db, "SELECT a.stack_id FROM syncs s JOIN api_calls a ON a.id = s.api_call_id")
    return sum(1 for (sid,) in rows if fn in gtlib.stack_functions(db, sid, 2)[:1])


def test_diff_sync_named():
    base, new = traces("base"), traces("sync")
    doc = diff_json(base, new)
    assert reported(doc) == {("sync_site", "wait_step", "new")}, reported(doc)
    s = row(doc, "sync_site", lambda n: "wait_step" in n, "count")
    assert s["new_count"] == sum(sync_count(db, "wait_step") for db in new) > 0
    r = gt("diff", *base, "--vs", *new)
    assert "new sites:" in r.stdout and "in wait_step" in r.stdout, r.stdout


def test_diff_slow_kernel_named():
    base, new = traces("base"), traces("slow")
    doc = diff_json(base, new)
    got = {(k, n) for k, n, _ in reported(doc)}
    assert ("kernel", "step_kernel") in got, got
    # only the kernel's time and what follows from it: busy up, idle down
    # (during the host work, and after the last kernel before the final sync)
    # (and the kind of work it is: the program's own kernels are `other`)
    assert got <= {("kernel", "step_kernel"), ("summary", "gpu_busy"), ("summary", "gpu_idle"),
                   ("summary", "idle_host"), ("summary", "idle_teardown"), ("category", "other")}, got
    sql = "SELECT sum(end_ns - start_ns) FROM kernels WHERE name = 'step_kernel'"
    k = row(doc, "kernel", lambda n: n == "step_kernel")
    for side, dbs in (("base", base), ("new", new)):
        per = [gtlib.query(db, sql)[0][0] for db in dbs]
        close(k[side + "_raw"], sum(per) / 2, side + " kernel ns")
        close(k[side], sum(p / per_(doc, db) for p, db in zip(per, dbs)) / 2, side + " kernel ns per step")
    assert k["change_pct"] > 10


def launches_at(db, fn):
    """(launches, host ns in them) whose innermost frame is in fn."""
    rows = gtlib.query(db, "SELECT a.stack_id, a.end_ns - a.start_ns FROM kernels k "
                           "JOIN api_calls a ON a.id = k.api_call_id")
    hits = [d for sid, d in rows if fn in gtlib.stack_functions(db, sid, 1)]
    return len(hits), sum(hits)


def test_diff_launch_site_named():
    base, new = traces("base"), traces("launch")
    doc = diff_json(base, new)
    got = reported(doc)
    assert {("launch_site", "launch_extra", "new"), ("kernel", "extra_kernel", "new")} <= got, got
    # beside them, at most what 200 more short launches move in the summary
    # and the kind of work the extra kernels are (the program's own: `other`)
    assert {k for k, _, _ in got} <= {"launch_site", "kernel", "summary", "category"}, got
    assert {n for k, n, _ in got if k not in ("summary", "category")} == {"launch_extra", "extra_kernel"}, got
    assert {n for k, n, _ in got if k == "category"} <= {"other"}, got
    s = row(doc, "launch_site", lambda n: "launch_extra" in n, "per_call")
    per = [launches_at(db, "launch_extra") for db in new]
    assert s["new_count"] == sum(n for n, _ in per) == 2 * 10 * 20, (s, per)
    close(s["new_raw"], sum(ns for _, ns in per) / 2, "host ns in launch_extra's launches")
    close(s["new"], sum(ns for _, ns in per) / sum(n for n, _ in per), "host ns per launch")
    c = row(doc, "launch_site", lambda n: "launch_extra" in n, "count")
    close(c["new"], sum(n / per_(doc, db) for (n, _), db in zip(per, new)) / 2, "launches per step")
    assert s["base_count"] == 0
    # the site every variant shares is matched, not new
    st = row(doc, "launch_site", lambda n: n.split(" < ")[0].endswith(" in step") or n.startswith("step "),
             "count")
    assert st["status"] != "new" and st["base_count"] == st["new_count"] == 20, st


def test_diff_matches_sites_across_builds_without_debug_info():
    """Two builds without DWARF whose every frame sits at another offset in
    the module: their sites read `function (module+0xOFF)` with different
    offsets, and still match."""
    a, b = traces("sync", "nodebug_a/diff_work"), traces("sync", "nodebug_b/diff_work")
    site_sql = ("SELECT a.stack_id FROM syncs s JOIN api_calls a ON a.id = s.api_call_id "
                "WHERE s.kind = 'device' ORDER BY a.start_ns LIMIT 1")
    offs = []
    for db in (a[0], b[0]):
        sid = gtlib.query(db, site_sql)[0][0]
        offs.append(gtlib.query(db, "SELECT offset FROM stack_frames WHERE stack_id = ? AND depth = 0",
                                sid))
    assert offs[0] != offs[1], ("the two builds put wait_step at the same offset", offs)
    doc = diff_json(a, b)
    assert {r["status"] for r in doc["rows"] if r["kind"] != "summary"} <= {"same", "changed"}, \
        [r for r in doc["rows"] if r["status"] in ("new", "vanished")]
    s = row(doc, "sync_site", lambda n: n.startswith("wait_step ("), "count")
    assert "+0x" not in s["name"] and s["base_count"] == s["new_count"] == 20, s
    for kind in ("launch_site", "sync_site"):
        assert all("+0x" not in r["name"] for r in doc["rows"] if r["kind"] == kind)


def test_diff_html_side_by_side():
    import html.parser
    base, new = traces("base"), traces("pageable")
    out = os.path.join(gtlib.tmpdir("gputrace-diff-"), "diff.html")
    r = gt("diff", "--format", "html", "-o", out, *base, "--vs", *new)
    assert r.returncode == 0 and r.stdout == "", r.stdout + r.stderr
    doc = diff_json(base, new)

    class Rows(html.parser.HTMLParser):
        def __init__(self):
            super().__init__()
            self.rows, self.cell, self.cells, self.attrs = [], None, None, None

        def handle_starttag(self, tag, attrs):
            if tag == "tr" and dict(attrs).get("data-kind"):
                self.attrs, self.cells = dict(attrs), []
            elif tag == "td" and self.cells is not None:
                self.cell = ""

        def handle_endtag(self, tag):
            if tag == "td" and self.cell is not None:
                self.cells.append(self.cell)
                self.cell = None
            elif tag == "tr" and self.cells is not None:
                self.rows.append((self.attrs["data-kind"], self.attrs["data-measure"], self.cells[0],
                                  self.attrs["class"]))
                self.cells = None

        def handle_data(self, data):
            if self.cell is not None:
                self.cell += data

    p = Rows()
    with open(out, encoding="utf-8") as f:
        text = f.read()
    p.feed(text)
    assert "<script" not in text and "http" not in text.split("</style>", 1)[0]
    assert sorted(p.rows) == sorted((r["kind"], r["measure"], r["name"], r["status"]) for r in doc["rows"]), p.rows


def test_diff_per_run_without_steps():
    """Traces without step ranges compare per run: totals and counts of
    one run each, never over the span."""
    base, new = traces("base", steps=False), traces("pageable", steps=False)
    doc = diff_json(base, new)
    assert_eq(doc["per"], "run")
    assert ("h2d_site", "load_batch", "new") in reported(doc), reported(doc)
    sql = "SELECT coalesce(sum(bytes), 0) FROM memcpys WHERE kind = 'HtoD' AND host_mem = 'pageable'"
    got = [gtlib.query(db, sql)[0][0] for db in new]
    s = row(doc, "summary", lambda n: n == "pageable_h2d_bytes")
    close(s["new"], sum(got) / 2, "pageable bytes per run")
    assert_eq(s["unit"], "bytes_per_run")
    # one side with steps, the other without: per run
    assert_eq(diff_json(traces("base"), new)["per"], "run")
    errs = diff_oracle.check(doc, base, new)
    assert errs == [], errs


def test_audit_baseline():
    base = traces("base")
    ok = gt("audit", "--baseline", *base, "--max-regression-pct", "10", "--max-new-sync-sites", "0",
            "--max-new-pageable-h2d-bytes", "0", *traces("base"))
    assert ok.returncode == 0, ok.stdout + ok.stderr
    r = gt("audit", "--baseline", *base, "--max-new-pageable-h2d-bytes", "0", *traces("pageable"))
    assert r.returncode == 1 and "load_batch" in r.stdout, r.stdout + r.stderr
    r = gt("audit", "--baseline", *base, "--max-new-sync-sites", "0", *traces("sync"))
    assert r.returncode == 1 and "wait_step" in r.stdout, r.stdout + r.stderr
    r = gt("audit", "--baseline", *base, "--max-regression-pct", "10", *traces("slow"))
    assert r.returncode == 1 and "step_kernel" in r.stdout, r.stdout + r.stderr
    r = gt("audit", "--baseline", *base, *traces("base"))
    assert r.returncode == 2 and "needs a budget" in r.stderr


def test_audit_baseline_cannot_judge():
    d = gtlib.tmpdir("gputrace-diff-")
    # one step of the ten the baseline runs: a tenth of its span, loaded
    # machine or not
    r = gtlib.run_traced([gtlib.prog("diff_work"), "base", "1"], outdir=d)
    assert r.proc.returncode == 0
    # without steps, a run that did a tenth of the baseline's GPU work
    res = gt("audit", "--baseline", *traces("base", steps=False), "--max-new-sync-sites", "5", r.trace)
    assert res.returncode == 2 and "under half" in res.stderr, res.stdout + res.stderr


def test_diff_usage():
    assert gt("diff", traces("base")[0]).returncode == 2
    assert gt("diff", "--format", "xml", "a.db", "--vs", "b.db").returncode == 2
    assert gt("diff", "--help").returncode == 0
    assert gt("diff", "missing.db", "--vs", "missing2.db").returncode == 2


# ---- the gates on gate_work: like with like --------------------------------

_GATE = {}


def gate(variant, steps=300, nvtx=False, rep=0):
    """Two traces of gate_work VARIANT STEPS (nvtx: with its step ranges)."""
    key = (variant, steps, nvtx, rep)
    if key not in _GATE:
        env = {"NVTX_INJECTION64_PATH": gtlib.SHIM} if nvtx else {"GPUTRACE_NVTX": "0"}
        paths = []
        for _ in range(2):
            r = gtlib.run_traced([gtlib.prog("gate_work"), variant, str(steps)], env=env)
            assert r.proc.returncode == 0, r.proc.stderr
            # the program's own count, the answer set from outside
            assert_eq(r.proc.stdout.strip(), "gate_work: %s %d steps, %d launches" % (variant, steps, steps))
            paths.append(r.trace)
        _GATE[key] = paths
    return _GATE[key]


def fails(r):
    """(kind, name, measure) of each FAIL max-regression-pct line."""
    out = set()
    for line in r.stdout.splitlines():
        if line.startswith("FAIL max-regression-pct: "):
            kind, rest = line[len("FAIL max-regression-pct: "):].split(" ", 1)
            name, measure = rest.split(" rose ")[0].rsplit(" ", 1)
            out.add((kind, name, measure))
    return out


# What a loaded machine moves in a repeat of the same program: a launch
# call descheduled, or the host stalled longer than the 64 ms of work the
# program keeps queued, so the GPU waited for it. The oracle finds them
# from the trace; the GPU's own figures (kernels, bytes, counts) never move.
HOST_TIMED = {("summary", "launch_host", "per_call"), ("launch_site", "per_call"),
              ("summary", "gpu_idle", "total"), ("summary", "idle_host", "total"), ("summary", "gpu_idle", "share"),
              ("summary", "gpu_busy", "share"), ("summary", "sync", "total"), ("sync_site", "per_call")}


def host_timed(k):
    return (k if k[0] == "summary" else (k[0], k[2])) in HOST_TIMED


def assert_gate_passes(base, new, *budgets):
    """audit --baseline passes, unless the traces themselves show the host
    slower (see HOST_TIMED: the oracle then finds that regression from the
    trace, and the gate must fail on exactly it)."""
    r = gt("audit", "--baseline", *base, "--max-regression-pct", "10", *budgets, *new)
    doc = diff_json(base, new)
    errs = diff_oracle.check(doc, base, new)
    assert errs == [], errs
    want = diff_oracle.regressions(doc, base, new, 10)
    assert all(host_timed(k) for k in want), want
    assert_eq(fails(r), want)
    assert r.returncode == (1 if want else 0), r.stdout + r.stderr
    if not want:
        assert "ok   max-regression-pct" in r.stdout, r.stdout
    return doc


def changed(doc, kinds=None):
    return {(r["kind"], r["name"], r["measure"]) for r in doc["rows"]
            if r["status"] != "same" and (kinds is None or r["kind"] in kinds)}


def test_gate_improvement_passes():
    """One pageable copy a step removed, nothing else: the same 300 kernels
    of the same length in a run half as long. No regression, and no
    kernel, launch site or sync site changes (issue 31: per second of span
    the untouched kernel 'rose 68.7%')."""
    base, new = gate("copy"), gate("nocopy")
    doc = assert_gate_passes(base, new, "--max-new-pageable-h2d-bytes", "0", "--max-new-sync-sites", "0")
    assert_eq(doc["per"], "run")
    # what did change: the copy's site went, its bytes, and the run shrank
    assert changed(doc, ("kernel",)) == set(), changed(doc)
    assert all(host_timed(k) for k in changed(doc, ("launch_site", "sync_site"))), changed(doc)
    assert {(k, m) for k, _, m in changed(doc, ("h2d_site",))} == {("h2d_site", "count"), ("h2d_site", "per_call")}
    assert ("summary", "span", "once") in changed(doc)
    k = row(doc, "kernel", lambda n: n == "work_kernel", "count")
    assert k["base"] == k["new"] == 300, k
    text = gt("diff", *base, "--vs", *new).stdout
    assert "work_kernel" not in text and "vanished sites:" in text and "in load" in text, text


def test_gate_regression_fails_on_exactly_what_regressed():
    """work_kernel 1 -> 1.3 ms: the gate fails on that kernel's mean per
    launch and its GPU time, and nothing else (the span grows: not a
    budget)."""
    base, new = gate("nocopy"), gate("slow")
    r = gt("audit", "--baseline", *base, "--max-regression-pct", "10", *new)
    assert r.returncode == 1, r.stdout + r.stderr
    doc = diff_json(base, new)
    errs = diff_oracle.check(doc, base, new)
    assert errs == [], errs
    want = diff_oracle.regressions(doc, base, new, 10)
    assert want == {("kernel", "work_kernel", "per_call"), ("kernel", "work_kernel", "total")}, want
    assert_eq(fails(r), want)
    assert "ok   max-regression-pct" not in r.stdout
    m = row(doc, "kernel", lambda n: n == "work_kernel", "per_call")
    sql = "SELECT avg(end_ns - start_ns) FROM kernels WHERE name = 'work_kernel'"
    close(m["new"], sum(gtlib.query(db, sql)[0][0] for db in new) / 2, "mean per launch")
    assert abs(m["new"] - 1300000) < 1000 and abs(m["base"] - 1000000) < 1000, m


def test_gate_same_program_twice_passes():
    for nvtx in (False, True):
        base, new = gate("nocopy", nvtx=nvtx), gate("nocopy", nvtx=nvtx, rep=1)
        doc = assert_gate_passes(base, new)
        assert changed(doc, ("kernel", "h2d_site")) == set(), changed(doc)
        assert all(host_timed(k) or k[2] == "once" for k in changed(doc)), changed(doc)


def test_gate_runs_of_different_length():
    """100 and 300 steps of the same loop. With steps, per step: nothing
    changes but the span, both ways, and the gate passes. Without steps,
    per run: the totals and counts differ as the work done does (and the
    span); no figure per call or share of the span moves."""
    short, long_ = gate("nocopy", 100, nvtx=True), gate("nocopy", 300, nvtx=True)
    for base, new in ((short, long_), (long_, short)):
        doc = diff_json(base, new)
        assert_eq(doc["per"], "step")
        errs = diff_oracle.check(doc, base, new)
        assert errs == [], errs
        # the span differs (beyond noise unless a loaded machine stretched
        # one repeat by as much): the oracle has judged it above
        assert all(host_timed(k) or k[2] == "once" for k in changed(doc)), changed(doc)
        assert changed(doc, ("kernel", "h2d_site")) == set(), changed(doc)
        assert_gate_passes(base, new)
    short, long_ = gate("nocopy", 100), gate("nocopy", 300)
    doc = diff_json(short, long_)
    assert_eq(doc["per"], "run")
    errs = diff_oracle.check(doc, short, long_)
    assert errs == [], errs
    assert all(host_timed(k) or k[2] in ("once", "total", "count") for k in changed(doc)), changed(doc)
    assert {m for _, _, m in changed(doc, ("kernel",))} <= {"total", "count"}, changed(doc)
    k = row(doc, "kernel", lambda n: n == "work_kernel", "count")
    assert (k["base"], k["new"], k["status"]) == (100, 300, "changed"), k


def test_diff_two_traces_without_vs():
    """`gputrace diff A.db B.db`: the first is BASE, the second NEW."""
    a, b = gate("nocopy")[0], gate("slow")[0]
    r = gt("diff", "--format", "json", a, b)
    assert r.returncode == 0, r.stderr
    assert_eq(json.loads(r.stdout), diff_json([a], [b]))
    assert gt("diff", a, b, gate("slow")[1]).returncode == 2


def test_audit_baseline_one_line_per_budget():
    """Each budget given prints its line, held or failed, whatever the
    others did: a held --max-regression-pct says so beside a failed
    --max-new-sync-sites."""
    r = gt("audit", "--baseline", *traces("base"), "--max-regression-pct", "1000", "--max-new-sync-sites", "0",
           *traces("sync"))
    assert r.returncode == 1, r.stdout + r.stderr
    assert "FAIL max-new-sync-sites: 1 > 0" in r.stdout, r.stdout
    assert "ok   max-regression-pct: no figure rose beyond noise and 1000%" in r.stdout, r.stdout
    assert not [x for x in r.stdout.splitlines() if x.startswith("FAIL max-regression-pct")], r.stdout

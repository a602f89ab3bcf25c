"""The HTML report's flame graph of GPU idle by host stack (issue 20): each
frame's idle time, samples, place and width as the page holds them, checked
against a tree built here by plain SQL over the public views (gaps from
gpu_activity, the launching thread from api_calls, the samples from
host_samples, their frames from py_stack_frames and stack_frames), on the
planted Python and C workloads of tests/test_samples.py; the planted answer
(three equal stalls) bounds both. Then rendered in headless Chromium
(tests/html_driver.py, as tests/test_html_timeline.py drives it): a
click shows the frame's figures; hostile frame names are shown, never run."""
import functools
import html as htmlmod
import os
import re
import shutil
import sqlite3
import subprocess
from collections import Counter

import gtlib
from gtlib import GPUTRACE, assert_eq, prog, query, run_traced
import test_python as tp
from test_samples import MS, WORK, sql_gaps
from test_html_timeline import HOSTILE, drive

W = 1000.0      # the graph's width in its own units (docs/report.md)
MIN = 1000      # frames under 1/MIN of the idle time are not drawn


def _py_name(file, fn, line):
    base = os.path.basename(file or "?")
    return "%s in %s" % (base, fn or "?") if line is None else "%s:%d in %s" % (base, line, fn or "?")


def _native_name(fn, module, file, line):
    if file and line is not None:
        return "%s:%d in %s" % (os.path.basename(file), line, fn or "?")
    return "%s (%s)" % (fn or "?", os.path.basename(module or "?"))


def sql_flame(db, min_gap=10 * MS):
    """{path: [idle ns, samples]} (path: the frames' names from the root's
    child down, the state last) and the listed gaps' total: each gap's
    time split among the launching thread's samples in it by path, each
    path's share rounded down."""
    con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)

    @functools.lru_cache(maxsize=None)
    def frames(py, nat):
        out = []
        if py is not None:
            out += [_py_name(*r) for r in con.execute(
                "SELECT file, function, line FROM py_stack_frames WHERE pystack_id = ? ORDER BY depth DESC", (py,))]
        if nat is not None:
            out += [_native_name(*r) for r in con.execute(
                "SELECT function, module, file, line FROM stack_frames WHERE stack_id = ? ORDER BY depth DESC",
                (nat,))]
        return tuple(out)

    tree, total = {}, 0

    def add(path, ns, n):
        for k in range(1, len(path) + 1):
            v = tree.setdefault(path[:k], [0, 0])
            v[0] += ns
            v[1] += n
    for s, e in sql_gaps(db, min_gap):
        d = e - s
        total += d
        row = con.execute("SELECT tid FROM api_calls WHERE category IN (%s) AND start_ns BETWEEN ? AND ? "
                          "ORDER BY start_ns DESC LIMIT 1" % ",".join("'%s'" % w for w in WORK), (s, e)).fetchall()
        smp = con.execute("SELECT state, syscall, pystack_id, stack_id FROM host_samples "
                          "WHERE tid = ? AND ns BETWEEN ? AND ?", (row[0][0], s, e)).fetchall() if row else []
        if not smp:
            add(("(no samples)",), d, 0)
            continue
        leaf = {"running": "(running)", "waiting": "(waiting)"}
        paths = Counter(frames(py, nat) + (leaf.get(st) or "(blocked in %s)" % (sc or "?"),)
                        for st, sc, py, nat in smp)
        for p, n in paths.items():
            add(p, d * n // len(smp), n)
    con.close()
    return tree, total


def sql_layout(tree, total):
    """The frames drawn, {path: x_ns}: children side by side under their
    parent, most idle time first (then by name), each at least 1/MIN of
    the total."""
    kids = {}
    for p in tree:
        kids.setdefault(p[:-1], []).append(p)
    out = {}

    def walk(parent, x):
        cur = x
        for p in sorted(kids.get(parent, []), key=lambda p: (-tree[p][0], p[-1].encode())):
            if tree[p][0] and tree[p][0] * MIN >= total:
                out[p] = cur
                walk(p, cur)
            cur += tree[p][0]
    walk((), 0)
    return out


FRAME = re.compile(r'<svg class="fl" x="([\d.]+)" y="(\d+)" width="([\d.]+)" height="16" data-ns="(\d+)" '
                   r'data-x-ns="(\d+)" data-samples="(\d+)" data-depth="(\d+)"><rect class="fk(\d)"[^>]*/>'
                   r'(?:<text x="3" y="12">(.*?)</text>)?<title>(.*?)</title></svg>\n', re.S)


def page_flame(page, section=0):
    """The frames the page draws, in its order: (path, x, width, ns, x_ns,
    samples, kind, title)."""
    i = page.index('<div class=gt-flame id="flame-%d">' % section)
    block = page[i:page.index("</div>", i)]
    out, names = [], []
    for m in FRAME.finditer(block):
        x, y, w, ns, xns, n, depth, kind, label, title = m.groups()
        depth = int(depth)
        title = htmlmod.unescape(title)
        name = title.rsplit(": idle ", 1)[0]
        assert_eq(int(y), 17 * depth)
        if label is not None:
            assert_eq(htmlmod.unescape(label), name)
        names[depth:] = [name]
        assert_eq(len(names), depth + 1, "a frame's parent comes before it")
        out.append((tuple(names[1:]), float(x), float(w), int(ns), int(xns), int(n), int(kind), title))
    assert_eq(len(out), block.count('<svg class="fl"'), "every frame parsed")
    return out


def report_html(db, *args):
    out = os.path.join(gtlib.tmpdir(), "report.html")
    r = subprocess.run([GPUTRACE, "report", "--format", "html", "--min-gap", "10ms", "-o", out] + list(args) + [db],
                       capture_output=True, text=True, timeout=120)
    assert_eq((r.returncode, r.stderr), (0, ""))
    with open(out, encoding="utf-8") as f:
        return out, f.read()


def _dur_ok(text, ns):
    """A duration as gt_fmt_duration prints it, `ns` to its last digit."""
    v, unit = text.split()
    scale = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}[unit]
    digits = len(v.split(".")[1]) if "." in v else 0
    return abs(float(v) * scale - ns) <= 0.5 * 10 ** -digits * scale + 1e-6


def _title_ok(title, ns, n, total):
    m = re.fullmatch(r"(.*): idle (\S+ \S+), ([\d.]+)% of the idle time, (\d+) samples?", title, re.S)
    assert m, title
    assert _dur_ok(m.group(2), ns), (title, ns)
    assert abs(float(m.group(3)) - 100.0 * ns / total) <= 0.05 + 1e-9, (title, ns, total)
    assert_eq(int(m.group(4)), n, title)


def check_page(db, page):
    """The page's frames against the SQL tree: the same frames, each with
    the same idle time, samples and place; widths and x as shares of the
    total; the frames left out counted. Returns the SQL tree, its total
    and the page's frames."""
    tree, total = sql_flame(db)
    drawn = sql_layout(tree, total)
    frames = page_flame(page)
    root = frames[0]
    assert_eq(root[0], ())
    assert_eq((root[3], root[4], root[5]), (total, 0, sum(n for p, (ns, n) in tree.items() if len(p) == 1)))
    got = {f[0]: f for f in frames[1:]}
    assert_eq(len(got), len(frames) - 1, "no frame twice")
    assert_eq(sorted(got), sorted(drawn))
    for p, f in got.items():
        _, x, w, ns, xns, n, kind, title = f
        assert_eq((ns, n, xns), (tree[p][0], tree[p][1], drawn[p]), p)
        assert abs(x - W * xns / total) <= 0.0005 + 1e-9, (p, x)
        assert abs(w - W * ns / total) <= 0.0005 + 1e-9, (p, w)
        _title_ok(title, ns, n, total)
        assert_eq(kind, 4 if p == ("(no samples)",) else 3 if p[-1].startswith("(") else kind, p)
    hidden = sum(1 for p, (ns, n) in tree.items() if (ns or n) and p not in drawn)
    note = re.search(r"(\d+) frames? narrower than 1/%d of the idle time not drawn" % MIN, page)
    assert_eq(int(note.group(1)) if note else 0, hidden)
    return tree, total, frames


@functools.lru_cache(maxsize=None)
def _python_run():
    """The planted Python loop (tests/progs/py/host_stalls.py) under the
    newest CPython found, traced once for these tests."""
    minor = max(tp.supported())
    run = tp.run_py(minor, "host_stalls.py", 3, 120)
    assert_eq(run.proc.stdout, "host_stalls: done\n")
    return run


def test_flame_graph_python_matches_sql():
    """nap, crunch and wait_pipe each about a third of the idle time, at
    their lines, under main and the module; every frame as SQL has it."""
    run = _python_run()
    _, page = report_html(run.trace)
    tree, total, frames = check_page(run.trace, page)
    m = tp.markers("host_stalls.py")
    for fn in ("nap", "crunch", "wait_pipe"):
        name = "host_stalls.py:%d in %s" % (m[fn], fn)
        at = [f for f in frames if f[0] and f[0][-1] == name]
        assert_eq(len(at), 1, (name, [f[0] for f in frames]))
        path = at[0][0]
        assert path[0].endswith(" in <module>") and path[1].endswith(" in main"), path
        assert abs(at[0][3] / total - 1 / 3) <= 0.10, (name, at[0][3], total)
    # each stall's leaf: the state its code puts the thread in
    leaves = {f[0][-2]: f for f in frames if len(f[0]) >= 2 and f[0][-1].startswith("(")}
    assert any(k.endswith(" in wait_pipe") or "read" in k for k in leaves), leaves.keys()
    assert ("host_stalls.py:%d in crunch" % m["crunch"]) in leaves, leaves.keys()


def test_flame_graph_c_matches_sql():
    """spin, nap and read in a C program: blocked frames by the libc
    function the kernel's program counter is in, then the state."""
    run = run_traced([prog("host_wait"), "3", "100"])
    assert_eq(run.proc.returncode, 0, run.proc.stderr)
    _, page = report_html(run.trace)
    tree, total, frames = check_page(run.trace, page)
    leaves = [f for f in frames if f[0] and f[0][-1] in ("(running)", "(blocked in read)",
                                                         "(blocked in clock_nanosleep)", "(blocked in nanosleep)")]
    kinds = {f[0][-1].replace("clock_", "") for f in leaves}
    assert_eq(kinds, {"(running)", "(blocked in read)", "(blocked in nanosleep)"})
    for k in kinds:
        share = sum(f[3] for f in leaves if f[0][-1].replace("clock_", "") == k) / total
        assert abs(share - 1 / 3) <= 0.10, (k, share)


def test_flame_graph_thin_frames_left_out_and_counted():
    """Frames under 1/1000 of the idle time are not drawn, and the page
    counts them: one gap of the C program given 3,000 more samples (the
    launching thread running, no stack) and one waiting sample, a frame a
    few millionths wide."""
    run = run_traced([prog("host_wait"), "3", "100"])
    assert_eq(run.proc.returncode, 0, run.proc.stderr)
    db = os.path.join(gtlib.tmpdir(), "thin.db")
    shutil.copy(run.trace, db)
    s, e = max(sql_gaps(db, 10 * MS), key=lambda g: g[1] - g[0])
    tid = query(db, "SELECT tid FROM api_calls WHERE category IN (%s) AND start_ns BETWEEN ? AND ? "
                    "ORDER BY start_ns DESC LIMIT 1" % ",".join("'%s'" % w for w in WORK), s, e)[0][0]
    con = sqlite3.connect(db)
    con.executemany("INSERT INTO samples (tid, ns, state) VALUES (?, ?, 0)",
                    [(tid, s + 1 + k * (e - s - 2) // 3000) for k in range(3000)])
    con.execute("INSERT INTO samples (tid, ns, state) VALUES (?, ?, 2)", (tid, e - 1))
    con.commit()
    con.close()
    _, page = report_html(db)
    tree, total, frames = check_page(db, page)
    assert_eq(tree[("(waiting)",)][1], 1)
    assert tree[("(waiting)",)][0] * MIN < total, tree[("(waiting)",)]
    assert ("(waiting)",) not in {f[0] for f in frames}
    assert re.search(r"\d+ frames? narrower than 1/1000 of the idle time not drawn", page), "the count is said"


def test_flame_graph_absent_without_samples():
    db = run_traced([prog("host_wait"), "1", "20"], env={"GPUTRACE_SAMPLE_HZ": "0"}).trace
    _, page = report_html(db)
    assert "<div class=gt-flame" not in page and "<h2>GPU idle by host stack" not in page


def test_flame_graph_click_shows_the_frame():
    """Headless: a click on the wait_pipe frame shows its name, idle time,
    share and samples, as SQL has them; another click moves the mark."""
    run = _python_run()
    path, page = report_html(run.trace)
    tree, total, frames = check_page(run.trace, page)
    m = tp.markers("host_stalls.py")
    want = [i for i, f in enumerate(frames) if f[0] and f[0][-1] == "host_stalls.py:%d in wait_pipe" % m["wait_pipe"]]
    nap = [i for i, f in enumerate(frames) if f[0] and f[0][-1] == "host_stalls.py:%d in nap" % m["nap"]]
    res = drive(path, [{"op": "state"}, {"op": "click_flame", "frame": want[0]},
                       {"op": "click_flame", "frame": nap[0]}])
    assert_eq(res[0]["flames"]["0"]["on"], -1)
    assert_eq(res[0]["flames"]["0"]["frames"], len(frames))
    for r, i in ((res[1], want[0]), (res[2], nap[0])):
        fl = r["flames"]["0"]
        assert_eq(fl["on"], i)
        p = frames[i][0]
        assert fl["says"].startswith(p[-1] + ": idle "), fl["says"]
        _title_ok(fl["says"], tree[p][0], tree[p][1], total)


def test_flame_graph_hostile_names_shown_not_run():
    """Python function and file names, and a native function name, that
    try to end an element, open a comment or inject markup: the page holds
    them escaped, draws them verbatim, runs and loads nothing."""
    run = _python_run()
    d = gtlib.tmpdir()
    db = os.path.join(d, "hostile.db")
    shutil.copy(run.trace, db)
    con = sqlite3.connect(db)
    con.execute("UPDATE py_code SET function = ? WHERE function = 'nap'", (HOSTILE[1],))
    con.execute("UPDATE py_code SET function = ? WHERE function = 'crunch'", (HOSTILE[0],))
    con.execute("UPDATE py_code SET file = ? WHERE function = 'wait_pipe'", ("/x/" + HOSTILE[2],))
    con.execute("UPDATE py_code SET function = ? WHERE function = 'main'", (HOSTILE[4] + HOSTILE[5],))
    con.commit()
    con.close()
    path, page = report_html(db)
    tree, total, frames = check_page(db, page)
    flame = page[page.index('<div class=gt-flame id="flame-0">'):]
    flame = flame[:flame.index("</div>")]
    for bad in ("<img", "<script", "<!--", "<b>", "<style"):
        assert bad not in flame, bad
    names = {n for f in frames for n in f[0]}
    for h in (HOSTILE[0], HOSTILE[1], HOSTILE[4] + HOSTILE[5]):
        assert any(h in n for n in names), (h, names)
    hit = [i for i, f in enumerate(frames) if f[0] and HOSTILE[1] in f[0][-1]]
    res = drive(path, [{"op": "state"}, {"op": "click_flame", "frame": hit[0]}])
    assert_eq((res[0]["imgs"], res[0]["scripts"]), (0, 2), "the page's script and the timeline's data, nothing more")
    says = res[1]["flames"]["0"]["says"]
    assert says.startswith(frames[hit[0]][0][-1] + ": idle "), says
    assert HOSTILE[1] in says, says

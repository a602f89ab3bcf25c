"""The HTML report's interactive timeline, rendered and driven in headless
Chromium (Selenium from build/pyenv with Debian's chromium-driver, both
installed by `make test`): zoom, pan, the links between
gaps and their rows, checked by what the page then shows; the lanes and what
they draw checked against the trace by SQL; hostile names shown, never run;
big traces bounded."""
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import unittest

import gtlib
from gtlib import GPUTRACE, assert_eq, prog, run_traced, tmpdir

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_trace import add_gpu_op, launch, make_trace, sync  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
DRIVER = os.path.join(HERE, "html_driver.py")


def _browser():
    """Debian's chromium and chromium-driver (scripts/setup-debian.sh) and
    the venv's python with Selenium (scripts/setup-python.sh): all are
    installed by `make test`, so a missing one fails the test."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    assert chromium, "chromium is missing: run scripts/setup-debian.sh (make test does)"
    chromedriver = shutil.which("chromedriver")
    assert chromedriver, "chromedriver is missing: run scripts/setup-debian.sh (make test does)"
    python = gtlib.pyenv_python()
    assert os.access(python, os.X_OK), "%s is missing: run scripts/setup-python.sh (make test does)" % python
    return python, chromium, chromedriver


def drive(html, steps):
    """Each step's page state (tests/html_driver.py)."""
    python, chromium, chromedriver = _browser()
    d = tmpdir()
    sp = os.path.join(d, "steps.json")
    with open(sp, "w") as f:
        json.dump(steps, f)
    r = subprocess.run([python, DRIVER, chromium, chromedriver, html, sp], capture_output=True, text=True,
                       timeout=180)
    assert_eq(r.returncode, 0, r.stderr[-3000:])
    res = json.loads(r.stdout)
    for s in res:
        assert_eq((s["errors"], s["requests"], s["pwned"]), ([], [], None), s["op"])
    return res


def report_html(trace, *args):
    html = os.path.join(tmpdir(), "report.html")
    r = subprocess.run([GPUTRACE, "report", "--format", "html", "-o", html] + list(args) + [trace],
                       capture_output=True, text=True)
    assert_eq((r.returncode, r.stderr), (0, ""))
    return html


def _origin(con):
    """Where the page's times count from: the trace's start, as every
    +TIME of the report (docs/report.md), or its first call when meta
    says a later start."""
    firsts = [con.execute("SELECT min(start_ns) FROM api_calls").fetchone()[0]]
    try:
        firsts.append(con.execute("SELECT min(start_ns) FROM gpu_activity").fetchone()[0])
    except sqlite3.Error:
        pass  # an older trace without the view
    first = min(x for x in firsts if x is not None)
    row = con.execute("SELECT value FROM meta WHERE key = 'start_ns'").fetchone()
    return min(int(row[0]), first) if row else first


def page_data(html, section=0):
    """The JSON the page embeds for a section's timeline."""
    with open(html, encoding="utf-8") as f:
        page = f.read()
    m = re.search(r'<script type="application/json" id="gt-tl-data-%d">(.*?)</script>' % section, page, re.S)
    assert m, "the timeline's data is in the page"
    return json.loads(m.group(1)), page


def _dur(text):
    v, unit = text.split()
    return float(v) * {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}[unit]


def _window_text(tl):
    """The window the page says it shows, parsed from its text."""
    m = re.fullmatch(r"showing \+(\S+ \S+) to \+(\S+ \S+) \((\S+ \S+)\)", tl["window_text"])
    assert m, tl["window_text"]
    return _dur(m.group(1)), _dur(m.group(2))


def _check_window(tl):
    a, b = _window_text(tl)
    # the text rounds to 3 or 4 significant digits
    for shown, exact in ((a, tl["from"]), (b, tl["to"])):
        assert abs(shown - exact) <= max(abs(exact) * 0.005, 5), (tl["window_text"], tl["from"], tl["to"])
    return tl["from"], tl["to"]


def test_html_timeline_zoom_pan_and_gap_links():
    """On a program with a planted host stall: the wheel zooms about the
    pointer, W/S and +/- zoom by two, A/D and the arrows pan a quarter, a
    drag pans with the mouse, 0 shows the whole run; a gap's row zooms the
    timeline to the gap and is highlighted; a gap clicked on the timeline
    highlights its row and scrolls it into view."""
    run = run_traced([prog("stall")], env={"FAKECUDA_LAUNCH_NS": "20000"})
    html = report_html(run.trace, "--min-gap", "100us")
    doc = json.loads(subprocess.run([GPUTRACE, "report", "--format", "json", "--top", "0", "--min-gap", "100us",
                                     run.trace], capture_output=True, text=True).stdout)
    gaps = doc["idle_gaps"]
    assert len(gaps) >= 2, gaps
    span = doc["summary"]["span_ns"]
    # the shortest gap
    def offset(g):
        return g["start_ns"] - doc["summary"]["first_ns"] if "first_ns" in doc["summary"] else g["offset_ns"]
    small = min(range(len(gaps)), key=lambda i: gaps[i]["dur_ns"])
    big = 0
    steps = [{"op": "state"},
             {"op": "wheel", "frac": 0.25, "dy": -400},
             {"op": "key", "key": "w"}, {"op": "key", "key": "+"},
             {"op": "key", "key": "s"},
             {"op": "key", "key": "d"}, {"op": "key", "key": "ArrowLeft"}, {"op": "key", "key": "a"},
             {"op": "drag", "dx": -150},
             {"op": "key", "key": "0"},
             {"op": "click_row", "gap": small},
             {"op": "key", "key": "0"},
             {"op": "click_gap", "gap": big}]
    res = drive(html, steps)
    tls = [r["timelines"]["0"] for r in res]
    w = [_check_window(t) for t in tls]
    # the whole run first
    assert_eq(w[0], (0, span))
    # the wheel: a narrower window, the time under the pointer still under it
    (f0, t0), (f1, t1) = w[0], w[1]
    assert t1 - f1 < (t0 - f0) * 0.6, (w[0], w[1])
    pivot0, pivot1 = f0 + 0.25 * (t0 - f0), f1 + 0.25 * (t1 - f1)
    assert abs(pivot1 - pivot0) < (t0 - f0) * 0.01, (pivot0, pivot1)
    length = [b - a for a, b in w]
    # W and + halve, S doubles, about the middle
    for i, k in ((2, 0.5), (3, 0.5), (4, 2.0)):
        assert abs(length[i] - length[i - 1] * k) <= 2, (i, length)
        assert abs((w[i][0] + w[i][1]) / 2 - (w[i - 1][0] + w[i - 1][1]) / 2) <= 2, (i, w)
    # D pans right a quarter, the left arrow back, A left a quarter
    for i, k in ((5, 0.25), (6, -0.25), (7, -0.25)):
        assert abs((w[i][0] - w[i - 1][0]) - k * length[i - 1]) <= 2, (i, w)
        assert abs(length[i] - length[i - 1]) <= 2
    # dragging to the left moves the window later in time, by as much
    assert w[8][0] > w[7][0] and abs(length[8] - length[7]) <= 2, (w[7], w[8])
    assert_eq(w[9], (0, span))
    # a click on the small gap's row: highlighted, the timeline zoomed to it
    g = gaps[small]
    s = offset(g)
    r = res[10]
    assert_eq((r["highlighted"], tls[10]["selected"]), (["gap-0-%d" % small], small))
    # the gap with half its length either side (at least 50 ns), moved
    # inside the run where it would leave it (a gap at the very start, or
    # one at the end)
    pad = max(g["dur_ns"] / 2, 50)
    lo, hi = s - pad, s + g["dur_ns"] + pad
    if lo < 0:
        lo, hi = 0, hi - lo
    if hi > span:
        lo, hi = max(0, lo - (hi - span)), span
    assert abs(w[10][0] - lo) <= 2 and abs(w[10][1] - hi) <= 2, (w[10], (lo, hi), s, g["dur_ns"])
    assert tls[10]["timeline_in_view"], "the timeline is scrolled into view"
    said = {"sync": "in a sync", "copy": "copy call", "memset": "memset call", "launch": "busy launching",
            "graph_launch": "launching graphs", "alloc": "allocations", "free": "frees", "event": "event calls",
            "stream": "stream calls", "other_cuda": "other CUDA calls", "host": "outside CUDA",
            "startup": "start-up", "teardown": "tear-down"}[g["cause"]]
    assert "idle " in tls[10]["info"] and said in tls[10]["info"], tls[10]["info"]
    # what the frame drew in that window: the gap, on the gaps lane
    drawn_gaps = [d for d in tls[10]["drawn"] if d[6] >= 0]
    assert small in [d[6] for d in drawn_gaps], drawn_gaps
    # a click on the big gap where the timeline draws it: its row
    r = res[12]
    assert_eq((r["highlighted"], tls[12]["selected"]), (["gap-0-%d" % big], big))
    assert r["highlighted_in_view"] and r["scroll_y"] > 0, (r["highlighted_in_view"], r["scroll_y"])


def _sql_stream_items(db, t0):
    con = sqlite3.connect(db)
    rows = con.execute("SELECT device, stream, start_ns, end_ns, COALESCE(name, kind || "
                       "COALESCE(' ' || copy_kind, '')) FROM gpu_activity").fetchall()
    con.close()
    out = {}
    for dev, stream, s, e, name in rows:
        out.setdefault("GPU %d stream %d" % (dev, stream), []).append((name, s - t0, e - t0))
    return {k: sorted(v) for k, v in out.items()}


def _sql_thread_items(db, t0):
    con = sqlite3.connect(db)
    rows = con.execute("SELECT tid, name, start_ns, end_ns FROM api_calls").fetchall()
    con.close()
    out = {}
    for tid, name, s, e in rows:
        out.setdefault(tid, []).append((name, s - t0, e - t0))
    return {k: sorted(v) for k, v in out.items()}


def test_html_timeline_lanes_match_the_trace():
    """Four threads, each launching on its own stream, and an overlap of a
    kernel and a copy on two more: a lane per stream holding exactly the
    trace's GPU work there, a lane per calling thread holding exactly its
    calls (SQL over gpu_activity and api_calls), each drawn at full view;
    one colour per kernel name, different names apart."""
    run = run_traced([prog("truth_streams"), "4", "30"], env={"FAKECUDA_KERNEL_NS": "200000"})
    html = report_html(run.trace)
    res = drive(html, [{"op": "state"}])
    tl = res[0]["timelines"]["0"]
    con = sqlite3.connect(run.trace)
    t0 = _origin(con)
    con.close()
    doc = json.loads(subprocess.run([GPUTRACE, "report", "--format", "json", run.trace], capture_output=True,
                                    text=True).stdout)
    lanes = tl["lanes"]
    want_streams = _sql_stream_items(run.trace, t0)
    assert len(want_streams) >= 6, want_streams.keys()
    got_streams = [lane["label"] for lane in lanes if lane["kind"] == "stream"]
    assert_eq(sorted(got_streams), sorted(want_streams))
    want_threads = _sql_thread_items(run.trace, t0)
    assert_eq(len([lane for lane in lanes if lane["kind"] == "thread"]), len(want_threads))
    assert len(want_threads) == 5, want_threads.keys()
    by_lane = {}
    for d in tl["drawn"]:
        by_lane.setdefault(d[0], []).append(d)
    for i, lane in enumerate(lanes):
        items = sorted((d[1], d[2], d[3]) for d in by_lane.get(i, []))
        assert all(d[4] == 1 for d in by_lane.get(i, [])), "nothing merged in a small trace"
        if lane["kind"] == "stream":
            assert_eq(items, want_streams[lane["label"]], lane["label"])
        elif lane["kind"] == "thread":
            tid = int(re.search(r"(?:tid |thread )(\d+)", lane["label"]).group(1))
            assert_eq(items, want_threads[tid], lane["label"])
        elif lane["kind"] == "gaps":
            assert_eq(len(items), len([g for g in doc["idle_gaps"] if "GPU %d " % g["device"] in lane["label"]]))
    fills = {}
    for d in tl["drawn"]:
        if lanes[d[0]]["kind"] == "stream":
            fills.setdefault(d[1], set()).add(d[7])
    assert all(len(f) == 1 for f in fills.values()), fills
    assert len({next(iter(f)) for f in fills.values()}) == len(fills), fills
    assert {"worker_k", "big_compute", "memcpy HtoD"} <= set(fills), fills.keys()


def test_html_timeline_nvtx_ranges_per_thread():
    """NVTX ranges (schema 6) as a lane per thread: each push range at its
    depth, start/end ranges in a lane of their own, the names as the trace
    holds them (hostile ones included), matched to the ranges view."""
    shim = gtlib.SANITIZED[os.environ["GPUTRACE_TEST_SANITIZER"]][0] \
        if os.environ.get("GPUTRACE_TEST_SANITIZER") else gtlib.SHIM
    run = run_traced([prog("nvtx_basic")], env={"NVTX_INJECTION64_PATH": shim})
    html = report_html(run.trace)
    res = drive(html, [{"op": "state"}])
    tl = res[0]["timelines"]["0"]
    con = sqlite3.connect(run.trace)
    t0 = _origin(con)
    span_end = t0 + tl["span"]
    want = {}
    for kind, tid, name, s, e, depth in con.execute("SELECT kind, tid, name, start_ns, end_ns, depth FROM ranges"):
        key = (tid, kind == "start")
        want.setdefault(key, []).append((name if name is not None else "(unnamed range)", s - t0,
                                         (e if e is not None else span_end) - t0,
                                         depth if kind == "push" else None))
    names = dict(con.execute("SELECT tid, name FROM thread_names"))
    con.close()
    lanes = tl["lanes"]
    got = {}
    for i, lane in enumerate(lanes):
        if lane["kind"] != "ranges":
            continue
        tid = int(re.search(r"(?:tid |thread )(\d+)\)?$", lane["label"]).group(1))
        start_end = lane["label"].startswith("NVTX start/end")
        if tid in names:
            assert names[tid] in lane["label"], (names[tid], lane["label"])
        got[(tid, start_end)] = sorted((d[1], d[2], d[3], None if start_end else d[5])
                                       for d in tl["drawn"] if d[0] == i)
    assert_eq(sorted(got), sorted(want))
    for k in want:
        assert_eq(got[k], sorted(want[k]), k)
    assert len(want) >= 3 and sum(len(v) for v in want.values()) >= 10, want
    shown = {n[0] for v in got.values() for n in v}
    assert {"bad\ufffd\ufffdutf8", "quote' \"; DROP TABLE nvtx_ranges; --", "(unnamed range)"} <= shown, shown
    # each thread's ranges lane comes right after its calls' lane
    for i, lane in enumerate(lanes):
        if lane["kind"] == "ranges" and not lane["label"].startswith("NVTX start/end"):
            tid = re.search(r"(\d+)\)?$", lane["label"]).group(1)
            prev = lanes[i - 1]
            if prev["kind"] == "thread":
                assert prev["label"].endswith(tid) or prev["label"].endswith(tid + ")"), (prev, lane)


HOSTILE = ["</script><script>window.__pwned='script'</script>", "<img src=x onerror=\"window.__pwned='img'\">",
           "<!--<script>", "k\u2028line\u2029sep", "k\"q'uote\\", "<b>bold</b>&amp;", "\u4e2d\u6587\U0001F600"]


def test_html_timeline_hostile_names_do_not_run():
    """Kernel and thread names that try to end the script element, open a
    comment, break a line in JSON or inject markup: the page holds them
    escaped, shows them verbatim, runs nothing and loads nothing."""
    d = tmpdir()
    db = os.path.join(d, "hostile.db")
    calls = [launch(k, tid=1000 + i % 2) for i, k in enumerate(HOSTILE)] + [sync("device")]
    make_trace(db, calls=calls, threads={1000: HOSTILE[0], 1001: HOSTILE[1]})
    con = sqlite3.connect(db)
    rows = con.execute("SELECT id, start_ns FROM calls ORDER BY id").fetchall()
    for cid, start in rows[:len(HOSTILE)]:
        add_gpu_op(con, "kernel", cid, start + 2000, start + 2600)
    con.commit()
    con.close()
    html = report_html(db)
    data, page = page_data(html)
    block = page[page.index('id="gt-tl-data-0">'):]
    block = block[:block.index("</script>")]
    for bad in ("</", "<!--", "\u2028", "\u2029", "<"):
        assert bad not in block, bad
    assert set(HOSTILE) <= set(data["names"]), data["names"]
    res = drive(html, [{"op": "state"}])
    r = res[0]
    assert_eq((r["imgs"], r["scripts"]), (0, 2), "the page's own script and the timeline's data, nothing more")
    tl = r["timelines"]["0"]
    assert set(HOSTILE) <= {d[1] for d in tl["drawn"]}
    labels = [lane["label"] for lane in tl["lanes"]]
    assert HOSTILE[0] + " (tid 1000)" in labels and HOSTILE[1] + " (tid 1001)" in labels, labels
    for k in HOSTILE[:3]:
        assert k in tl["legend"], (k, tl["legend"])


def test_html_timeline_bounded_for_big_traces():
    """A lane of 60,000 kernels: drawn as at most 20,000 blocks, each item
    counted once in the blocks that cover it, every kernel inside its block,
    and the page says what it merged. Blocks of one name keep it."""
    d = tmpdir()
    db = os.path.join(d, "big.db")
    n = 60000
    calls = [launch("k%d" % (i % 3 if i < n // 2 else 0)) for i in range(n)]
    make_trace(db, calls=calls)
    con = sqlite3.connect(db)
    rows = con.execute("SELECT id, start_ns FROM calls ORDER BY id").fetchall()
    for cid, start in rows:
        add_gpu_op(con, "kernel", cid, start + 100, start + 700)
    con.commit()
    kern = sorted(con.execute("SELECT start_ns, end_ns, name FROM kernels").fetchall())
    t0 = _origin(con)
    con.close()
    html = report_html(db)
    assert os.path.getsize(html) < 4 << 20, os.path.getsize(html)
    data, _ = page_data(html)
    lane = next(lane for lane in data["lanes"] if lane["kind"] == "stream")
    ev = [lane["ev"][i:i + 5] for i in range(0, len(lane["ev"]), 5)]
    assert_eq(lane["total"], n)
    assert len(ev) <= 20000 and lane["q"] > 0, (len(ev), lane["q"])
    assert_eq(sum(e[3] for e in ev), n)
    j = 0
    for s, e, name in kern:
        while ev[j][0] + ev[j][1] < e - t0:
            j += 1
        blk = ev[j]
        assert blk[0] <= s - t0 and e - t0 <= blk[0] + blk[1], (s - t0, e - t0, blk)
        assert blk[2] == -1 or data["names"][blk[2]] == name, (blk, name)
    # the second half is all k0: its blocks keep the name
    assert data["names"][ev[-1][2]] == "k0"
    res = drive(html, [{"op": "state"}])
    tl = res[0]["timelines"]["0"]
    assert any("60,000 items drawn as" in p for p in tl["notes"]), tl["notes"]


def test_html_timeline_older_trace_versions():
    """Traces of every schema version (tests/data/gputrace-vN.sql) get the
    timeline's lanes: each thread's calls and each stream's GPU work,
    matched to api_calls and gpu_activity by SQL (the page's JSON)."""
    from make_trace import memcpy
    d = tmpdir()
    for v in (1, 2, 3, 4, 5, None):
        db = os.path.join(d, "v%s.db" % v)
        schema = os.path.join(gtlib.ROOT, "tests", "data", "gputrace-v%d.sql" % v) if v else \
            os.path.join(gtlib.ROOT, "schema", "gputrace.sql")
        calls = [launch("k%d" % (i % 3), tid=1000 + i % 2) for i in range(6)] + \
                [memcpy("DtoH", 1 << 20), sync("device")]
        make_trace(db, calls=calls, schema=schema)
        con = sqlite3.connect(db)
        starts = sorted(con.execute("SELECT id, start_ns FROM calls"))
        for cid, st in starts[:6]:
            add_gpu_op(con, "kernel", cid, st + 3000, st + 3500)
        cid, st = starts[6]
        add_gpu_op(con, "memcpy", cid, st + 3000, st + 9000, nbytes=1 << 20)
        add_gpu_op(con, "kernel", None, st + 20000, st + 21000, name="orphan", stream=9)
        con.commit()
        t0 = _origin(con)
        con.close()
        data, _ = page_data(report_html(db))
        got = {}
        for lane in data["lanes"]:
            ev = [lane["ev"][i:i + 5] for i in range(0, len(lane["ev"]), 5)]
            key = lane["label"] if lane["kind"] == "stream" else int(re.search(r"(\d+)$", lane["label"]).group(1))
            got[key] = sorted((data["names"][e[2]], e[0], e[0] + e[1]) for e in ev)
        want = _sql_thread_items(db, t0)
        want.update(_sql_stream_items(db, t0))
        assert_eq(got, want, v)
        assert "GPU 0 stream 9" in got and ("orphan", st + 20000 - t0, st + 21000 - t0) in got["GPU 0 stream 9"], v
    # no GPU records at all (no CUPTI): the calls' host times stand in, as
    # the kernels and memcpys views give them
    db = os.path.join(d, "host.db")
    make_trace(db, calls=[launch("k%d" % (i % 2), stream=5) for i in range(4)] + [memcpy("HtoD", 4096)])
    con = sqlite3.connect(db)
    t0 = _origin(con)
    want = sorted([(n, s - t0, e - t0) for n, s, e in con.execute("SELECT name, start_ns, end_ns FROM kernels")] +
                  [("memcpy " + k, s - t0, e - t0) for k, s, e in con.execute("SELECT kind, start_ns, end_ns "
                                                                               "FROM memcpys")])
    con.close()
    data, _ = page_data(report_html(db))
    lanes = {lane["label"]: lane for lane in data["lanes"] if lane["kind"] == "stream"}
    got = []
    for lane in data["lanes"]:
        if lane["kind"] == "stream":
            got += [(data["names"][lane["ev"][i + 2]], lane["ev"][i], lane["ev"][i] + lane["ev"][i + 1])
                    for i in range(0, len(lane["ev"]), 5)]
    assert_eq(sorted(got), want)
    assert_eq(sorted(lanes), ["GPU 0 stream 0", "GPU 0 stream 5"])


def test_html_timeline_sections_apart():
    """A report of two processes: a timeline each; a gap row of the second
    zooms the second's timeline alone, a gap clicked on the first's
    highlights the first's row; each keeps its own window."""
    a = run_traced([prog("stall")])
    b = run_traced([prog("stall")], env={"FAKECUDA_LAUNCH_NS": "20000"})
    html = report_html(a.trace, b.trace, "--min-gap", "100us")
    # the second's shortest gap (gaps come longest first): zoomed to, it is
    # not clamped to the whole run
    k = len(page_data(html, 1)[0]["gaps"]) - 1
    assert k > 0
    res = drive(html, [{"op": "state"}, {"op": "click_row", "section": 1, "gap": k},
                       {"op": "click_gap", "section": 0, "gap": 0}])
    assert_eq(sorted(res[0]["timelines"]), ["0", "1"])
    w0 = [(r["timelines"]["0"]["from"], r["timelines"]["0"]["to"]) for r in res]
    w1 = [(r["timelines"]["1"]["from"], r["timelines"]["1"]["to"]) for r in res]
    assert_eq((res[1]["highlighted"], res[1]["timelines"]["1"]["selected"], res[1]["timelines"]["0"]["selected"]),
              (["gap-1-%d" % k], k, -1))
    assert_eq(w0[1], w0[0])
    assert w1[1][1] - w1[1][0] < w1[0][1] - w1[0][0], (w1[0], w1[1])
    assert_eq(sorted(res[2]["highlighted"]), ["gap-0-0", "gap-1-%d" % k])
    assert_eq((res[2]["timelines"]["0"]["selected"], w1[2]), (0, w1[1]))

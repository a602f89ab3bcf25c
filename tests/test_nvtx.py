"""NVTX ranges, marks and names (issue 19), recorded through NVTX's
injection interface from programs built with NVIDIA's own NVTX v3 headers:
C (nvtx_basic), CUDA C++ built by nvcc (nvtx_cuda) and Python through
ctypes (py/nvtx_ranges.py over libnvtx_lib.so). Each program's header
comment is the ground truth these tests repeat; every expected row here is
written from what the program does, never from a trace."""
import os
import re
import subprocess
import sys

import gtlib
from gtlib import GPUTRACE, ROOT, assert_eq, prog, query, run_traced, tmpdir

PYDIR = os.path.join(ROOT, "tests", "progs", "py")


def _shim():
    """The shim run_traced preloads: NVTX must load the same one."""
    kind = os.environ.get("GPUTRACE_TEST_SANITIZER")
    return gtlib.SANITIZED[kind][0] if kind else gtlib.SHIM


def run_nvtx(argv, env=None):
    e = {"NVTX_INJECTION64_PATH": _shim()}
    e.update(env or {})
    run = run_traced(argv, env=e)
    assert_eq(run.proc.returncode, 0, run.proc.stderr)
    return run


def ranges(run):
    """Ranges in start order, each a dict of the view's columns."""
    cols = ["id", "kind", "tid", "end_tid", "domain", "category", "category_name", "name", "start_ns", "end_ns",
            "depth", "parent_id", "payload", "payload_type", "stack_id", "pystack_id"]
    rows = run.q("SELECT %s FROM ranges ORDER BY start_ns, id" % ", ".join(cols))
    return [dict(zip(cols, r)) for r in rows]


def meta(run, key):
    return run.q1("SELECT value FROM meta WHERE key = ?", key)


def test_nvtx_c_program_every_kind_of_range():
    run = run_nvtx([prog("nvtx_basic")])
    assert_eq(run.proc.stdout, "nvtx_basic: extra pop -1\n")
    rs = ranges(run)
    by_id = {r["id"]: r for r in rs}
    main_tid = run.q1("SELECT tid FROM thread_names WHERE name = 'main-thread'")
    worker_tid = run.q1("SELECT tid FROM thread_names WHERE name = 'worker'")
    assert main_tid != worker_tid
    # (kind, thread, ending thread, domain, category, category name, name, depth, parent's name,
    #  payload, payload type), in the order the program opened them
    M, W = main_tid, worker_tid
    expect = [
        ("push", M, M, None, 0, None, "outer", 0, None, None, None),
        ("push", M, M, None, 0, None, "wide \u00e9\u4e2d", 1, "outer", None, None),
        ("push", M, M, None, 7, None, "payload-range", 1, "outer", -42, "int64"),
        ("push", M, M, "my-domain", 3, "io", "registered-name", 0, None, 7, "uint32"),
        ("push", M, M, None, 0, None, "default-in-domain", 0, None, None, None),
        ("start", M, W, None, 0, None, "cross-thread", None, None, None, None),
        ("push", W, W, None, 0, None, "worker-range", 0, None, None, None),
        ("push", M, M, None, 0, None, "x" * 256, 0, None, None, None),
        ("push", M, M, None, 0, None, "bad\ufffd\ufffdutf8", 0, None, None, None),
        ("push", M, M, None, 0, None, "quote' \"; DROP TABLE nvtx_ranges; --", 0, None, None, None),
        ("push", M, M, None, 0, None, "ctrl\n\t\x01end", 0, None, None, None),
        ("push", M, M, None, 0, None, None, 0, None, None, None),
        ("push", M, None, None, 0, None, "left-open", 0, None, None, None),
    ]
    got = [(r["kind"], r["tid"], r["end_tid"], r["domain"], r["category"], r["category_name"], r["name"],
            r["depth"], by_id[r["parent_id"]]["name"] if r["parent_id"] else None, r["payload"], r["payload_type"])
           for r in rs]
    assert_eq(got, expect, "ranges")
    # every closed range ends after it starts and inside its parent; only left-open is open
    for r in rs:
        if r["name"] == "left-open":
            assert r["end_ns"] is None, r
            continue
        assert r["end_ns"] is not None and r["end_ns"] >= r["start_ns"], r
        if r["parent_id"]:
            p = by_id[r["parent_id"]]
            assert p["start_ns"] <= r["start_ns"] and r["end_ns"] <= p["end_ns"], (r, p)
    # the work the program did inside its ranges, by the calls' own times
    wide = [r for r in rs if r["name"] == "wide \u00e9\u4e2d"][0]
    inside = run.q("SELECT name FROM api_calls WHERE tid = ? AND start_ns >= ? AND end_ns <= ? ORDER BY start_ns",
                   M, wide["start_ns"], wide["end_ns"])
    assert_eq([r[0] for r in inside], ["cudaLaunchKernel"], "calls inside the wide range")
    outer = rs[0]
    inside = run.q("SELECT name FROM api_calls WHERE tid = ? AND start_ns >= ? AND end_ns <= ? ORDER BY start_ns",
                   M, outer["start_ns"], outer["end_ns"])
    assert_eq([r[0] for r in inside], ["cudaMalloc", "cudaLaunchKernel"], "calls inside outer")
    wr = [r for r in rs if r["name"] == "worker-range"][0]
    inside = run.q("SELECT name, stream FROM api_calls WHERE tid = ? AND start_ns >= ? AND end_ns <= ?",
                   W, wr["start_ns"], wr["end_ns"])
    assert_eq([r[0] for r in inside], ["cudaMemsetAsync"], "calls inside worker-range")
    # the stream NVTX named is the one the memset went to
    assert_eq(run.q("SELECT stream, name FROM stream_names"), [(inside[0][1], "copy-stream")])
    # the cross-thread range ends after the worker started and before it pushed
    cross = [r for r in rs if r["name"] == "cross-thread"][0]
    assert cross["end_ns"] <= wr["start_ns"], (cross, wr)
    # each range carries the stack it was opened from
    assert "worker" in gtlib.stack_functions(run.trace, wr["stack_id"]), wr
    assert "main" in gtlib.stack_functions(run.trace, outer["stack_id"]), outer
    marks = run.q("SELECT tid, domain, category, name, payload, payload_type FROM marks ORDER BY ns")
    assert_eq(marks, [(M, None, 0, "mark-1", None, None), (M, "my-domain", 0, "dmark", 2.5, "double"),
                      (M, None, 0, "A\ufffd\ufffdB", None, None)])
    mark_ns = run.q1("SELECT ns FROM marks WHERE name = 'mark-1'")
    assert wide["start_ns"] <= mark_ns <= wide["end_ns"]
    cats = run.q("SELECT n.domain_id IS NULL, n.object, s.value FROM nvtx_names n JOIN nvtx_strings s "
                 "ON s.id = n.name_id WHERE n.kind = 3 ORDER BY n.object")
    assert_eq(cats, [(1, 1, "cat-one"), (0, 3, "io")])
    assert_eq(meta(run, "nvtx_unbalanced_pops"), "1")
    assert_eq(meta(run, "nvtx_truncated_strings"), "1")
    assert_eq(meta(run, "nvtx_unmatched_ends"), "0")
    assert_eq(meta(run, "nvtx_ranges_not_kept"), "0")
    assert_eq(meta(run, "nvtx_dropped_strings"), "0")
    # the analyzer reads the trace as before
    for cmd in (["info"], ["report"], ["export", "--format", "chrome-json"]):
        r = subprocess.run([GPUTRACE] + cmd + [run.trace], capture_output=True, text=True)
        assert_eq(r.returncode, 0, r.stderr)


def test_nvtx_deep_nesting_recorded_whole():
    n = 10000
    run = run_nvtx([prog("nvtx_basic"), "deep", str(n)])
    rs = ranges(run)
    assert_eq(len(rs), n)
    assert_eq([r["depth"] for r in rs], list(range(n)))
    assert_eq([r["parent_id"] for r in rs], [None] + [r["id"] for r in rs[:-1]])
    # each one closes inside its parent
    for a, b in zip(rs, rs[1:]):
        assert a["start_ns"] <= b["start_ns"] and b["end_ns"] <= a["end_ns"], (a, b)
    assert_eq(meta(run, "nvtx_unbalanced_pops"), "0")


def test_nvtx_open_range_kept_when_sigterm_ends_the_process():
    import signal
    d = tmpdir()
    env = gtlib.base_env({"LD_PRELOAD": _shim(), "NVTX_INJECTION64_PATH": _shim(),
                          "GPUTRACE_OUTPUT": os.path.join(d, "t-%p.db")})
    p = subprocess.Popen([prog("nvtx_basic"), "hold"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, preexec_fn=gtlib.default_signals)
    assert_eq(p.stdout.readline(), "ready\n")
    p.send_signal(signal.SIGTERM)
    p.communicate(timeout=30)
    assert_eq(p.returncode, -signal.SIGTERM)
    (db,) = [os.path.join(d, f) for f in os.listdir(d) if f.endswith(".db")]
    assert_eq(query(db, "SELECT name, depth, end_ns, end_tid FROM ranges"), [("held", 0, None, None)])
    assert_eq(query(db, "SELECT value FROM meta WHERE key = 'terminated_by_signal'"), [(str(signal.SIGTERM),)])


def test_nvtx_distinct_names_past_the_string_table():
    """131072 distinct strings fit; the ranges past them are kept without
    a name and counted, and memory stays bounded."""
    n, room = 140000, 131072
    run = run_nvtx([prog("nvtx_basic"), "names", str(n)])
    assert_eq(meta(run, "nvtx_dropped_strings"), str(n - room))
    stored = run.q1("SELECT count(*) FROM nvtx_strings")
    assert stored <= room, stored
    if meta(run, "dropped_events") == "0":
        assert_eq(run.q1("SELECT count(*) FROM ranges"), n)
        assert_eq(run.q1("SELECT count(*) FROM ranges WHERE name IS NULL"), n - room)
        assert_eq(run.q1("SELECT count(*) FROM ranges WHERE name = 'n' || (id - 1)"), room)
        assert_eq(run.q1("SELECT count(*) FROM ranges WHERE end_ns IS NULL"), 0)


def test_nvtx_nvcc_program_and_the_documented_queries():
    run = run_nvtx([prog("nvtx_cuda")])
    rs = ranges(run)
    by_id = {r["id"]: r for r in rs}
    got = [(r["name"], r["depth"], by_id[r["parent_id"]]["name"] if r["parent_id"] else None) for r in rs]
    assert_eq(got, [("setup", 0, None)] + [("step", 0, None), ("forward", 1, "step"), ("backward", 1, "step")] * 3)
    # docs/schema.md: kernels launched inside a range
    kq = ("SELECT r.name AS range, k.name AS kernel, count(*) AS launches, sum(k.end_ns - k.start_ns) / 1e3 AS gpu_us "
          "FROM ranges r JOIN api_calls c ON c.tid = r.tid AND c.start_ns >= r.start_ns "
          "AND c.start_ns < COALESCE(r.end_ns, c.start_ns + 1) JOIN kernels k ON k.api_call_id = c.id "
          "WHERE r.name = '%s' GROUP BY 1, 2 ORDER BY gpu_us DESC")
    assert_eq([r[:3] for r in run.q(kq % "forward")], [("forward", "fwd(float*)", 3)])
    assert_eq([r[:3] for r in run.q(kq % "backward")], [("backward", "bwd(float*)", 6)])
    assert_eq(run.q(kq % "setup"), [])
    # docs/schema.md: GPU busy time inside each range, against the GPU
    # intervals clipped by hand here
    bq = ("SELECT r.id, r.name, r.depth, (r.end_ns - r.start_ns) / 1e6 AS range_ms, "
          "sum(min(g.end_ns, r.end_ns) - max(g.start_ns, r.start_ns)) / 1e6 AS gpu_busy_ms "
          "FROM ranges r LEFT JOIN gpu_activity g ON g.start_ns < r.end_ns AND g.end_ns > r.start_ns "
          "WHERE r.end_ns IS NOT NULL GROUP BY r.id ORDER BY r.start_ns")
    acts = run.q("SELECT start_ns, end_ns FROM gpu_activity")
    assert_eq(len(acts), 9, "one GPU interval per kernel")
    for rid, name, depth, range_ms, busy_ms in run.q(bq):
        r = by_id[rid]
        want = sum(min(e, r["end_ns"]) - max(s, r["start_ns"]) for s, e in acts
                   if s < r["end_ns"] and e > r["start_ns"])
        if want == 0:
            assert busy_ms is None, (name, busy_ms)
        else:
            assert abs(busy_ms * 1e6 - want) < 1, (name, busy_ms, want)


def test_nvtx_from_python_through_ctypes():
    script = os.path.join(PYDIR, "nvtx_ranges.py")
    lines = gtlib.marker_lines(script)
    run = run_nvtx([sys.executable, script, prog("libnvtx_lib.so")], env={"PYTHONDONTWRITEBYTECODE": "1"})
    rs = ranges(run)
    by_id = {r["id"]: r for r in rs}
    got = [(r["kind"], r["name"], r["depth"], by_id[r["parent_id"]]["name"] if r["parent_id"] else None)
           for r in rs]
    assert_eq(got, [("push", "epoch", 0, None), ("push", "batch", 1, "epoch"), ("push", "batch", 1, "epoch"),
                    ("start", "load", None, None)])
    # the Python line that pushed each range
    site = run.q("SELECT r.name, p.file, p.line FROM ranges r JOIN py_stack_frames p ON p.pystack_id = r.pystack_id "
                 "AND p.depth = 0 ORDER BY r.start_ns")
    assert_eq(site, [("epoch", script, lines["push_epoch"]), ("batch", script, lines["push_batch"]),
                     ("batch", script, lines["push_batch"]), ("load", script, lines["start"])])
    load = rs[3]
    assert load["end_tid"] is not None and load["end_tid"] != load["tid"], load
    mark = run.q("SELECT m.name, p.line FROM marks m JOIN py_stack_frames p ON p.pystack_id = m.pystack_id "
                 "AND p.depth = 0")
    assert_eq(mark, [("checkpoint", lines["mark"])])


def test_nvtx_record_sets_the_injection_path_and_leaves_another_alone():
    d = tmpdir()
    env = gtlib.base_env()
    env.pop("NVTX_INJECTION64_PATH", None)
    r = subprocess.run([GPUTRACE, "record", "-q", "-o", os.path.join(d, "a-%p.db"), prog("nvtx_cuda")], env=env,
                       capture_output=True, text=True)
    assert_eq(r.returncode, 0, r.stderr)
    assert "NVTX" not in r.stderr, r.stderr
    (a,) = [os.path.join(d, f) for f in os.listdir(d) if f.startswith("a-")]
    assert_eq(query(a, "SELECT count(*) FROM ranges")[0][0], 10)
    # another tool's injection library: left in place, one line says so,
    # and the program runs as it would (NVTX finds no usable library)
    other = os.path.join(d, "libother-tool.so")
    env["NVTX_INJECTION64_PATH"] = other
    r = subprocess.run([GPUTRACE, "record", "-q", "-o", os.path.join(d, "b-%p.db"), prog("nvtx_cuda")], env=env,
                       capture_output=True, text=True)
    assert_eq(r.returncode, 0, r.stderr)
    assert_eq(r.stdout, "nvtx_cuda: ok\n")
    said = [line for line in r.stderr.splitlines() if "NVTX_INJECTION64_PATH" in line]
    assert_eq(said, ["gputrace: NVTX_INJECTION64_PATH is already set (%s); leaving it, so NVTX ranges are not "
                     "recorded" % other])
    (b,) = [os.path.join(d, f) for f in os.listdir(d) if f.startswith("b-")]
    assert_eq(query(b, "SELECT count(*) FROM ranges")[0][0], 0)
    assert_eq(query(b, "SELECT count(*) FROM kernels")[0][0], 9)


def test_nvtx_recorded_with_ld_preload_alone():
    """The mission's own command, LD_PRELOAD and nothing else, records NVTX
    as `record` does: the preloaded shim names itself NVTX's tool. Another
    tool's choice is left alone with one line (children do not repeat it);
    GPUTRACE_NVTX=0 records none."""
    env = {"NVTX_INJECTION64_PATH": None}
    run = run_traced([prog("nvtx_cuda")], env=env)
    assert_eq(run.proc.returncode, 0, run.proc.stderr)
    assert_eq(run.proc.stdout, "nvtx_cuda: ok\n")
    assert "NVTX" not in run.proc.stderr, run.proc.stderr
    assert_eq(run.q1("SELECT count(*) FROM ranges"), 10)
    assert_eq(run.q1("SELECT count(*) FROM kernels"), 9)

    off = run_traced([prog("nvtx_cuda")], env={"NVTX_INJECTION64_PATH": None, "GPUTRACE_NVTX": "0"})
    assert_eq(off.proc.returncode, 0, off.proc.stderr)
    assert_eq(off.proc.stderr, "")
    assert_eq(off.q1("SELECT count(*) FROM ranges"), 0)
    assert_eq(off.q1("SELECT count(*) FROM kernels"), 9)

    other = os.path.join(tmpdir(), "libother-tool.so")
    mine = run_traced([prog("nvtx_cuda")], env={"NVTX_INJECTION64_PATH": other})
    assert_eq(mine.proc.returncode, 0, mine.proc.stderr)
    assert_eq(mine.proc.stdout, "nvtx_cuda: ok\n")
    said = [line for line in mine.proc.stderr.splitlines() if "NVTX" in line]
    assert_eq(said, ["gputrace: NVTX_INJECTION64_PATH names another NVTX tool (%s); leaving it, so NVTX ranges "
                     "are not recorded" % other])
    assert_eq(mine.q1("SELECT count(*) FROM ranges"), 0)


def test_nvtx_report_by_phase_planted_and_against_the_oracle():
    """docs/report.md, Phases, on tests/progs/nvtx_phases.c: the answers
    the program plants, then every figure against tests/oracle.py."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import oracle
    steps, stall_us, kernel_ns = 3, 2000, 200000
    run = run_nvtx([prog("nvtx_phases"), str(steps), str(stall_us)], env={"FAKECUDA_KERNEL_NS": str(kernel_ns)})
    rc, doc, err = oracle.run_report([run.trace])
    assert_eq(rc, 0, err)
    ph = doc["phases"]
    assert_eq([p["name"] for p in ph], ["init", "data", "compute"])
    init, data, compute = ph
    # the simulated GPU: a copy takes ceil(bytes / bandwidth) + 1000 ns
    # (pageable 10 B/ns, pinned 25 B/ns; tests/fakecuda/README.md)
    copies = 2 * steps * (-(-(1 << 20) // 10) + 1000) + (-(-4096 // 25) + 1000)
    want = {
        "init": dict(ranges=1, gpu_busy_ns=0, launches=0, h2d_bytes=0, syncs=0),
        "data": dict(ranges=steps + 1, gpu_busy_ns=copies, launches=0, h2d_bytes=2 * steps * (1 << 20) + 4096,
                     syncs=1),
        "compute": dict(ranges=steps, gpu_busy_ns=5 * steps * kernel_ns, launches=5 * steps, h2d_bytes=0,
                        syncs=steps),
    }
    for p in ph:
        assert_eq({k: p[k] for k in want[p["name"]]}, want[p["name"]], p["name"])
        assert_eq(p["gpu_idle_ns"], p["wall_ns"] - p["gpu_busy_ns"], p["name"])
    assert data["wall_ns"] >= steps * stall_us * 1000, data
    assert init["launch_host_ns"] == 0 and compute["launch_host_ns"] > 0 and compute["sync_ns"] > 0
    errs = oracle.check([run.trace], doc)
    assert not errs, "the report disagrees with the oracle:\n  " + "\n  ".join(errs[:20])
    # --top keeps the first phases and says how many it left out
    top = subprocess.run([GPUTRACE, "report", "--format", "json", "--top", "1", run.trace], capture_output=True,
                         text=True)
    top = __import__("json").loads(top.stdout)
    assert_eq(([p["name"] for p in top["phases"]], top["truncated"]["phases"]), (["init"], 2))
    # the text and HTML reports carry the section
    text = subprocess.run([GPUTRACE, "report", run.trace], capture_output=True, text=True).stdout
    assert "By phase" in text and all(("  %s " % n) in text for n in ("init", "data", "compute")), text
    html = os.path.join(tmpdir(), "r.html")
    subprocess.run([GPUTRACE, "report", "--format", "html", "-o", html, run.trace], check=True)
    with open(html) as f:
        page = f.read()
    assert "By phase" in page and "<code>compute</code>" in page
    # the timeline's phases row: one rect per top-level range, named
    titles = re.findall(r"<title>(init|data|compute) [0-9.]+ [mun]?s</title>", page)
    assert_eq(sorted(titles), sorted(["init"] + ["data"] * (steps + 1) + ["compute"] * steps))


def test_nvtx_report_without_ranges_has_no_phases():
    run = run_traced([prog("rt_basic")])
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import oracle
    rc, doc, err = oracle.run_report([run.trace])
    assert_eq(rc, 0, err)
    assert_eq(doc["phases"], [])
    text = subprocess.run([GPUTRACE, "report", run.trace], capture_output=True, text=True).stdout
    assert "By phase" not in text


def test_nvtx_export_ranges_on_their_threads():
    """export --format chrome-json: push ranges of the default domain are
    slices on their thread's track; start/end ranges, and push ranges of
    another domain (their own stack: they may cross the thread's other
    slices, which slices on one thread must not), async slices; marks
    instants; the threads carry the names NVTX gave them."""
    import json
    run = run_nvtx([prog("nvtx_basic")])
    r = subprocess.run([GPUTRACE, "export", "--format", "chrome-json", run.trace], capture_output=True, text=True)
    assert_eq(r.returncode, 0, r.stderr)
    evs = json.loads(r.stdout)
    evs = evs["traceEvents"] if isinstance(evs, dict) else evs
    nv = [e for e in evs if e.get("cat") == "nvtx"]
    main_tid = run.q1("SELECT tid FROM thread_names WHERE name = 'main-thread'")
    worker_tid = run.q1("SELECT tid FROM thread_names WHERE name = 'worker'")
    # every push range is one X slice on its thread, its times the view's (us, 3 decimals)
    origin = None
    want = run.q("SELECT tid, COALESCE(name, '(unnamed)'), start_ns, end_ns FROM ranges WHERE kind = 'push' "
                 "AND end_ns IS NOT NULL AND domain IS NULL ORDER BY start_ns")
    got = [e for e in nv if e["ph"] == "X" and e["name"] != "left-open"]
    assert_eq(len(got), len(want))
    for e, (tid, name, s, t) in zip(sorted(got, key=lambda e: e["ts"]), want):
        if origin is None:
            origin = s - round(e["ts"] * 1000)
        assert_eq((e["tid"], e["name"]), (tid, name))
        assert abs(e["ts"] * 1000 - (s - origin)) < 1.5 and abs(e["dur"] * 1000 - (t - s)) < 1.5, (e, s, t)
    assert_eq([e["name"] for e in nv if e["ph"] == "X" and e["name"] == "left-open"], ["left-open"])
    assert_eq([(e["ph"], e["tid"], e["name"]) for e in nv if e["ph"] in "be"],
              [("b", main_tid, "registered-name"), ("e", main_tid, "registered-name"),
               ("b", main_tid, "cross-thread"), ("e", main_tid, "cross-thread")])
    dom = run.q("SELECT start_ns, end_ns FROM ranges WHERE domain = 'my-domain'")
    b, e = [x for x in nv if x["ph"] in "be" and x["name"] == "registered-name"]
    assert_eq((b["id"], b["args"]["domain"]), (e["id"], "my-domain"))
    assert abs((e["ts"] - b["ts"]) * 1000 - (dom[0][1] - dom[0][0])) < 1.5, (b, e, dom)
    assert_eq(sorted((e["name"], e["tid"]) for e in nv if e["ph"] == "i"),
              [("A\ufffd\ufffdB", main_tid), ("dmark", main_tid), ("mark-1", main_tid)])
    payload = [e for e in nv if e["name"] == "payload-range"][0]
    assert_eq((payload["args"]["payload"], payload["args"]["category"]), (-42, 7))
    names = {e["tid"]: e["args"]["name"] for e in evs if e.get("ph") == "M" and e.get("name") == "thread_name"
             and e.get("pid") == run.q1("SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'pid'")}
    assert names[main_tid].startswith("main-thread") and names[worker_tid].startswith("worker"), names

"""Edges of the analyzer's commands that issue 31 found saying the wrong
thing: a limit above 2^63 printed negative, `info` silent on an output it
could not write, a merged file read as "schema version 0", the same run
merged twice, `audit --baseline` hiding a held budget's line."""
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gtlib  # noqa: E402
import make_trace as mt  # noqa: E402
from gtlib import assert_eq  # noqa: E402

GPUTRACE = gtlib.GPUTRACE


def gt(*args, **kw):
    return subprocess.run([GPUTRACE] + list(args), capture_output=True, text=True, timeout=120, **kw)


def example(d=None, name="example.db"):
    return mt.make_example_trace(os.path.join(d or gtlib.tmpdir("gputrace-edges-"), name))


def test_audit_byte_limit_above_2_63():
    path = example()
    for limit, human in ((2 ** 64 - 1, "16.0 EiB"), (2 ** 63, "8.0 EiB")):
        r = gt("audit", "--max-pageable-h2d-bytes", str(limit), path)
        assert r.returncode == 0, r
        assert r.stdout.rstrip().endswith("<= %d B (%s)" % (limit, human)), r.stdout
        assert "-" not in r.stdout.split(":", 1)[1], r.stdout


def test_info_unwritable_output_fails():
    path = example()
    for fmt in ("text", "json"):
        with open("/dev/full", "w") as full:
            r = subprocess.run([GPUTRACE, "info", "--format", fmt, path], stdout=full, stderr=subprocess.PIPE,
                               text=True, timeout=60)
        assert r.returncode == 1, (fmt, r.returncode, r.stderr)
        assert "cannot write standard output" in r.stderr, r.stderr
    assert gt("info", path).returncode == 0


def test_merge_refuses_one_run_twice():
    d = gtlib.tmpdir("gputrace-edges-")
    a = example(d)
    copy = os.path.join(d, "copy.db")
    shutil.copy(a, copy)
    for inputs in ([a, a], [a, copy]):
        out = os.path.join(d, "job.db")
        r = gt("merge", "-o", out, *inputs)
        assert r.returncode == 2 and "same run" in r.stderr, r
        assert not os.path.exists(out)
        assert not [f for f in os.listdir(d) if ".tmp-" in f]


def test_merged_file_named_for_what_it_is():
    d = gtlib.tmpdir("gputrace-edges-")
    a = example(d)
    b = mt.make_trace(os.path.join(d, "other.db"), calls=[mt.launch("k")], meta={"pid": "777"})
    out = os.path.join(d, "job.db")
    assert gt("merge", "-o", out, a, b).returncode == 0
    n = gtlib.query(out, "SELECT count(*) FROM traces")[0][0]
    assert_eq(n, 2)
    for cmd in (["info"], ["report"], ["audit", "--max-idle-pct", "50"], ["export", "-o", os.path.join(d, "x.json")]):
        r = gt(*cmd, out)
        assert r.returncode == 2, (cmd, r)
        assert "schema version 0" not in r.stderr, r.stderr
        assert "a file of %d merged traces (gputrace merge)" % n in r.stderr, (cmd, r.stderr)


def _traced_steps(steps=30):
    r = gtlib.run_traced([gtlib.prog("gate_work"), "nocopy", str(steps)], env={"NVTX_INJECTION64_PATH": gtlib.SHIM})
    assert r.proc.returncode == 0, r.proc.stderr
    return r.trace


def test_one_time_origin():
    """Every +TIME counts from the trace's start (meta.start_ns), as --from
    and --to do: a gap's offset is its start less the trace's start, and a
    window from there starts at the gap."""
    import json
    # diff_work: each step's 5 ms kernel, then 10 ms of host work with the
    # GPU idle: gaps the report lists
    r = gtlib.run_traced([gtlib.prog("diff_work"), "base", "4"], env={"NVTX_INJECTION64_PATH": gtlib.SHIM})
    assert r.proc.returncode == 0, r.proc.stderr
    path = r.trace
    start = int(gtlib.query(path, "SELECT value FROM meta WHERE key = 'start_ns'")[0][0])
    first = gtlib.query(path, "SELECT min(start_ns) FROM api_calls")[0][0]
    assert first > start, (first, start)  # the tracer's start-up comes first: the two origins differ
    r = gt("report", "--format", "json", "--top", "0", "--min-gap", "1ns", path)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    gaps = doc["idle_gaps"]
    assert gaps
    for g in gaps:
        assert_eq(g["offset_ns"], g["start_ns"] - start, "gap offset")
    for s in doc["steps"][0]["slowest"]:
        assert_eq(s["offset_ns"], s["start_ns"] - start, "step offset")
    # the window from a gap's +TIME holds the call that ended the gap first
    g = max((g for g in gaps if g["cause"] not in ("startup", "teardown")), key=lambda g: g["dur_ns"])
    w = gt("report", "--format", "json", "--top", "0", "--from", "%dns" % (g["offset_ns"] + g["dur_ns"]), path)
    assert w.returncode == 0, w.stderr
    wdoc = json.loads(w.stdout)
    assert_eq(wdoc["traces"][0]["window"]["from_ns"], g["start_ns"] + g["dur_ns"], "window start")
    text = gt("report", "--min-gap", "1ns", path).stdout
    assert "at +0 ns" not in text, text


def test_empty_window_is_an_error():
    path = _traced_steps(5)
    for cmd in (["report"], ["report", "--format", "json"], ["audit", "--max-idle-pct", "99"]):
        r = gt(*cmd, "--from", "1000s", path)
        assert r.returncode == 2, (cmd, r.returncode, r.stdout[:300])
        assert "window is empty" in r.stderr and "holds no CUDA calls" not in r.stdout + r.stderr, (cmd, r.stderr)
    # a window before the first call: its times count from the trace's
    # start, and the tracer's start-up comes first
    start = int(gtlib.query(path, "SELECT value FROM meta WHERE key = 'start_ns'")[0][0])
    first = gtlib.query(path, "SELECT min(start_ns) FROM api_calls")[0][0]
    assert first - start > 1000, (first, start)
    r = gt("report", "--to", "1us", path)
    assert r.returncode == 2 and "window is empty" in r.stderr, (r.returncode, r.stderr)
    # a window inside the run where nothing starts is the GPU's idle time there: reported
    assert gt("report", "--to", "%dns" % (first - start + 1), path).returncode == 0


def test_empty_kernel_name_is_not_a_blank_line():
    import json
    d = gtlib.tmpdir("gputrace-edges-")
    path = mt.make_trace(os.path.join(d, "empty-name.db"), calls=[mt.launch(""), mt.launch(""), mt.launch("k")])
    assert_eq(gtlib.query(path, "SELECT count(*) FROM api_calls a JOIN launch_args l ON l.call_id = a.id "
                                "JOIN strings s ON s.id = l.name_id WHERE s.value = ''")[0][0], 2)
    info = gt("info", path).stdout
    assert "         2   66.7  (unnamed kernel)" in info, info
    text = gt("report", path).stdout
    lines = text.splitlines()
    for head in ("Kernels by", "Launch overhead by kernel"):
        i = next(i for i, x in enumerate(lines) if x.startswith(head))
        body = lines[i + 1:i + 4]
        assert all(x.strip() for x in body), (head, body)
        assert any("(unnamed kernel)" in x for x in body), (head, body)
    doc = json.loads(gt("report", "--format", "json", path).stdout)
    assert "" in [k["name"] for k in doc["kernels"]]  # JSON keeps the name as it is


def test_idle_launch_with_no_launch_bound_says_why():
    """Issue 31: "host busy launching; 0 of 2 launches were launch-bound".
    The GPU waited 19 ms inside the second call, the kernel's first launch
    being the 20 ms one before it: launches the rule leaves out, said so."""
    import json
    import sqlite3
    d = gtlib.tmpdir("gputrace-edges-")
    t0, ms = mt.START_NS, 1_000_000
    path = mt.make_trace(os.path.join(d, "first-launch.db"), meta={"gpu_timing": "cupti"},
                         calls=[mt.launch("a", start_ns=t0, end_ns=t0 + 20 * ms),
                                mt.launch("a", start_ns=t0 + 21 * ms, end_ns=t0 + 21 * ms + 500)])
    db = sqlite3.connect(path)
    ids = [r[0] for r in db.execute("SELECT id FROM calls ORDER BY id")]
    mt.add_gpu_op(db, "kernel", ids[0], t0 + 1 * ms, t0 + 2 * ms)
    mt.add_gpu_op(db, "kernel", ids[1], t0 + 21 * ms + 400, t0 + 30 * ms)
    db.commit()
    db.close()
    doc = json.loads(gt("report", "--format", "json", path).stdout)
    assert_eq(doc["summary"]["launch_bound"], 0)
    f = next(f for f in doc["findings"] if f["kind"] == "idle_launch")
    assert "0 of 2 launches were launch-bound (the wait was in a kernel's first launch" in f["title"], f["title"]
    import oracle
    assert oracle.check([path], json.loads(gt("report", "--format", "json", "--top", "0", path).stdout)) == []


def test_capture_range_stop_writes_the_name_given():
    """`record --capture-range=cudaProfilerApi -o t.db`: the default end,
    stop, records one range at most, into t.db (not t-w1.db); repeat
    names each range's trace -wN."""
    d = gtlib.tmpdir("gputrace-edges-")
    env = gtlib.base_env({"GPUTRACE_CONTROL_DIR": os.path.join(d, "ctl")})
    out = os.path.join(d, "t.db")
    r = subprocess.run([GPUTRACE, "record", "-q", "-o", out, "--capture-range=cudaProfilerApi",
                        gtlib.prog("capture_range"), "rt", "3"], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert_eq(sorted(f for f in os.listdir(d) if f.endswith(".db")), ["t.db"])
    assert gtlib.query(out, "SELECT value FROM meta WHERE key = 'window_start_ns'")
    d2 = gtlib.tmpdir("gputrace-edges-")
    r = subprocess.run([GPUTRACE, "record", "-q", "-o", os.path.join(d2, "t.db"), "--capture-range=cudaProfilerApi",
                        "--capture-range-end=repeat", gtlib.prog("capture_range"), "rt", "3"], env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert_eq(sorted(f for f in os.listdir(d2) if f.endswith(".db")), ["t-w1.db", "t-w2.db", "t-w3.db"])


def test_info_span_is_records_and_reports():
    """One trace, one span: what `record`'s last line says, `info` says
    (beside the process's duration, which also holds the tracer's start-up
    before the first CUDA call), and report's span_ns, by SQL."""
    import json
    import re
    d = gtlib.tmpdir("gputrace-edges-")
    out = os.path.join(d, "t.db")
    r = subprocess.run([GPUTRACE, "record", "-o", out, gtlib.prog("gate_work"), "nocopy", "20"],
                       env=gtlib.base_env(), capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    said = re.search(r"GPU idle [\d.]+% of (.+)$", r.stderr, re.M).group(1)
    info = gt("info", out).stdout
    m = re.search(r"^span:\s+(.+?) \(first CUDA call to the last end", info, re.M)
    assert m and m.group(1) == said, (info, said)
    j = json.loads(gt("info", "--format", "json", out).stdout)
    rep = json.loads(gt("report", "--format", "json", out).stdout)
    want = gtlib.query(out, "SELECT max(e) - min(s) FROM (SELECT start_ns s, end_ns e FROM api_calls "
                            "UNION ALL SELECT start_ns, end_ns FROM gpu_activity)")[0][0]
    assert_eq(j["span_ns"], want)
    assert_eq(rep["summary"]["span_ns"], want)
    assert j["duration_ns"] > j["span_ns"]


DOCS = os.path.join(os.path.dirname(gtlib.HERE), "docs")


def _doc(name):
    with open(os.path.join(DOCS, name), encoding="utf-8") as f:
        return f.read()


def test_docs_schema_versions_are_the_readers():
    """docs/cli.md's table of unreadable traces says the versions this
    gputrace reads, as its messages do."""
    import re
    with open(os.path.join(os.path.dirname(gtlib.HERE), "analyzer", "trace", "gt_trace.h")) as f:
        version = int(re.search(r"#define GT_SCHEMA_VERSION (\d+)", f.read()).group(1))
    d = gtlib.tmpdir("gputrace-edges-")
    path = mt.make_trace(os.path.join(d, "new.db"), calls=[mt.launch("k")], user_version=version + 1)
    r = gt("info", path)
    said = r.stderr.strip().split(": ", 2)[2]
    cli = _doc("cli.md")
    assert "schema version N is newer than this gputrace supports (%d); upgrade gputrace" % version in cli
    assert said == "schema version %d is newer than this gputrace supports (%d); upgrade gputrace" % (
        version + 1, version), said
    assert "need 1 to %d" % version in cli
    old = mt.make_trace(os.path.join(d, "zero.db"), calls=[mt.launch("k")], user_version=0)
    said = gt("info", old).stderr.strip().split(": ", 2)[2]
    assert_eq(said, "schema version 0 is not a released trace format (need 1 to %d)" % version)


def test_docs_standby_does_not_call_the_idle_rule_unbuilt():
    text = _doc("standby.md")
    not_yet = text.split("## Not yet", 1)[1]
    assert "is built" in not_yet and "not built yet (issue 27): the `idle>50%` rule" not in not_yet, not_yet
    assert "### The idle rule" in text


def test_docs_killed_command_lines_are_records():
    """docs/cli.md's lines for a command killed by a signal are the ones
    record prints: the signal line, then what the run left (here the trace
    of the CUDA program the shell ran first). The shell kills itself: no
    race with the test."""
    import re
    d = gtlib.tmpdir("gputrace-edges-")
    r = subprocess.run([GPUTRACE, "record", "-o", os.path.join(d, "t-%p.db"), "sh", "-c",
                        "%s nocopy 5 >/dev/null; kill -TERM $$" % gtlib.prog("gate_work")],
                       env=gtlib.base_env(), capture_output=True, text=True, timeout=120)
    assert_eq(r.returncode, 128 + 15)
    lines = r.stderr.splitlines()
    assert re.fullmatch(r"gputrace: sh killed by signal 15", lines[0]), lines
    assert len(lines) > 1 and lines[1].startswith("gputrace: wrote "), lines
    cli = _doc("cli.md")
    assert "`gputrace: CMD killed by signal N` to stderr" in cli
    assert "and nothing else" not in cli.split("killed by signal N", 1)[1][:200]


def test_unreadable_trace_said_once():
    """Finding the origin of +TIME reads every trace's start quietly: a
    trace that cannot be read is said once, when the report reads it."""
    d = gtlib.tmpdir("gputrace-edges-")
    bad = os.path.join(d, "bad.db")
    with open(bad, "w") as f:
        f.write("not a trace")
    for args in ([os.path.join(d, "missing.db")], [bad], [example(d), bad]):
        for cmd in ("report", "audit"):
            extra = ["--max-idle-pct", "99"] if cmd == "audit" else []
            r = gt(cmd, *extra, *args)
            assert r.returncode == 2, (cmd, args, r.returncode)
            lines = [x for x in r.stderr.splitlines() if args[-1] in x and "note:" not in x]
            assert_eq(len(lines), 1, (cmd, args, r.stderr))

"""The gputrace command line: record, info, help. Runs build/gputrace on
synthetic traces (tests/make_trace.py) and on trivial commands; needs no
GPU and no real shim (record tests use a stub libgputrace.so)."""
import hashlib
import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gtlib
import make_trace as mt  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GPUTRACE = os.path.join(ROOT, "build", "gputrace")


def gt(*args, env=None, timeout=30, exe=GPUTRACE):
    return subprocess.run([exe] + list(args), capture_output=True, text=True, timeout=timeout, env=env)


def tmpdir():
    return gtlib.tmpdir("gputrace-cli-")


def example(d=None):
    return mt.make_example_trace(os.path.join(d or tmpdir(), "example.db"))


def fingerprint(path):
    st = os.stat(path)
    with open(path, "rb") as f:
        return (st.st_mtime_ns, st.st_size, hashlib.sha256(f.read()).hexdigest())


def row(out, label):
    """The count on the `label` row of the text report."""
    m = re.search(r"^%s\s+(\d+)\b" % re.escape(label), out, re.M)
    assert m, "no row %r in:\n%s" % (label, out)
    return int(m.group(1))


_stub_dirs = {}


def stub_install(layout="build"):
    """A copy of gputrace beside (build) or under PREFIX/bin with (prefix) a
    stub libgputrace.so that does nothing, so record's process handling is
    tested apart from the real shim."""
    if layout in _stub_dirs:
        return _stub_dirs[layout]
    d = tmpdir()
    if layout == "build":
        bindir = libdir = d
    else:
        bindir, libdir = os.path.join(d, "bin"), os.path.join(d, "lib")
        os.makedirs(bindir)
        os.makedirs(libdir)
    src = os.path.join(d, "stub.c")
    with open(src, "w") as f:
        f.write("int gputrace_stub;\n")
    subprocess.run(["cc", "-shared", "-fPIC", "-o", os.path.join(libdir, "libgputrace.so"), src], check=True)
    exe = os.path.join(bindir, "gputrace")
    shutil.copy(GPUTRACE, exe)
    _stub_dirs[layout] = (exe, os.path.realpath(os.path.join(libdir, "libgputrace.so")))
    return _stub_dirs[layout]


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith("GPUTRACE_") and k != "LD_PRELOAD"}
    env.update(extra)
    return env


# ---- help and version -------------------------------------------------------

def test_version():
    r = gt("--version")
    assert r.returncode == 0 and r.stdout == "gputrace 0.1.0\n", r


def test_help_forms():
    r = gt("--help")
    assert r.returncode == 0 and "record" in r.stdout and "info" in r.stdout, r
    for var in ("GPUTRACE_OUTPUT", "GPUTRACE_STACK_DEPTH", "GPUTRACE_BUFFER_EVENTS"):
        assert var in r.stdout, var
    for cmd in ("record", "info"):
        a, b = gt("help", cmd), gt(cmd, "--help")
        assert a.returncode == 0 and b.returncode == 0, (a, b)
        assert a.stdout == b.stdout and a.stdout.startswith("usage: gputrace " + cmd), a.stdout
    rec = gt("help", "record").stdout
    for s in ("GPUTRACE_OUTPUT", "%p", "%n", "%h", "%r", "GPUTRACE_STACK_DEPTH", "32",
              "GPUTRACE_BUFFER_EVENTS", "65536", "--stack-depth", "-o"):
        assert s in rec, s


def test_help_fits_80_columns():
    for args in (["--help"], ["help", "record"], ["help", "info"]):
        for line in gt(*args).stdout.splitlines():
            assert len(line) <= 80, (args, line)


def test_usage_errors_exit_2():
    for args in ([], ["frobnicate"], ["--frobnicate"], ["help", "frobnicate"], ["info"],
                 ["info", "--bogus", "x.db"], ["info", "--format", "xml", "x.db"], ["record"],
                 ["record", "--bogus", "true"], ["record", "-o"], ["record", "--stack-depth", "abc", "true"],
                 ["record", "--stack-depth", "129", "true"], ["record", "-o", "t-%q.db", "true"]):
        r = gt(*args)
        assert r.returncode == 2, (args, r)
        assert r.stdout == "", (args, r.stdout)
        assert r.stderr.strip(), args


# ---- info -------------------------------------------------------------------

def test_info_counts():
    path = example()
    r = gt("info", path)
    assert r.returncode == 0, r
    out, c = r.stdout, mt.EXAMPLE_COUNTS
    assert r.stderr == "", r.stderr
    assert "./vector_add --n 1024" in out
    assert "pid 4242" in out and "testhost" in out
    assert "18.0 us" in out, out   # 17 calls + 1 step, 1 us apart
    assert re.search(r"^status:\s+complete$", out, re.M), out
    assert "GPU times: not recorded (host-side only)" in out
    assert row(out, "API calls") == c["api_calls"]
    assert "%d failed, %d threads" % (c["failed_calls"], c["threads"]) in out
    assert row(out, "kernel launches") == c["kernel_launches"]
    assert row(out, "memcpys") == c["memcpys"]
    assert re.search(r"^  HtoD\s+2\s+2\.0 MiB$", out, re.M), out
    assert re.search(r"^  DtoH\s+1\s+1\.0 MiB$", out, re.M), out
    assert re.search(r"^  DtoD\s+1\s+4\.0 KiB$", out, re.M), out
    assert re.search(r"^memcpys\s+4\s+3\.0 MiB$", out, re.M), out
    assert re.search(r"^memsets\s+1\s+512 B$", out, re.M), out
    assert row(out, "syncs") == c["syncs"]
    assert row(out, "  device") == 2 and row(out, "  stream") == 1
    assert re.search(r"^allocations\s+2\s+3\.0 MiB, 1 free$", out, re.M), out
    assert row(out, "unique stacks") == c["unique_stacks"]
    assert row(out, "dropped events") == 0 and row(out, "dropped stacks") == 0
    assert "warning" not in out
    top = out.split("top kernels by launches:")[1].splitlines()
    assert re.match(r"\s+4\s+66\.7\s+vecAdd\(float\*, float\*, float\*, int\)$", top[2]), top
    assert re.match(r"\s+2\s+33\.3\s+reduce$", top[3]), top
    for line in out.splitlines():
        assert len(line) <= 80, line


def test_info_json():
    path = example()
    r = gt("info", "--format", "json", path)
    assert r.returncode == 0, r
    j = json.loads(r.stdout)
    c = mt.EXAMPLE_COUNTS
    for k in ("api_calls", "failed_calls", "threads", "kernel_launches", "memcpys", "memcpy_bytes",
              "memsets", "syncs", "allocations", "frees", "unique_stacks"):
        assert j[k] == c[k], (k, j[k], c[k])
    assert {k: (v["count"], v["bytes"]) for k, v in j["memcpys_by_kind"].items()} == c["memcpys_by_kind"]
    assert j["syncs_by_kind"] == c["syncs_by_kind"]
    assert [(k["name"], k["launches"]) for k in j["top_kernels"]] == c["top_kernels"]
    assert j["complete"] is True and j["pid"] == 4242 and j["duration_ns"] == 18000
    assert j["gpu_timing"] is None and j["schema_version"] == 9
    # several traces: one object per line
    r = gt("info", "--format=json", path, path)
    assert [json.loads(l)["api_calls"] for l in r.stdout.splitlines()] == [17, 17]


def test_info_top5_and_long_names():
    d = tmpdir()
    long_name = "ns::" + "very_long_template_name<" * 8 + "float" + ">" * 8 + "::kernel(int)"
    calls = []
    for i, n in enumerate([7, 6, 5, 4, 3, 2, 1]):
        calls += [mt.launch("k%d" % i)] * n
    calls += [mt.launch("_Zlong", demangled=long_name)] * 8
    path = mt.make_trace(os.path.join(d, "t.db"), calls=calls, meta={"cmdline": "prog " + "arg " * 60})
    out = gt("info", path).stdout
    top = out.split("top kernels by launches:")[1].strip().splitlines()[1:]
    assert len(top) == 5, top
    assert top[0].rstrip().endswith("..."), top[0]
    assert [l.split()[-1] for l in top[1:]] == ["k0", "k1", "k2", "k3"], top
    assert row(out, "kernel launches") == 36
    for line in out.splitlines():
        assert len(line) <= 80, line
    assert out.count("arg") == 60, out   # the command line is wrapped, not cut


def test_info_incomplete_and_dropped():
    d = tmpdir()
    path = mt.make_trace(os.path.join(d, "t.db"), calls=[mt.launch("k")] * 3, complete=False,
                         meta={"dropped_events": "12", "dropped_stacks": "3", "gpu_timing": "cupti"})
    r = gt("info", path)
    assert r.returncode == 0, r
    assert "process did not finish: trace holds what was committed before it stopped" in r.stdout
    assert "at least" in r.stdout
    assert row(r.stdout, "dropped events") == 12 and row(r.stdout, "dropped stacks") == 3
    assert "GPUTRACE_BUFFER_EVENTS" in r.stdout and r.stdout.count("warning:") == 2
    assert "GPU times: recorded with CUPTI" in r.stdout
    j = json.loads(gt("info", "--format", "json", path).stdout)
    assert j["complete"] is False and j["duration_partial"] is True and j["dropped_events"] == 12


def test_info_gpu_timing_none():
    path = mt.make_trace(os.path.join(tmpdir(), "t.db"), meta={"gpu_timing": "none"})
    assert "GPU times: not recorded (host-side only)" in gt("info", path).stdout


def test_info_crashed_wal_trace():
    """A process that died leaves its last commits in the -wal file; info
    reads them without folding the log into the trace."""
    d = tmpdir()
    path = mt.make_crashed_trace(os.path.join(d, "t.db"), calls=[mt.launch("k")] * 4 + [mt.sync("device")])
    assert os.path.getsize(path + "-wal") > 0
    before, wal_before = fingerprint(path), fingerprint(path + "-wal")
    r = gt("info", path)
    assert r.returncode == 0, r
    assert row(r.stdout, "kernel launches") == 4 and row(r.stdout, "syncs") == 1
    assert "process did not finish" in r.stdout
    assert fingerprint(path) == before and fingerprint(path + "-wal") == wal_before


def test_info_does_not_modify():
    d = tmpdir()
    path = example(d)
    os.utime(path, ns=(1_600_000_000_000_000_000, 1_600_000_000_000_000_000))
    before = fingerprint(path)
    for args in (["info", path], ["info", "--format", "json", path]):
        assert gt(*args).returncode == 0
    assert fingerprint(path) == before
    assert sorted(os.listdir(d)) == ["example.db"], os.listdir(d)
    # a read-only file is fine too
    os.chmod(path, 0o444)
    assert gt("info", path).returncode == 0
    assert fingerprint(path) == before


def _bad(path, message):
    r = gt("info", path)
    assert r.returncode == 2, (path, r)
    assert r.stdout == "", r.stdout
    assert r.stderr.startswith("gputrace: %s: " % path), r.stderr
    assert message in r.stderr, (message, r.stderr)


def test_info_missing_file():
    _bad(os.path.join(tmpdir(), "nope.db"), "no such file")


def test_info_not_sqlite():
    d = tmpdir()
    rnd = os.path.join(d, "random.db")
    with open(rnd, "wb") as f:
        f.write(os.urandom(8192))
    _bad(rnd, "not an SQLite database")
    empty = os.path.join(d, "empty.db")
    open(empty, "w").close()
    _bad(empty, "not an SQLite database")
    text = os.path.join(d, "text.db")
    with open(text, "w") as f:
        f.write("SQLite format 2 is not a thing\n" * 10)
    _bad(text, "not an SQLite database")
    _bad(d, "is a directory")


def test_info_corrupt_sqlite():
    d = tmpdir()
    path = example(d)
    with open(path, "r+b") as f:   # keep the header, wreck the rest
        f.seek(100)
        f.write(os.urandom(os.path.getsize(path) - 100))
    r = gt("info", path)
    assert r.returncode in (1, 2), r
    assert r.stderr.startswith("gputrace: %s: " % path), r.stderr


def test_info_foreign_sqlite():
    d = tmpdir()
    path = os.path.join(d, "foreign.db")
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE people(name TEXT)")
    db.commit()
    db.close()
    _bad(path, "not a gputrace trace")
    # a meta table, but someone else's
    path2 = mt.make_trace(os.path.join(d, "other.db"), meta={"tracer": "othertool"})
    _bad(path2, "not a gputrace trace")
    path3 = mt.make_trace(os.path.join(d, "none.db"), meta={"tracer": None})
    _bad(path3, "not a gputrace trace")


def test_info_schema_versions():
    d = tmpdir()
    new = mt.make_trace(os.path.join(d, "new.db"), user_version=99)
    _bad(new, "schema version 99 is newer than this gputrace supports (9); upgrade gputrace")
    old = mt.make_trace(os.path.join(d, "old.db"), user_version=0)
    _bad(old, "schema version 0")


def test_info_many_files_continue_past_errors():
    d = tmpdir()
    good = example(d)
    r = gt("info", good, os.path.join(d, "missing.db"), good)
    assert r.returncode == 2, r
    assert r.stdout.count("trace:     ") == 2, r.stdout
    assert "no such file" in r.stderr


def test_info_odd_file_names():
    d = tmpdir()
    for name in ("a?b#c%20.db", "sp ace.db", "//double"):
        path = os.path.join(d, name.strip("/"))
        mt.make_example_trace(path)
        r = gt("info", path)
        assert r.returncode == 0 and row(r.stdout, "API calls") == 17, (name, r)
    # a relative path
    r = subprocess.run([GPUTRACE, "info", "sp ace.db"], cwd=d, capture_output=True, text=True)
    assert r.returncode == 0, r


# ---- record -----------------------------------------------------------------

def test_record_exit_status():
    exe, _ = stub_install()
    # a failed command still gets record's closing line (docs/cli.md)
    r = gt("record", "sh", "-c", "exit 3", exe=exe, env=clean_env())
    assert r.returncode == 3 and r.stderr == "gputrace: no recorded calls, no trace written\n", r
    r = gt("record", "--", "false", exe=exe, env=clean_env())
    assert r.returncode == 1 and r.stderr == "gputrace: no recorded calls, no trace written\n", r
    # the command's own output untouched; record's one line after it (no CUDA here)
    r = gt("record", "--", "sh", "-c", "echo out; echo err >&2", exe=exe, env=clean_env())
    assert r.returncode == 0 and r.stdout == "out\n", r
    assert r.stderr == "err\ngputrace: no recorded calls, no trace written\n", r
    # CUDA calls, none of them one the tracer records: no trace, and it says why
    d = tmpdir()
    r = subprocess.run([GPUTRACE, "record", "-o", os.path.join(d, "t-%p.db"), gtlib.prog("unrecorded_only")],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout == "unrecorded_only: 1 device\n", r
    assert r.stderr == "gputrace: no recorded calls, no trace written\n", r
    assert os.listdir(d) == [], os.listdir(d)


def test_record_killed_by_signal():
    exe, _ = stub_install()
    r = gt("record", "sh", "-c", "kill -KILL $$", exe=exe, env=clean_env())
    assert r.returncode == 128 + 9, r
    assert r.stderr == "gputrace: sh killed by signal 9\ngputrace: no recorded calls, no trace written\n", r.stderr


def test_record_forwards_signals():
    exe, _ = stub_install()
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
        p = subprocess.Popen([exe, "record", "sleep", "30"], stderr=subprocess.PIPE, text=True,
                             preexec_fn=gtlib.default_signals,
                             env=clean_env(), start_new_session=True)
        time.sleep(0.3)
        t0 = time.monotonic()
        p.send_signal(sig)
        rc = p.wait(timeout=10)
        err = p.stderr.read()
        assert rc == 128 + sig, (sig, rc, err)
        assert err == "gputrace: sleep killed by signal %d\ngputrace: no recorded calls, no trace written\n" % sig, err
        assert time.monotonic() - t0 < 5
    # a child that handles the signal decides the exit status
    p = subprocess.Popen([exe, "record", "sh", "-c", "trap 'exit 42' TERM; while :; do sleep 0.05; done"],
                         preexec_fn=gtlib.default_signals,
                         stderr=subprocess.PIPE, text=True, env=clean_env(), start_new_session=True)
    time.sleep(0.5)
    p.send_signal(signal.SIGTERM)
    assert p.wait(timeout=10) == 42
    assert p.stderr.read() == "gputrace: no recorded calls, no trace written\n"


def test_record_missing_command():
    exe, _ = stub_install()
    r = gt("record", "no-such-command-gputrace", "x", exe=exe, env=clean_env())
    assert r.returncode == 127, r
    assert r.stderr == "gputrace: cannot run no-such-command-gputrace: No such file or directory\n", r.stderr
    r = gt("record", "/etc/passwd", exe=exe, env=clean_env())   # exists, not executable
    assert r.returncode == 126 and "cannot run /etc/passwd" in r.stderr, r


def test_record_environment():
    script = 'printf "%s|%s|%s" "$LD_PRELOAD" "${GPUTRACE_OUTPUT-unset}" "${GPUTRACE_STACK_DEPTH-unset}"'
    for layout in ("build", "prefix"):
        exe, shim = stub_install(layout)
        r = gt("record", "sh", "-c", script, exe=exe, env=clean_env())
        assert r.returncode == 0 and r.stdout == "%s|unset|unset" % shim, (layout, r)
    exe, shim = stub_install()
    out = tmpdir()  # record checks the directory exists (issue 31)
    r = gt("record", "-o", out + "/t-%p-%n-%h-%r.db", "--stack-depth", "0", "sh", "-c", script, exe=exe,
           env=clean_env(LD_PRELOAD="libfoo.so"))
    assert r.stdout == "%s:libfoo.so|%s/t-%%p-%%n-%%h-%%r.db|0" % (shim, out), r
    r = gt("record", "--output=x.db", "--stack-depth=64", "sh", "-c", script, exe=exe,
           env=clean_env(LD_PRELOAD=shim))
    assert r.stdout == "%s|x.db|64" % shim, r   # not preloaded twice
    # options after the command belong to the command
    r = gt("record", "echo", "-o", "--stack-depth", exe=exe, env=clean_env())
    assert r.returncode == 0 and r.stdout == "-o --stack-depth\n", r


def test_record_missing_shim():
    d = tmpdir()
    exe = os.path.join(d, "sub", "gputrace")
    os.makedirs(os.path.dirname(exe))
    shutil.copy(GPUTRACE, exe)
    r = gt("record", "true", exe=exe, env=clean_env())
    assert r.returncode == 2, r
    assert "cannot find libgputrace.so" in r.stderr, r.stderr


def export_view(doc):
    """An export's events, less what a GPU record kept in its call's row has
    not (its own ids: CUPTI's correlation id, the flow arrow's number)."""
    out = []
    for e in doc["traceEvents"]:
        e = json.loads(json.dumps(e))
        e.get("args", {}).pop("correlation_id", None)
        if e["ph"] in ("s", "f"):
            e.pop("id")
        out.append(e)
    return out


def test_versions_2_to_9_traces_read_the_same():
    """The same calls stored as schema version 2 wrote them (a row in calls
    plus one in its kind's table, GPU records linked through ext_corr), as
    version 3 wrote them (one events row with nine argument columns, GPU
    records in gpu_ops carrying the call's correlation id) and as version 4
    writes them (a narrower events row holding its GPU record, or gpu_ops
    rows when the record came too late), and as version 5 writes them (the
    same rows, api_names with its lib, result_names) read the same in info,
    report and export."""
    d = tmpdir()
    v2 = os.path.join(ROOT, "tests", "data", "gputrace-v2.sql")
    v3 = os.path.join(ROOT, "tests", "data", "gputrace-v3.sql")
    v4 = os.path.join(ROOT, "tests", "data", "gputrace-v4.sql")
    v5 = os.path.join(ROOT, "tests", "data", "gputrace-v5.sql")
    v6 = os.path.join(ROOT, "tests", "data", "gputrace-v6.sql")
    v7 = os.path.join(ROOT, "tests", "data", "gputrace-v7.sql")
    v8 = os.path.join(ROOT, "tests", "data", "gputrace-v8.sql")
    calls = [mt.launch("k%d" % (i % 3), stack=[("/bin/app", "f%d" % (i % 2))], stream=i % 2,
                       pystack=[("train.py", "step", 10 + i % 4)] if i % 2 else None) for i in range(12)]
    calls += [mt.memcpy("HtoD", 4096 << i, host_mem="pinned" if i % 2 else "pageable", is_async=i % 2 == 1,
                        stack=[("/bin/app", "load")]) for i in range(4)]
    calls += [mt.memcpy("DtoH", 1 << 20), mt.memset(512, is_async=True), mt.sync("stream", target=7),
              mt.sync("device"), mt.alloc(1 << 20), mt.alloc(4096, kind="pinned"), mt.free(),
              mt.launch("failed", result=1)]
    out = {}
    for name, version, schema, fold in (("v2", 2, v2, True), ("v3", 3, v3, True), ("v4", 4, v4, True),
                                        ("v4-gpu_ops", 4, v4, False), ("v5", 5, v5, True),
                                        ("v5-gpu_ops", 5, v5, False), ("v6", 6, v6, True),
                                        ("v6-gpu_ops", 6, v6, False), ("v7", 7, v7, True),
                                        ("v7-gpu_ops", 7, v7, False), ("v8", 8, v8, True),
                                        ("v8-gpu_ops", 8, v8, False), ("v9", 9, mt.SCHEMA, True),
                                        ("v9-gpu_ops", 9, mt.SCHEMA, False)):
        path = mt.make_trace(os.path.join(d, name + ".db"), calls=calls, schema=schema)
        db = sqlite3.connect(path)
        for i, (cid,) in enumerate(db.execute("SELECT call_id FROM launch_args ORDER BY call_id").fetchall()[:8]):
            end = mt.START_NS + mt.STEP_NS * cid + mt.CALL_NS
            mt.add_gpu_op(db, "kernel", cid, end + 100, end + 100 + 1000 * (i + 1), fold=fold)
        for i, (cid, host, nbytes) in enumerate(db.execute("SELECT call_id, host_mem, bytes FROM copy_args "
                                                           "ORDER BY call_id").fetchall()):
            end = mt.START_NS + mt.STEP_NS * cid + mt.CALL_NS
            # the first copy's GPU record says pinned where the call guessed pageable
            src = 2 if host == "pinned" or i == 0 else 1
            mt.add_gpu_op(db, "memcpy", cid, end + 50, end + 50 + 3000, src_kind=src, dst_kind=3, nbytes=nbytes,
                          fold=fold)
        mt.add_gpu_op(db, "kernel", None, mt.START_NS + 3000, mt.START_NS + 9000)  # not intercepted
        db.execute("INSERT OR REPLACE INTO meta VALUES ('gpu_timing', 'cupti')")
        db.commit()
        db.close()
        gtlib.assert_eq(gtlib.query(path, "PRAGMA user_version")[0][0], version)
        info = json.loads(gt("info", "--format", "json", path).stdout)
        gtlib.assert_eq(info.pop("schema_version"), version)
        info.pop("path")
        # native frames and how many have lines: counted since version 6 (here none has a line)
        frames = (info.pop("native_frames"), info.pop("native_frames_with_lines"))
        gtlib.assert_eq(frames, (len(gtlib.query(path, "SELECT * FROM frames")), 0) if version >= 6 else (None, None))
        report = gt("report", "--format", "json", path)
        gtlib.assert_eq(report.returncode, 0, report.stderr)
        export = gt("export", "--format", "chrome-json", path)
        gtlib.assert_eq(export.returncode, 0, export.stderr)
        rep = json.loads(report.stdout)
        gtlib.assert_eq([x.pop("schema_version") for x in rep["traces"]], [version])
        out[name] = (info, rep, json.loads(export.stdout))
        gtlib.assert_eq(info["kernel_launches"], 13)
        gtlib.assert_eq(info["allocations"], 2)
        gtlib.assert_eq(len(gtlib.query(path, "SELECT * FROM gpu_activity WHERE linked = 1")), 8 + 5)
        gtlib.assert_eq(gtlib.query(path, "SELECT count(*) FROM memcpys WHERE host_mem = 'pinned'")[0][0], 3)
    for name in ("v3", "v4", "v4-gpu_ops", "v5", "v5-gpu_ops", "v6", "v6-gpu_ops", "v7", "v7-gpu_ops", "v8",
                 "v8-gpu_ops", "v9", "v9-gpu_ops"):
        gtlib.assert_eq(out[name][0], out["v2"][0], "info " + name)
        gtlib.assert_eq(json.dumps(out[name][1], sort_keys=True).replace(name + ".db", "v2.db"),
                        json.dumps(out["v2"][1], sort_keys=True), "report " + name)
        for x, y in zip(export_view(out[name][2]), export_view(out["v2"][2])):
            gtlib.assert_eq(x, y, "export event " + name)
        gtlib.assert_eq(export_view(out[name][2]), export_view(out["v2"][2]), "export " + name)


def test_typo_gets_did_you_mean():
    for typo, want in (("reprot", "report"), ("rcord", "record"), ("exprot", "export"), ("adit", "audit")):
        r = subprocess.run([GPUTRACE, typo, "x.db"], capture_output=True, text=True)
        gtlib.assert_eq(r.returncode, 2, typo)
        gtlib.assert_eq(r.stderr, "gputrace: unknown command '%s'; did you mean '%s'?\n" % (typo, want))
    r = subprocess.run([GPUTRACE, "frobnicate"], capture_output=True, text=True)
    gtlib.assert_eq(r.returncode, 2)
    assert r.stderr.startswith("gputrace: unknown command 'frobnicate'\nusage:"), r.stderr

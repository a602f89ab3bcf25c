"""Host samples (issue 20): the sampler thread's records, joined to the
GPU's idle gaps by the report, on workloads whose answers are set here:
how long each named function holds the host while the GPU waits.

Every share the report prints is recomputed by plain SQL over the public
views (gaps from gpu_activity, the launching thread from api_calls, the
samples from host_samples and py_stack_frames), written apart from the C
analyzer; and the planted answer (equal stalls) bounds both."""
import json
import os
import subprocess
import sys

import gtlib
from gtlib import GPUTRACE, assert_eq, prog, query, run_plain, run_traced
import oracle
import test_python as tp

MS = 1_000_000
WORK = ("launch", "memcpy", "memset", "graph_launch")
# time.sleep: clock_nanosleep from 3.11, select (pselect6) on no
# descriptors before, which the sampler names apart from I/O
SLEEPS = ("clock_nanosleep", "nanosleep", "pselect6 (no fds)", "select (no fds)")


def report_json(db, *args):
    r = subprocess.run([GPUTRACE, "report", "--format", "json", "--top", "0", "--min-gap", "10ms"] + list(args)
                       + [db], capture_output=True, text=True, timeout=120)
    assert_eq(r.returncode, 0, r.stderr)
    return json.loads(r.stdout)


def sql_gaps(db, min_gap):
    """Gaps between the merged GPU intervals, and before the first and
    after the last within the traced span (first call to last end), at
    least min_gap long."""
    iv = query(db, "SELECT start_ns, end_ns FROM gpu_activity WHERE end_ns > start_ns ORDER BY start_ns")
    s0, s1 = query(db, "SELECT min(start_ns), max(end_ns) FROM (SELECT start_ns, end_ns FROM api_calls "
                       "UNION ALL SELECT start_ns, end_ns FROM gpu_activity)")[0]
    edges = [s0] + [x for m in oracle.union(iv) for x in m] + [s1]
    return [(a, b) for a, b in zip(edges[::2], edges[1::2]) if b - a >= min_gap]


def gap_thread(db, s, e):
    """The thread that made the last GPU-work call started inside the gap
    [s, e] (the one whose samples tell what the host did), or None."""
    row = query(db, "SELECT tid FROM api_calls WHERE category IN (%s) AND start_ns BETWEEN ? AND ? "
                    "ORDER BY start_ns DESC LIMIT 1" % ",".join("'%s'" % w for w in WORK), s, e)
    return row[0][0] if row else None


def sql_shares(db, min_gap=10 * MS):
    """{(function, line, state): idle ns} and the gaps' total: each gap's
    time split among the samples of the thread that made the last
    GPU-work call started inside it."""
    out, total = {}, 0
    for s, e in sql_gaps(db, min_gap):
        total += e - s
        tid = gap_thread(db, s, e)
        if tid is None:
            continue
        smp = query(db, "SELECT h.state, h.syscall, f.function, f.line FROM host_samples h "
                        "LEFT JOIN py_stack_frames f ON f.pystack_id = h.pystack_id AND f.depth = 0 "
                        "WHERE h.tid = ? AND h.ns BETWEEN ? AND ?", tid, s, e)
        for state, sc, fn, line in smp:
            key = (fn, line, sc if state == "syscall" else state)
            out[key] = out.get(key, 0) + (e - s) / len(smp)
    return out, total


def test_python_loop_names_each_stall_with_its_share():
    """nap() sleeps, crunch() computes, wait_pipe() blocks reading a pipe,
    STALL_MS each, between launches: each named with its line and about a
    third of the idle time, under every CPython found."""
    m = tp.markers("host_stalls.py")
    steps, stall = 3, 120
    for minor in sorted(tp.supported()):
        run = tp.run_py(minor, "host_stalls.py", steps, stall)
        db = run.trace
        assert_eq(run.proc.stdout, "host_stalls: done\n")
        meta = dict(query(db, "SELECT key, value FROM meta WHERE key LIKE 'sample%'"))
        assert_eq(meta["sample_hz"], "100")
        assert_eq(meta["sample_native_stacks"], "blocked_unwound")
        assert int(meta["samples_taken"]) > 0, meta
        shares, total = sql_shares(db)
        assert total >= 3 * steps * stall * MS * 0.95, total
        want = {"nap": ("nap", m["nap"], SLEEPS), "crunch": ("crunch", m["crunch"], ("running",)),
                "wait_pipe": ("wait_pipe", m["wait_pipe"], ("read",))}
        doc = report_json(db)
        rows = {r["stack"]: r for r in doc["idle_by_host_stack"]}
        for name, (fn, line, states) in want.items():
            # the function and line, whatever the thread's state in it
            share = sum(v for k, v in shares.items() if k[0] == fn and k[1] == line) / total
            assert abs(share - 1 / 3) <= 0.10, (minor, name, share, shares)
            # mostly in the state its code puts it in
            main = sum(v for k, v in shares.items() if k[0] == fn and k[1] == line and k[2] in states) / total
            assert main >= share * 0.6, (minor, name, main, shares)
            # the report's figure and the SQL's, from the same samples
            head = "host_stalls.py:%d in %s (" % (line, fn)
            rep = sum(r["pct"] for t, r in rows.items() if t.startswith(head)) / 100
            assert abs(rep - share) <= 0.01, (minor, name, rep, share, sorted(rows))
        # each gap: one function for nearly all of its samples, and what it was doing
        gaps = [g for g in doc["idle_gaps"] if g["cause"] == "host"]
        assert len(gaps) >= 3 * steps - 1, gaps
        state = {"nap": ("sleeping",), "crunch": ("running Python",),
                 "wait_pipe": ("blocked in I/O",)}
        for g in gaps:
            top = g["host"]["stacks"][0]
            fn = [f for f in want if "py:%d in %s (" % (want[f][1], f) in top["stack"]]
            assert fn, g["host"]
            # the rest is the launch and sync around the stall (slow under sanitizers)
            assert top["pct"] >= 50, g["host"]
            assert g["host"]["state"] in state[fn[0]], g["host"]
        # the text report says it the same way
        text = subprocess.run([GPUTRACE, "report", "--min-gap", "10ms", db], capture_output=True, text=True).stdout
        assert "host during the gap" in text and "GPU idle by host stack" in text, text
        assert "host_stalls.py:%d in wait_pipe (blocked in read)" % m["wait_pipe"] in text, text


def test_c_program_busy_loop_and_sleep():
    """spin() busy-loops, nap() sleeps and drain() reads a pipe between
    launches: the sleep and the read are named by their blocked system
    call and the program's function they block in (the blocked thread's
    stack unwound past libc), the busy loop as running (no signal is sent,
    so a running thread's native stack is not read: docs/report.md)."""
    run = run_traced([prog("host_wait"), "3", "100"])
    assert_eq(run.proc.returncode, 0, run.proc.stderr)
    db = run.trace
    doc = report_json(db)
    rows = {r["stack"]: r for r in doc["idle_by_host_stack"]}
    sleep = [t for t in rows if "(blocked in clock_nanosleep)" in t or "(blocked in nanosleep)" in t]
    read = [t for t in rows if "(blocked in read)" in t]
    running = [t for t in rows if t.endswith("(running)")]
    assert sleep and read and running, sorted(rows)
    assert all(t.split(" (")[0].endswith(" in nap") for t in sleep), sleep
    # (under the sanitized suite the ASan runtime's read interceptor, which
    # jumps to a part of itself that keeps its frame through rbp, ends the
    # walk: the sampler takes no guess it cannot check)
    if os.environ.get("GPUTRACE_TEST_SANITIZER") != "asan":
        assert all(t.split(" (")[0].endswith(" in drain") for t in read), read
    shares, total = sql_shares(db)
    for pick, st in ((sleep, ("clock_nanosleep", "nanosleep")), (read, ("read",)), (running, ("running",))):
        sq = sum(v for k, v in shares.items() if k[2] in st) / total
        rep = sum(rows[t]["pct"] for t in pick) / 100
        assert abs(sq - 1 / 3) <= 0.10, (st, sq)
        assert abs(rep - sq) <= 0.01, (st, rep, sq)


def _fn_range(name):
    """A function's addresses in host_wait, from its symbol table (nm),
    not from the tracer: [start, end) as offsets in the file (PIE)."""
    out = subprocess.run(["nm", "-S", prog("host_wait")], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        f = line.split()
        if len(f) == 4 and f[3] == name:
            return int(f[0], 16), int(f[0], 16) + int(f[1], 16)
    raise AssertionError("no %s in host_wait's symbols" % name)


def _spin_range():
    return _fn_range("spin")


def test_c_busy_loop_named_with_perf():
    """GPUTRACE_SAMPLE_NATIVE=perf: a running thread's native stack comes
    from a perf event on it, so the busy loop is named, in its gaps and in
    the idle-by-host-stack table: the samples named by a frame that lies
    in spin() (its address range from nm) hold about a third of the idle
    time, and the report says the same; the program is unchanged."""
    argv = [prog("host_wait"), "3", "100"]
    plain = run_plain(argv)
    run = run_traced(argv, env={"GPUTRACE_SAMPLE_NATIVE": "perf"})
    assert_eq((run.proc.returncode, run.proc.stdout), (plain.returncode, plain.stdout), run.proc.stderr)
    assert "GPUTRACE_SAMPLE_NATIVE" not in run.proc.stderr, run.proc.stderr
    db = run.trace
    assert_eq(run.q1("SELECT value FROM meta WHERE key = 'sample_native_stacks'"), "perf_callchain")
    lo, hi = _spin_range()
    # idle time by sample, as sql_shares splits it, keyed by whether the
    # frame the sample is named by is in spin()
    total, in_spin = 0, 0
    for s, e in sql_gaps(db, 10 * MS):
        total += e - s
        tid = gap_thread(db, s, e)
        if tid is None:
            continue
        # the frame a sample is named by: its innermost outside the
        # system's libraries (docs/report.md), so a sample taken in libc's
        # clock_gettime called from spin() counts as spin's
        smp = query(db, "SELECT h.state, f.module, f.offset FROM host_samples h "
                        "LEFT JOIN stack_frames f ON f.stack_id = h.stack_id AND f.depth = "
                        "(SELECT min(g.depth) FROM stack_frames g WHERE g.stack_id = h.stack_id "
                        "AND g.module NOT LIKE '/lib/%' AND g.module NOT LIKE '/lib64/%' "
                        "AND g.module NOT LIKE '/usr/lib/%' AND g.module NOT LIKE '/usr/lib64/%') "
                        "WHERE h.tid = ? AND h.ns BETWEEN ? AND ?", tid, s, e)
        for state, mod, off in smp:
            if state == "running" and mod and os.path.basename(mod) == "host_wait" and lo <= off < hi:
                in_spin += (e - s) / len(smp)
    share = in_spin / total
    # a third of the idle time spins; a round that finds no perf sample
    # of the thread since the last one (the two clocks' phases) reads
    # "(no stack)", so somewhat less is named
    assert 1 / 3 - 0.10 <= share <= 1 / 3 + 0.02, share
    doc = report_json(db)
    rows = {r["stack"]: r for r in doc["idle_by_host_stack"]}
    spin = [t for t in rows if " in spin (running)" in t]
    assert spin, sorted(rows)
    assert abs(sum(rows[t]["pct"] for t in spin) / 100 - share) <= 0.01, (spin, share, sorted(rows))
    # each spin gap: spin() is its top stack
    tops = [g["host"]["stacks"][0] for g in doc["idle_gaps"] if g["cause"] == "host" and g["host"]
            and g["host"]["state"] == "running native code"]
    assert_eq(len(tops), 3, doc["idle_gaps"])
    for t in tops:
        assert " in spin (running)" in t["stack"] and t["pct"] >= 50, t
    text = subprocess.run([GPUTRACE, "report", "--min-gap", "10ms", db], capture_output=True, text=True).stdout
    assert "in spin (running)" in text.split("GPU idle by host stack")[1], text
    # host_wait keeps frame pointers (tests/tests.mk): the callchain goes
    # on from spin() to main()
    mlo, mhi = _fn_range("main")
    chains = {}
    for sid, depth, mod, off in query(db, "SELECT f.stack_id, f.depth, f.module, f.offset FROM stack_frames f "
                                          "WHERE f.stack_id IN (SELECT stack_id FROM host_samples "
                                          "WHERE state = 'running') ORDER BY f.stack_id, f.depth"):
        ours = mod and os.path.basename(mod) == "host_wait"
        chains.setdefault(sid, []).append("spin" if ours and lo <= off < hi else "main" if ours and mlo <= off < mhi
                                          else "other")
    spun = [c for c in chains.values() if c[0] == "spin"]
    assert spun, chains
    assert all("main" in c[1:] for c in spun), spun


def test_perf_refused_falls_back():
    """Where perf_event_open is refused (a seccomp filter returning EPERM,
    as a container's profile does: tests/progs/no_perf), the sampler goes
    on as by default: meta says blocked_unwound, running samples have no
    native stack, blocked ones keep theirs (unwound); silent with
    auto, one line when perf was asked for by name; the program is
    unchanged."""
    argv = [prog("host_wait"), "2", "60"]
    plain = run_plain(argv)
    for mode, lines in (("auto", 0), ("perf", 1)):
        run = run_traced([prog("no_perf")] + argv, env={"GPUTRACE_SAMPLE_NATIVE": mode})
        assert_eq((run.proc.returncode, run.proc.stdout), (plain.returncode, plain.stdout), run.proc.stderr)
        said = [l for l in run.proc.stderr.splitlines() if "GPUTRACE_SAMPLE_NATIVE" in l]
        assert_eq(len(said), lines, run.proc.stderr)
        if lines:
            assert said[0].startswith("gputrace: GPUTRACE_SAMPLE_NATIVE=perf: perf events refused"), said
        assert_eq(run.q1("SELECT value FROM meta WHERE key = 'sample_native_stacks'"), "blocked_unwound")
        assert run.q1("SELECT count(*) FROM host_samples WHERE state = 'running'") > 0
        assert_eq(run.q1("SELECT count(stack_id) FROM host_samples WHERE state = 'running'"), 0)
        assert run.q1("SELECT count(stack_id) FROM host_samples WHERE state = 'syscall'") > 0
    # the same command allowed perf: the filter, not the machine, refused it
    run = run_traced(argv, env={"GPUTRACE_SAMPLE_NATIVE": "auto"})
    assert_eq(run.q1("SELECT value FROM meta WHERE key = 'sample_native_stacks'"), "perf_callchain")
    assert run.q1("SELECT count(stack_id) FROM host_samples WHERE state = 'running'") > 0


def test_program_unchanged_by_sampling():
    """Output, exit status and the program's own nanosleep/read (no EINTR,
    no early return: checked by host_wait itself) are the same with the
    sampler at its fastest and with it off, and untraced."""
    argv = [prog("host_wait"), "2", "30", "2"]
    plain = run_plain(argv)
    off = run_traced(argv, env={"GPUTRACE_SAMPLE_HZ": "0"})
    fast = run_traced(argv, env={"GPUTRACE_SAMPLE_HZ": "1000", "GPUTRACE_SAMPLE_THREADS": "all"})
    perf = run_traced(argv, env={"GPUTRACE_SAMPLE_HZ": "1000", "GPUTRACE_SAMPLE_THREADS": "all",
                                 "GPUTRACE_SAMPLE_NATIVE": "perf"})
    assert_eq(perf.q1("SELECT value FROM meta WHERE key = 'sample_native_stacks'"), "perf_callchain")
    for r in (off.proc, fast.proc, perf.proc):
        assert_eq((r.returncode, r.stdout), (plain.returncode, plain.stdout), r.stderr)
    assert_eq(plain.returncode, 0, plain.stderr)
    assert_eq(off.q1("SELECT count(*) FROM samples"), 0)
    assert_eq(off.q1("SELECT value FROM meta WHERE key = 'sample_native_stacks'"), "off")
    assert fast.q1("SELECT count(*) FROM samples") > 50
    # all threads: the helper threads that feed the pipe (never calling CUDA) are sampled too
    tids = {r[0] for r in fast.q("SELECT DISTINCT tid FROM samples")}
    assert len(tids) >= 2, tids


def test_threads_start_and_end_while_sampled():
    """Threads that call CUDA and end, many times over, while the sampler
    runs at 1000 Hz: nothing torn is followed, every sample names a thread
    of the process, and the program is unchanged; with perf events too
    (each opened on a thread's first round, closed when it ends)."""
    # the threads that called CUDA alone (GPUTRACE_SAMPLE_THREADS=cuda): every
    # sample is then of one of them
    for env in ({"GPUTRACE_SAMPLE_HZ": "1000"}, {"GPUTRACE_SAMPLE_HZ": "1000", "GPUTRACE_SAMPLE_NATIVE": "perf"}):
        env["GPUTRACE_SAMPLE_THREADS"] = "cuda"
        run = run_traced([prog("host_wait"), "4", "15", "8"], env=env)
        assert_eq(run.proc.returncode, 0, run.proc.stderr)
        meta = dict(run.q("SELECT key, value FROM meta WHERE key LIKE 'sample%'"))
        assert int(meta["samples_taken"]) > 50, meta
        call_tids = {r[0] for r in run.q("SELECT DISTINCT tid FROM calls")}
        assert len(call_tids) >= 9, call_tids
        sample_tids = {r[0] for r in run.q("SELECT DISTINCT tid FROM samples")}
        assert sample_tids <= call_tids, (sample_tids, call_tids)
        assert_eq(run.q1("SELECT count(*) FROM samples WHERE tid NOT IN (SELECT tid FROM threads)"), 0)


def test_fork_child_samples_its_own_threads():
    """A fork child that calls CUDA gets its own trace, whose samples are of
    its own thread (the sampler thread did not come across the fork; the
    child starts its own). With perf events, the child opens its own: its
    busy loop is found in spin() (address range from nm) too."""
    lo, hi = _spin_range()
    for env in ({}, {"GPUTRACE_SAMPLE_NATIVE": "perf"}):
        run = run_traced([prog("host_wait"), "1", "40", "0", "1"], env=env)
        assert_eq(run.proc.returncode, 0, run.proc.stderr)
        traces = run.traces
        assert_eq(len(traces), 2, traces)
        for db in traces:
            pid = int(query(db, "SELECT value FROM meta WHERE key = 'pid'")[0][0])
            tids = {r[0] for r in query(db, "SELECT DISTINCT tid FROM samples")}
            # every thread is sampled: the process's own (its main thread
            # among them), none of the other process's
            assert pid in tids, (db, tids)
            others = [t for o in traces if o != db
                      for t in [int(query(o, "SELECT value FROM meta WHERE key = 'pid'")[0][0])]]
            assert not tids & set(others), (db, tids, others)
            assert_eq(query(db, "SELECT count(*) FROM samples WHERE tid NOT IN (SELECT tid FROM threads)")[0][0], 0, db)
            # the child slept and read a pipe too: its samples show it
            states = {r[0] for r in query(db, "SELECT DISTINCT syscall FROM host_samples WHERE syscall IS NOT NULL")}
            assert "read" in states, (db, states)
            if env:
                offs = query(db, "SELECT f.module, f.offset FROM host_samples h JOIN stack_frames f "
                                 "ON f.stack_id = h.stack_id AND f.depth = 0 WHERE h.state = 'running'")
                assert any(os.path.basename(m) == "host_wait" and lo <= o < hi for m, o in offs), (db, offs)


def _sampler_threads(pid):
    out = 0
    for t in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/comm" % (pid, t)) as f:
                out += f.read().strip() == "gt-sampler"
        except OSError:
            pass
    return out


def test_standby_samples_only_inside_windows():
    """GPUTRACE_MODE=standby: no sampler thread outside a window; a
    window's trace holds samples from inside it only."""
    import time
    import test_standby as ts
    d = gtlib.tmpdir()
    p = ts._start(3.0, d)
    assert_eq(_sampler_threads(p.pid), 0, "a sampler before any window")
    r = ts._trigger(d, "--duration", "500ms", str(p.pid))
    assert_eq(r.returncode, 0, r.stderr)
    time.sleep(0.1)
    assert_eq(_sampler_threads(p.pid), 0, "a sampler after the window closed")
    out, err = p.communicate(timeout=60)
    assert_eq(p.returncode, 0, "the program's sleeps were never cut short: %s" % err)
    w1 = os.path.join(d, "t-%d-w1.db" % p.pid)
    m = dict(query(w1, "SELECT key, value FROM meta"))
    ws, we = int(m["window_start_ns"]), int(m["window_end_ns"])
    n, lo, hi = query(w1, "SELECT count(*), min(ns), max(ns) FROM samples")[0]
    assert n >= 20, n  # 100 Hz over 500 ms
    assert ws <= lo and hi <= we, (ws, lo, hi, we)


def test_bad_settings_warn_and_fall_back():
    for name, value, msg in (("GPUTRACE_SAMPLE_HZ", "5000", "is not a whole number from 0 to 1000; using 100"),
                             ("GPUTRACE_SAMPLE_HZ", "fast", "is not a whole number from 0 to 1000; using 100"),
                             ("GPUTRACE_SAMPLE_THREADS", "some", "is not 'cuda' or 'all'; using all"),
                             ("GPUTRACE_SAMPLE_NATIVE", "signal",
                              "is not 'blocked', 'perf' or 'auto'; using blocked")):
        run = run_traced([prog("host_wait"), "1", "20"], env={name: value})
        assert_eq(run.proc.returncode, 0, run.proc.stderr)
        assert ("gputrace: %s='%s' %s" % (name, value, msg)) in run.proc.stderr, run.proc.stderr
        assert_eq(run.q1("SELECT value FROM meta WHERE key = 'sample_hz'"), "100")


def test_older_traces_have_no_host_section():
    db = run_traced([prog("rt_basic")], env={"GPUTRACE_SAMPLE_HZ": "0"}).trace
    doc = report_json(db)
    assert_eq(doc["idle_by_host_stack"], [])
    assert all(g["host"] is None for g in doc["idle_gaps"]), doc["idle_gaps"]


def test_audit_max_idle_host_stack():
    run = run_traced([prog("host_wait"), "2", "60"])
    db = run.trace
    shares, total = sql_shares(db)
    read = sum(v for k, v in shares.items() if k[2] == "read") / total * 100

    def audit(*args):
        return subprocess.run([GPUTRACE, "audit", "--min-gap", "10ms"] + list(args) + [db], capture_output=True,
                              text=True)
    ok = audit("--max-idle-host-stack", "(blocked in read)=%d" % (read + 5))
    assert_eq(ok.returncode, 0, ok.stdout + ok.stderr)
    assert ok.stdout.startswith("ok   max-idle-host-stack '(blocked in read)': "), ok.stdout
    bad = audit("--max-idle-host-stack", "*blocked in read*=%d" % max(read - 5, 0))
    assert_eq(bad.returncode, 1, bad.stdout + bad.stderr)
    assert bad.stdout.startswith("FAIL"), bad.stdout
    got = float(bad.stdout.split(": ")[1].split("%")[0])
    assert abs(got - read) <= 1.0, (got, read)
    assert_eq(audit("--max-idle-host-stack", "no-equals").returncode, 2)
    nosamp = run_traced([prog("host_wait"), "1", "20"], env={"GPUTRACE_SAMPLE_HZ": "0"}).trace
    r = subprocess.run([GPUTRACE, "audit", "--max-idle-host-stack", "x=5", nosamp], capture_output=True, text=True)
    assert_eq(r.returncode, 2, r.stdout)
    assert "needs host samples" in r.stderr, r.stderr

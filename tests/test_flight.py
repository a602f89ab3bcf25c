"""The flight recorder (GPUTRACE_FLIGHT, docs/standby.md) and the size bound
(GPUTRACE_MAX_SIZE): a window starts with what the rings held before its
trigger, so it holds the slow step that fired it, the calls before a crash
and the collective a hung rank is stuck in. Truth is the program's own log
of every CUDA call it made (tests/progs/flight_steps.c, one line written as
each call ends) and the simulated GPU's log of the kernels it ran
(FAKECUDA_LOG), on the trace's clock."""
import os
import re
import signal
import subprocess
import time

from gtlib import GPUTRACE, SANITIZED, SHIM, assert_eq, base_env, prog, query, sanitizer_runtime, tmpdir


def _preload(env, crash=False):
    """The shim, or under GPUTRACE_TEST_SANITIZER its sanitized build behind
    its runtime (tests/test_sanitized_suite.py); a sanitizer's own SIGSEGV
    handler is off for the crash, so the process dies as untraced. NVTX
    finds the shim with LD_PRELOAD alone (it names itself NVTX's tool)."""
    kind = os.environ.get("GPUTRACE_TEST_SANITIZER")
    if not kind:
        env["LD_PRELOAD"] = SHIM
        return env
    env["LD_PRELOAD"] = "%s %s" % (sanitizer_runtime(kind), SANITIZED[kind][0])
    env["ASAN_OPTIONS"] = "detect_leaks=0:abort_on_error=0:exitcode=99" + (":handle_segv=0" if crash else "")
    env["UBSAN_OPTIONS"] = "halt_on_error=1:exitcode=99:print_stacktrace=1"
    env["TSAN_OPTIONS"] = "exitcode=99:halt_on_error=0" + (":handle_segv=0" if crash else "")
    return env


def _env(d, extra, crash=False):
    env = base_env({"GPUTRACE_MODE": "standby", "GPUTRACE_CONTROL_DIR": os.path.join(d, "ctl"),
                    "GPUTRACE_OUTPUT": os.path.join(d, "t-%p.db"), "FAKECUDA_LOG": os.path.join(d, "gpu.log")})
    env.update(extra)
    return _preload({k: v for k, v in env.items() if v is not None}, crash)


def _log(path):
    """(calls, steps): calls as (step, name, t0, t1), t1 0 for a call logged
    on entry and never seen to end; steps as {i: (t0, t1)}."""
    calls, steps, entered = [], {}, {}
    with open(path) as f:
        for line in f:
            w = line.split()
            if w[0] == "call" and len(w) == 6:  # "enter": replaced by its end line if it came
                entered[(int(w[1]), w[2])] = (int(w[1]), w[2], int(w[3]), 0)
            elif w[0] == "call":
                entered.pop((int(w[1]), w[2]), None)
                calls.append((int(w[1]), w[2], int(w[3]), int(w[4])))
            elif w[0] == "step":
                steps[int(w[1])] = (int(w[2]), int(w[3]))
    return calls + list(entered.values()), steps


def _meta(db):
    return dict(query(db, "SELECT key, value FROM meta"))


def _dbs(d):
    return sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith(".db"))


def _traced(db):
    """The trace's calls as (api name or kernel name, start, end, result),
    by start."""
    return query(db, "SELECT CASE WHEN a.category = 'launch' THEN (SELECT s.value FROM launch_args l "
                     "JOIN strings s ON s.id = l.name_id WHERE l.call_id = a.id) ELSE a.name END, "
                     "a.start_ns, a.end_ns, a.result FROM api_calls a ORDER BY a.start_ns")


def _check_exact(db, calls, ws, we):
    """Each call the program made wholly inside [ws, we] is in the trace
    once, by name, inside its own log interval; the trace holds nothing
    else (calls still running at the window's end: result -1)."""
    traced = _traced(db)
    want = [c for c in calls if c[3] and c[2] >= ws and c[3] <= we]
    done = [t for t in traced if t[3] != -1]
    for step, name, t0, t1 in want:
        hit = [t for t in done if t[0] == name and t0 <= t[1] <= t[2] <= t1]
        assert_eq(len(hit), 1, "call %s of step %d (%d..%d) in the trace once" % (name, step, t0, t1))
    # and nothing more: every traced call that ended is one the program
    # logged, at most one straddling each edge (docs/standby.md, What a
    # window holds)
    seen = set()
    for name, s, e, _ in done:
        hit = [c for c in calls if c[1] == name and c[2] <= s and c[3] and e <= c[3]]
        assert_eq(len(hit), 1, "traced %s at %d is one of the program's" % (name, s))
        assert hit[0] not in seen, hit
        seen.add(hit[0])
        assert hit[0][3] >= ws and hit[0][2] <= we, ("outside the window", hit[0], ws, we)
    assert len(done) - len(want) <= 2, (len(done), len(want))
    return traced


def _gpu_kernels(d):
    with open(os.path.join(d, "gpu.log")) as f:
        return [line.split()[1] for line in f if line.startswith("kernel ")]


def _dur_ns(text):
    v, unit = text.split()
    return float(v) * {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}[unit]


def test_window_holds_the_slow_step():
    # 60 steps of 20 ms; step 40 alone launches marker_kernel and takes 24x
    # the median. The rule (8x, as tests/test_standby.py: a loaded machine
    # stretches 20 ms, not to 160) fires at step 40's end; before the flight
    # recorder the window began there, without one call of step 40.
    d = tmpdir()
    env = _env(d, {"GPUTRACE_FLIGHT": "30s", "GPUTRACE_TRIGGER": "step-time>8x",
                   "GPUTRACE_TRIGGER_DURATION": "300ms"})
    log = os.path.join(d, "log")
    r = subprocess.run([prog("flight_steps"), "60", "20", "40", "480", log, "run"], env=env, capture_output=True,
                       text=True, timeout=120)
    assert_eq((r.returncode, r.stdout, r.stderr), (0, "ready\n", ""))
    calls, steps = _log(log)
    dbs = _dbs(d)
    assert_eq(len(dbs), 1, dbs)
    m = _meta(dbs[0])
    ws, we = int(m["window_start_ns"]), int(m["window_end_ns"])
    assert m["window_trigger"].startswith("step-time>8x: a step of "), m["window_trigger"]
    # the issue: the window opened after the slow step, without one of its calls
    assert_eq([t[0] for t in _traced(dbs[0])].count("marker_kernel"), 1, "step 40's marker launch")
    fired = int(m["trigger_ns"])
    # the rule fires at step 40's pop, inside the program's own stamps around it
    s0, s1 = steps[40]
    assert s0 + 480e6 <= fired <= s1 + 1e9, (s0, s1, fired)
    assert fired < we
    traced = _check_exact(dbs[0], calls, ws, we)
    assert_eq(traced[0][0], "cudaMalloc", "the history reaches back to the first call (30s asked, the run is 2 s)")
    # step 40's calls, exactly: its two launches, marker_kernel once
    mine = [c for c in calls if c[0] == 40]
    assert_eq([c[1] for c in mine], ["step_kernel", "marker_kernel"])
    assert_eq([t[0] for t in traced].count("marker_kernel"), 1)
    # the simulated GPU ran the same kernels in the same order, the window's
    # launches a prefix of them (the program ran on after the window closed)
    gpu = _gpu_kernels(d)
    names = [t[0] for t in traced if t[0] and t[0].endswith("_kernel")]
    assert_eq(gpu[:len(names)], names, "the GPU's kernels, in order")
    assert_eq(gpu.count("marker_kernel"), 1)
    # step 40's NVTX range is in the trace with the program's own bounds around it
    rng = query(dbs[0], "SELECT start_ns, end_ns FROM ranges WHERE name = 'train_step' ORDER BY start_ns")
    r40 = [x for x in rng if x[1] is not None and s0 <= x[0] and x[1] <= s1]
    assert_eq(len(r40), 1, "step 40's range")
    # the report says where the trigger fired within the window, and how
    # long the window is, as meta says
    rep = subprocess.run([GPUTRACE, "report", dbs[0]], capture_output=True, text=True, timeout=60)
    assert_eq(rep.returncode, 0, rep.stderr)
    got = re.search(r"its trigger fired (\S+ \S+) into it \(of (\S+ \S+):", " ".join(rep.stdout.split()))
    assert got, rep.stdout[:2000]
    assert abs(_dur_ns(got.group(1)) - (fired - ws)) <= 0.01 * (fired - ws), (got.group(1), fired - ws)
    assert abs(_dur_ns(got.group(2)) - (we - ws)) <= 0.01 * (we - ws), (got.group(2), we - ws)
    info = subprocess.run([GPUTRACE, "info", dbs[0]], capture_output=True, text=True, timeout=60)
    assert "window: flight recorder window: its trigger fired %s into it (of %s:" % got.groups() \
        in " ".join(info.stdout.split()), info.stdout
    # the part before the trigger has no GPU times, and the report says so
    assert "the window's first %s (the flight recorder's, before its trigger) have no GPU times" % got.group(1) \
        in " ".join(rep.stdout.split()), rep.stdout


def test_trigger_by_hand_after_the_slow_step():
    # no rule: a user runs `gputrace trigger` a few steps after the slow one;
    # the window still holds it
    d = tmpdir()
    log = os.path.join(d, "log")
    env = _env(d, {"GPUTRACE_FLIGHT": "30s"})
    p = subprocess.Popen([prog("flight_steps"), "80", "20", "40", "480", log, "run"], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert_eq(p.stdout.readline(), "ready\n")
        t0 = time.time()
        while time.time() - t0 < 60 and "step 45 " not in open(log).read():
            time.sleep(0.02)
        t = subprocess.run([GPUTRACE, "trigger", "--duration", "200ms", str(p.pid)],
                           env=dict(os.environ, GPUTRACE_CONTROL_DIR=os.path.join(d, "ctl")),
                           capture_output=True, text=True, timeout=60)
        assert_eq(t.returncode, 0, t.stderr)
    finally:
        out, err = p.communicate(timeout=120)
    assert_eq((p.returncode, err), (0, ""))
    calls, steps = _log(log)
    dbs = _dbs(d)
    assert_eq(len(dbs), 1, dbs)
    m = _meta(dbs[0])
    assert_eq(m["window_trigger"], "gputrace trigger")
    ws, we = int(m["window_start_ns"]), int(m["window_end_ns"])
    assert steps[45][1] <= int(m["trigger_ns"]) <= we
    traced = _check_exact(dbs[0], calls, ws, we)
    assert_eq([t[0] for t in traced].count("marker_kernel"), 1, "step 40's marker launch")
    assert_eq(traced[0][0], "cudaMalloc")


def test_crash_writes_the_calls_before_it():
    # a SIGSEGV after step 30: the process dies of it, as untraced, and the
    # window holds every call it made, none missing
    d = tmpdir()
    log = os.path.join(d, "log")
    argv = [prog("flight_steps"), "50", "5", "-1", "0", log, "segv:30"]
    plain = subprocess.run(argv, env=base_env(), capture_output=True, text=True, timeout=60)
    assert_eq(plain.returncode, -signal.SIGSEGV)
    r = subprocess.run(argv, env=_env(d, {"GPUTRACE_FLIGHT": "64MiB"}, crash=True), capture_output=True, text=True,
                       timeout=60)
    assert_eq((r.returncode, r.stdout, r.stderr), (-signal.SIGSEGV, "ready\n", ""))
    calls, steps = _log(log)
    assert_eq(max(steps), 30)
    dbs = _dbs(d)
    assert_eq(len(dbs), 1, dbs)
    m = _meta(dbs[0])
    assert_eq((m["window_trigger"], m["complete"]), ("signal 11 (SIGSEGV)", "1"))
    ws, we = int(m["window_start_ns"]), int(m["window_end_ns"])
    assert steps[30][1] <= int(m["trigger_ns"]) <= we
    traced = _check_exact(dbs[0], calls, ws, we)
    assert_eq(len(traced), len(calls), "every call the program made")
    assert_eq(len(query(dbs[0], "SELECT 1 FROM ranges WHERE name = 'train_step'")), 31)


def _wait_complete(db, timeout):
    t0 = time.time()
    while time.time() - t0 < timeout:
        if os.path.exists(db):
            try:
                if _meta(db).get("complete") == "1":
                    return True
            except Exception:
                pass
        time.sleep(0.2)
    return False


def test_hang_on_one_rank_leaves_the_stuck_collective():
    # two ranks of a simulated job; in step 12 rank 1 stops before its
    # all-reduce, so rank 0's never meets its peer and rank 0 hangs in the
    # cudaStreamSynchronize after it. The hang rule fires on both after 1 s
    # with no call ending; each writes its window; then the job is killed.
    d = tmpdir()
    job = "flight-%d" % os.getpid()
    procs = []
    try:
        for rank in (0, 1):
            env = _env(d, {"GPUTRACE_FLIGHT": "30s", "GPUTRACE_TRIGGER": "hang>1s",
                           "GPUTRACE_TRIGGER_DURATION": "300ms", "GPUTRACE_OUTPUT": os.path.join(d, "t-%r.db"),
                           "FAKECUDA_JOB": job, "FAKECUDA_WORLD_SIZE": "2", "RANK": str(rank),
                           "FAKECUDA_COLLECTIVE_TIMEOUT_MS": "600000",
                           "FAKECUDA_LOG": os.path.join(d, "gpu%d.log" % rank)})
            procs.append(subprocess.Popen([prog("flight_steps"), "30", "10", "-1", "0",
                                           os.path.join(d, "log%d" % rank), "hang:12"], env=env,
                                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
        for rank in (0, 1):
            assert _wait_complete(os.path.join(d, "t-%d-w1.db" % rank), 60), "rank %d's window" % rank
            assert procs[rank].poll() is None, "rank %d still hung" % rank
    finally:
        for p in procs:
            p.kill()
            p.wait()
        try:
            os.unlink("/dev/shm/fakecuda-" + job)
        except OSError:
            pass
    for rank in (0, 1):
        db = os.path.join(d, "t-%d-w1.db" % rank)
        calls, _ = _log(os.path.join(d, "log%d" % rank))
        m = _meta(db)
        ws, we = int(m["window_start_ns"]), int(m["window_end_ns"])
        stuck = 1 if rank == 0 else 0
        assert_eq(m["window_trigger"][:len("hang>1s: no CUDA call ended")], "hang>1s: no CUDA call ended")
        assert m["window_trigger"].endswith("; %d call%s in flight" % (stuck, "" if stuck == 1 else "s")), m
        # the last call that ended came at least a second before the trigger
        last = max(c[3] for c in calls if c[3])
        assert int(m["trigger_ns"]) - last >= 1e9, (int(m["trigger_ns"]) - last)
        traced = _check_exact(db, calls, ws, we)
        assert_eq(traced[0][0], "cudaMalloc", "the history reaches back to the first call")
        running = [t for t in traced if t[3] == -1]
        if rank == 0:
            # the collective of step 12 was launched; the sync after it is
            # in the trace still running, from its logged entry to the end
            assert_eq([c[1] for c in calls if c[0] == 12],
                      ["step_kernel", "ncclDevKernel_AllReduce_Sum_f32_RING_LL", "cudaStreamSynchronize"])
            enter = [c for c in calls if c[0] == 12 and c[3] == 0]
            assert_eq(len(enter), 1)
            assert_eq(len(running), 1, running)
            name, s, e, _ = running[0]
            assert_eq((name, e), ("cudaStreamSynchronize", we))
            assert enter[0][2] <= s, (enter, s)
            assert traced[-2][0] == "ncclDevKernel_AllReduce_Sum_f32_RING_LL", traced[-3:]
            rep = subprocess.run([GPUTRACE, "report", db], capture_output=True, text=True, timeout=60)
            assert "1 call was still running when the window closed (result -1, its end the window's): the " \
                   "first, cudaStreamSynchronize" in " ".join(rep.stdout.split()), rep.stdout
        else:
            assert_eq(running, [])
            assert_eq([c[1] for c in calls if c[0] == 12], ["step_kernel"])


def _many(d, extra, steps=20000):
    log = os.path.join(d, "log")
    env = base_env({"GPUTRACE_OUTPUT": os.path.join(d, "t.db")})
    env.update(extra)
    _preload(env)
    r = subprocess.run([prog("flight_steps"), str(steps), "0", "-1", "0", log, "run"], env=env,
                       capture_output=True, text=True, timeout=120)
    return r, _log(log)[0], os.path.join(d, "t.db")


def test_max_size_stops_recording():
    # host times only: with CUPTI a launch's row waits for its GPU record,
    # and those still waiting when the bound is met are lost, so the
    # trace's last calls may have holes (docs/cli.md); without, it is a
    # beginning of the run with none
    d = tmpdir()
    r, calls, db = _many(d, {"GPUTRACE_MAX_SIZE": "1MiB", "GPUTRACE_GPU_TIMING": "off"})
    assert_eq(r.returncode, 0, r.stderr)
    assert "reached GPUTRACE_MAX_SIZE" in r.stderr, r.stderr
    assert os.path.getsize(db) <= 1 << 20
    m = _meta(db)
    assert_eq((m["stop_reason"], m["max_size_mode"], m["max_size_bytes"]), ("max_size", "stop", str(1 << 20)))
    traced = _traced(db)
    # a beginning of the run, with no gap: the first N calls of the log
    assert 100 < len(traced) < len(calls), (len(traced), len(calls))
    for t, c in zip(traced, calls):
        assert_eq(t[0] if t[0] else None, c[1] if c[1] != "cudaMalloc" else "cudaMalloc")
        assert c[2] <= t[1] <= t[2] <= c[3], (t, c)
    info = subprocess.run([GPUTRACE, "info", db], capture_output=True, text=True, timeout=60)
    assert "recording stopped early: the trace reached its size bound (GPUTRACE_MAX_SIZE)" in info.stdout, \
        info.stdout
    # record's option sets the same (GPU times on)
    d = tmpdir()
    rec = subprocess.run([GPUTRACE, "record", "-q", "--max-size", "1MiB", "-o", os.path.join(d, "r.db"),
                          prog("flight_steps"), "20000", "0", "-1", "0", os.path.join(d, "log"), "run"],
                         env=base_env(), capture_output=True, text=True, timeout=120)
    assert_eq(rec.returncode, 0, rec.stderr)
    assert_eq(_meta(os.path.join(d, "r.db"))["stop_reason"], "max_size")
    assert os.path.getsize(os.path.join(d, "r.db")) <= 1 << 20


def test_max_size_keeps_the_last_part():
    d = tmpdir()
    r, calls, db = _many(d, {"GPUTRACE_MAX_SIZE": "2MiB:last"})
    assert_eq((r.returncode, r.stderr), (0, ""))
    assert os.path.getsize(db) <= 2 << 20
    m = _meta(db)
    assert_eq((m["max_size_mode"], m["mode"], m.get("stop_reason")), ("last", "record", None))
    traced = _traced(db)
    # the end of the run, with no gap: the last N calls of the log
    assert 100 < len(traced) < len(calls), (len(traced), len(calls))
    for t, c in zip(traced, calls[-len(traced):]):
        assert_eq(t[0], c[1])
        assert c[2] <= t[1] <= t[2] <= c[3], (t, c)
    assert_eq(traced[-1][0], "cudaDeviceSynchronize")
    assert int(m["window_start_ns"]) > calls[0][3], "the first part was dropped"
    rep = subprocess.run([GPUTRACE, "report", db], capture_output=True, text=True, timeout=60)
    assert "GPUTRACE_MAX_SIZE=2.0 MiB:last: the trace keeps the last part of the run" in " ".join(rep.stdout.split()), \
        rep.stdout

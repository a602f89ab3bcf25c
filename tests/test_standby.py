"""Standby mode (GPUTRACE_MODE=standby) and `gputrace trigger`: a process
records nothing until a window is opened in it, and each window's trace
holds exactly the calls made inside it. Ground truth comes from the
program's own log of each launch's start and end (tests/progs/
standby_loop.c), on the same clock as the trace."""
import os
import stat
import subprocess
import time

from gtlib import BUILD, SHIM, assert_eq, base_env, prog, query, tmpdir

GPUTRACE = os.path.join(BUILD, "gputrace")


def _start(seconds, d, extra=None, fork=False):
    env = base_env({"GPUTRACE_MODE": "standby", "GPUTRACE_CONTROL_DIR": os.path.join(d, "ctl"),
                    "GPUTRACE_OUTPUT": os.path.join(d, "t-%p.db"), "LD_PRELOAD": SHIM})
    env.update(extra or {})
    argv = [prog("standby_loop"), str(seconds), os.path.join(d, "log")] + (["1"] if fork else [])
    p = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert_eq(p.stdout.readline(), "ready\n")
    return p


def _trigger(d, *args):
    env = dict(os.environ, GPUTRACE_CONTROL_DIR=os.path.join(d, "ctl"))
    return subprocess.run([GPUTRACE, "trigger"] + list(args), env=env, capture_output=True, text=True,
                          timeout=60)


def _log(path):
    with open(path) as f:
        return [tuple(int(x) for x in line.split()) for line in f]


def _meta(db):
    return dict(query(db, "SELECT key, value FROM meta"))


def _check_window(db, log):
    """Every launch the program made wholly inside the window is in its
    trace, once; none made wholly outside it is."""
    m = _meta(db)
    ws, we = int(m["window_start_ns"]), int(m["window_end_ns"])
    assert ws < we, m
    starts = [r[0] for r in query(db, "SELECT start_ns FROM api_calls WHERE name = 'cudaLaunchKernel' "
                                      "ORDER BY start_ns")]
    inside = [(i, t0, t1) for i, t0, t1 in log if t0 >= ws and t1 <= we]
    outside = [(i, t0, t1) for i, t0, t1 in log if t1 < ws or t0 > we]
    matched = {}
    for s in starts:
        hit = [i for i, t0, t1 in log if t0 <= s <= t1]
        assert_eq(len(hit), 1, "the traced launch at %d is one of the program's" % s)
        assert hit[0] not in matched, "launch %d recorded twice" % hit[0]
        matched[hit[0]] = s
    missing = [i for i, _, _ in inside if i not in matched]
    assert not missing, "launches made inside the window but not in its trace: %r" % missing[:10]
    extra = [i for i, _, _ in outside if i in matched]
    assert not extra, "launches made outside the window but in its trace: %r" % extra[:10]
    assert len(inside) >= 20, "the window saw too few launches to mean anything: %d" % len(inside)
    return m, len(matched)


def test_standby_records_nothing_until_triggered():
    d = tmpdir()
    p = _start(0.6, d)
    socks = os.listdir(os.path.join(d, "ctl"))
    assert_eq(socks, ["%d.sock" % p.pid], "one control socket, named by the pid")
    mode = os.stat(os.path.join(d, "ctl")).st_mode
    assert_eq(stat.S_IMODE(mode), 0o700, "the control directory is the user's alone")
    out, err = p.communicate(timeout=60)
    assert_eq(p.returncode, 0, err)
    assert_eq(err, "", "standby says nothing")
    assert_eq([f for f in os.listdir(d) if f.endswith(".db")], [], "no trace without a window")
    assert_eq(os.listdir(os.path.join(d, "ctl")), [], "the socket is removed at exit")


def test_windows_hold_exactly_their_calls():
    d = tmpdir()
    p = _start(3.0, d)
    r = _trigger(d, "--duration", "600ms", str(p.pid))
    assert_eq(r.returncode, 0, r.stderr)
    w1 = os.path.join(d, "t-%d-w1.db" % p.pid)
    assert "%d: window 1 open, recording to %s" % (p.pid, w1) in r.stdout, r.stdout
    assert "%d: window 1 closed; trace %s" % (p.pid, w1) in r.stdout, r.stdout
    time.sleep(0.3)
    r = _trigger(d, "--duration", "400ms", "--all")
    assert_eq(r.returncode, 0, r.stderr)
    w2 = os.path.join(d, "t-%d-w2.db" % p.pid)
    out, err = p.communicate(timeout=60)
    assert_eq(p.returncode, 0, "the program's sleeps were never cut short: %s" % err)
    log = _log(os.path.join(d, "log"))
    m1, n1 = _check_window(w1, log)
    m2, n2 = _check_window(w2, log)
    assert_eq((m1["mode"], m1["window"], m1["complete"]), ("standby", "1", "1"))
    assert_eq((m2["mode"], m2["window"], m2["complete"]), ("standby", "2", "1"))
    assert int(m1["window_end_ns"]) < int(m2["window_start_ns"])
    # the window's length is the one asked for (the program's own clock)
    for m, want in ((m1, 600e6), (m2, 400e6)):
        got = int(m["window_end_ns"]) - int(m["window_start_ns"])
        assert want <= got < want + 200e6, (want, got)
    # GPU times in both windows: CUPTI stopped after the first and started
    # again. Work no recorded call made (a launch just before the window,
    # run in it) is kept only where the GPU ran it inside the window.
    for db, n in ((w1, n1), (w2, n2)):
        m = _meta(db)
        assert_eq(m["gpu_timing"], "cupti")
        assert_eq(query(db, "SELECT count(*), sum(time_source = 'gpu') FROM kernels "
                            "WHERE api_call_id IS NOT NULL")[0], (n, n))
        stray = query(db, "SELECT start_ns, end_ns FROM kernels WHERE api_call_id IS NULL")
        assert len(stray) <= 2, stray
        for start, end in stray:
            assert end >= int(m["window_start_ns"]) and start < int(m["window_end_ns"]), (start, end, m)


def test_a_window_opened_inside_a_call_leaves_out_what_the_call_makes():
    """A window that opens while a call made before it is still running:
    the calls that call makes inside (the runtime's into the driver) are
    parts of it, not calls the program made in the window. The first CUDA
    call, cudaMalloc, spends a second creating the context (a real driver
    takes hundreds of milliseconds, FAKECUDA_CTX_CREATE_NS; a second leaves
    a loaded machine's trigger time to arrive); the window opens
    meanwhile, as soon as the control socket is there. Its trace holds the program's launches,
    and no driver call (the runtime's cuMemAlloc, after the context, was
    recorded as a call of its own before). The program calls
    cudaGetDeviceCount first, as PyTorch does, so the runtime takes the
    driver's functions from cuGetProcAddress outside any recorded call:
    the tracer's wrappers, as on a real GPU."""
    d = tmpdir()
    env = base_env({"GPUTRACE_MODE": "standby", "GPUTRACE_CONTROL_DIR": os.path.join(d, "ctl"),
                    "GPUTRACE_OUTPUT": os.path.join(d, "t-%p.db"), "LD_PRELOAD": SHIM,
                    "FAKECUDA_CTX_CREATE_NS": "1000000000"})
    p = subprocess.Popen([prog("standby_loop"), "1.0", os.path.join(d, "log")], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    sock = os.path.join(d, "ctl", "%d.sock" % p.pid)
    deadline = time.monotonic() + 10
    while not os.path.exists(sock) and time.monotonic() < deadline and p.poll() is None:
        time.sleep(0.005)
    r = _trigger(d, "--duration", "1500ms", str(p.pid))
    assert_eq(r.returncode, 0, r.stderr)
    out, err = p.communicate(timeout=60)
    assert_eq(p.returncode, 0, err)
    assert_eq(out, "ready\n")
    db = os.path.join(d, "t-%d-w1.db" % p.pid)
    m = _meta(db)
    with open(os.path.join(d, "log.first")) as f:
        t0, t1 = (int(x) for x in f.read().split())
    assert t0 < int(m["window_start_ns"]) < t1, ("the window opened while the first call ran", t0, t1, m)
    assert_eq(query(db, "SELECT name, count(*) FROM api_calls WHERE name NOT LIKE 'cuda%' GROUP BY name"), [])
    assert_eq(query(db, "SELECT count(*) FROM api_calls WHERE start_ns < ?", int(m["window_start_ns"]))[0][0], 0)
    _check_window(db, _log(os.path.join(d, "log")))


def test_window_at_a_wall_clock_instant_and_busy():
    d = tmpdir()
    p = _start(2.5, d)
    t_at = time.time() + 0.5
    first = subprocess.Popen([GPUTRACE, "trigger", "--duration", "500ms", "--at", "%.3f" % t_at, str(p.pid)],
                             env=dict(os.environ, GPUTRACE_CONTROL_DIR=os.path.join(d, "ctl")),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(0.75)  # the window is open now
    busy = _trigger(d, "--duration", "100ms", str(p.pid))
    assert_eq(busy.returncode, 1)
    assert "window 1 is still open" in busy.stderr, busy.stderr
    listed = _trigger(d, "--list")
    assert_eq(listed.stdout, "%d window 1\n" % p.pid)
    out, err = first.communicate(timeout=60)
    assert_eq(first.returncode, 0, err)
    assert "%d: waiting for the instant asked" % p.pid in out, out
    p.communicate(timeout=60)
    assert_eq(p.returncode, 0)
    db = os.path.join(d, "t-%d-w1.db" % p.pid)
    m = _meta(db)
    opened_wall = int(m["start_time_unix_ns"]) + int(m["window_start_ns"]) - int(m["start_ns"])
    assert t_at * 1e9 <= opened_wall < t_at * 1e9 + 200e6, (t_at, opened_wall / 1e9)
    _check_window(db, _log(os.path.join(d, "log")))
    assert_eq(sorted(f for f in os.listdir(d) if f.endswith(".db")), ["t-%d-w1.db" % p.pid],
              "the busy request opened nothing")


def test_trigger_errors():
    d = tmpdir()
    r = _trigger(d, "--duration", "1s", "999999")
    assert_eq(r.returncode, 1)
    assert "999999: no standby process listening under" in r.stderr, r.stderr
    for args, what in ((["--duration", "0", "1"], "--duration '0'"), (["--at", "soon", "1"], "--at 'soon'"),
                       (["--duration", "10", "1"], "--duration '10' is not a duration above 0 with its unit"),
                       (["--at", "+10", "1"], "--at '+10'"),
                       ([], "name the processes"), (["12x"], "'12x' is not a process id")):
        r = _trigger(d, *args)
        assert_eq(r.returncode, 2, args)
        assert what in r.stderr, r.stderr
    r = _trigger(d, "--all")
    assert_eq(r.returncode, 1)
    assert "no standby process of this user" in r.stderr, r.stderr


def test_control_directory_others_can_enter_is_refused():
    d = tmpdir()
    ctl = os.path.join(d, "ctl")
    os.mkdir(ctl, 0o755)
    os.chmod(ctl, 0o755)
    env = base_env({"GPUTRACE_MODE": "standby", "GPUTRACE_CONTROL_DIR": ctl,
                    "GPUTRACE_OUTPUT": os.path.join(d, "t-%p.db"), "LD_PRELOAD": SHIM})
    r = subprocess.run([prog("standby_loop"), "0.2", os.path.join(d, "log")], env=env, capture_output=True,
                       text=True, timeout=60)
    assert_eq(r.returncode, 0)
    assert_eq(r.stdout, "ready\n")
    lines = r.stderr.splitlines()
    assert_eq(len(lines), 1, r.stderr)
    assert "is not a directory of this user's alone" in lines[0] and "not tracing this process" in lines[0], lines
    assert_eq(os.listdir(ctl), [])


def test_fork_in_standby_each_process_its_own_channel():
    d = tmpdir()
    p = _start(2.0, d, fork=True)
    line = p.stdout.readline()
    assert line.startswith("child ") and line.endswith(" ready\n"), line
    child = int(line.split()[1])
    assert_eq(sorted(os.listdir(os.path.join(d, "ctl"))), sorted(["%d.sock" % p.pid, "%d.sock" % child]))
    r = _trigger(d, "--duration", "400ms", str(child))
    assert_eq(r.returncode, 0, r.stderr)
    out, err = p.communicate(timeout=60)
    assert_eq(p.returncode, 0, err)
    assert_eq(sorted(f for f in os.listdir(d) if f.endswith(".db")), ["t-%d-w1.db" % child],
              "only the child recorded")
    _check_window(os.path.join(d, "t-%d-w1.db" % child), _log(os.path.join(d, "log.child")))


def test_exec_in_standby():
    """exec: the channel is the image's (removed before the exec, opened
    again by the new image at its first CUDA call); a failed exec opens a
    new one in the same image. Nothing is written, nothing said."""
    for mode in ("exec", "exec-fail"):
        d = tmpdir()
        ctl = os.path.join(d, "ctl")
        env = base_env({"GPUTRACE_MODE": "standby", "GPUTRACE_CONTROL_DIR": ctl,
                        "GPUTRACE_OUTPUT": os.path.join(d, "t-%p.db"), "LD_PRELOAD": SHIM})
        r = subprocess.run([prog("endings"), mode, "20"], env=env, capture_output=True, text=True, timeout=60)
        assert_eq((r.returncode, r.stderr), (0, ""), mode)
        assert r.stdout.startswith("ready\n"), r.stdout
        assert_eq(os.listdir(ctl), [], "%s: no socket left behind" % mode)
        assert_eq([f for f in os.listdir(d) if f.endswith(".db")], [], mode)


def _run_steps(d, slow, extra, steps=40, slow_ms=250, kernel_us=10, program="standby_steps"):
    env = base_env({"GPUTRACE_MODE": "standby", "GPUTRACE_CONTROL_DIR": os.path.join(d, "ctl"),
                    "GPUTRACE_OUTPUT": os.path.join(d, "t-%p.db"), "LD_PRELOAD": SHIM,
                    "NVTX_INJECTION64_PATH": SHIM})
    env.update(extra)
    log = os.path.join(d, "steps.log")
    # steps of 20 ms and slow ones of 250 ms, against a rule of 8x: a loaded
    # machine stretches a 20 ms sleep, but not to 160 ms
    r = subprocess.run([prog(program), str(steps), "20", slow, str(slow_ms), log, str(kernel_us)], env=env,
                       capture_output=True, text=True, timeout=120)
    assert_eq(r.returncode, 0, r.stderr)
    assert_eq(r.stdout, "ready\n")
    with open(log) as f:
        rows = [tuple(int(x) for x in line.split()) for line in f]
    dbs = sorted((os.path.join(d, f) for f in os.listdir(d) if f.endswith(".db")),
                 key=lambda p: int(_meta(p)["window_start_ns"]))
    return r, rows, dbs


def _check_auto_window(db, rows, slow_step, factor):
    """The window opened right after the slow step ended, says why, and
    holds exactly the launches made inside it."""
    m = _meta(db)
    ws, we = int(m["window_start_ns"]), int(m["window_end_ns"])
    end = rows[slow_step][2]
    # after the slow step's end (how soon depends on the machine: opening
    # a trace and starting CUPTI take milliseconds, more when loaded)
    assert end <= ws, ("opens after the slow step's end", ws, end)
    why = m["window_trigger"]
    assert why.startswith("step-time>%gx: a step of " % factor), why
    took = float(why.split("a step of ")[1].split(" ms")[0]) * 1e6
    truth = rows[slow_step][2] - rows[slow_step][1]
    # the watcher times the step from its push to its pop, inside the
    # program's own timestamps around them
    assert took <= truth and took >= 250e6, (took, truth)
    # every caller sets GPUTRACE_TRIGGER_DURATION=300ms: its timer closes
    # the window no sooner, however late a loaded machine runs it (the
    # program's exit, by its log's last step, may close it first)
    assert we - ws >= min(300_000_000, rows[-1][2] - ws), (we - ws, rows[-1][2] - ws)
    _check_step_launches(db, rows, ws, we)
    return m


def _check_step_launches(db, rows, ws, we):
    """The window [ws, we] holds every step's launch made wholly inside it,
    and none made wholly outside (standby_steps's log: i t0 t1 l0 l1)."""
    starts = [r[0] for r in query(db, "SELECT start_ns FROM api_calls WHERE name = 'cudaLaunchKernel'")]
    inside = {i for i, _, _, l0, l1 in rows if l0 >= ws and l1 <= we}
    got = set()
    for s in starts:
        hit = [i for i, _, _, l0, l1 in rows if l0 <= s <= l1]
        assert_eq(len(hit), 1, "the traced launch at %d is one of the program's" % s)
        got.add(hit[0])
    assert inside <= got and got <= {i for i, _, _, l0, l1 in rows if l1 >= ws and l0 <= we}, (inside, got)
    # not a vacuous window: how many launches fit in it depends on how far a
    # loaded machine stretched the program's sleeps (issue 31: 4, where an
    # idle machine fits 5 or more), so the program's own log says how many
    # must: a window longer than the longest time from one launch to the
    # next around it holds at least one
    near = [r for r in rows if r[4] >= ws - 10 ** 9 and r[3] <= we + 10 ** 9]
    longest = max((b[4] - a[3] for a, b in zip(near, near[1:])), default=0)
    if we - ws > longest:
        assert inside, (we - ws, longest)


def test_automatic_window_on_a_slow_step():
    d = tmpdir()
    r, rows, dbs = _run_steps(d, "20", {"GPUTRACE_TRIGGER": "step-time>8x", "GPUTRACE_TRIGGER_DURATION": "300ms"})
    assert_eq(r.stderr, "")
    assert_eq(len(dbs), 1, ("one slow step, one window", [_meta(db)["window_trigger"] for db in dbs]))
    _check_auto_window(dbs[0], rows, 20, 8)


def test_automatic_windows_cooldown():
    # two slow steps 650 ms apart: a cooldown of 500 ms lets both open a
    # window, the default (10 minutes) only the first
    d = tmpdir()
    _, rows, dbs = _run_steps(d, "15,35", {"GPUTRACE_TRIGGER": "step-time>8x", "GPUTRACE_TRIGGER_DURATION": "300ms",
                                           "GPUTRACE_TRIGGER_COOLDOWN": "500ms"}, steps=55)
    assert_eq(len(dbs), 2, [_meta(db)["window_trigger"] for db in dbs])
    _check_auto_window(dbs[0], rows, 15, 8)
    _check_auto_window(dbs[1], rows, 35, 8)
    d = tmpdir()
    _, rows, dbs = _run_steps(d, "15,35", {"GPUTRACE_TRIGGER": "step-time>8x", "GPUTRACE_TRIGGER_DURATION": "300ms"},
                              steps=55)
    assert_eq(len(dbs), 1, [_meta(db)["window_trigger"] for db in dbs])
    _check_auto_window(dbs[0], rows, 15, 8)


def test_no_slow_step_no_window_and_bad_rules():
    d = tmpdir()
    r, _, dbs = _run_steps(d, "-", {"GPUTRACE_TRIGGER": "step-time>8x"})
    assert_eq((r.stderr, [_meta(db)["window_trigger"] for db in dbs]), ("", []))
    d = tmpdir()
    for bad in ("idle>150%", "step-time>8x,step-time>4x", "busy<5%"):
        d = tmpdir()
        r, _, dbs = _run_steps(d, "20", {"GPUTRACE_TRIGGER": bad})
        assert_eq(dbs, [])
        lines = r.stderr.splitlines()
        assert_eq(len(lines), 1, lines)
        assert "GPUTRACE_TRIGGER='%s' is not step-time>Kx (K from 1.1 to 1000) or idle>P%% (P from 1 to 99)" % bad \
            in lines[0], lines
    # GPUTRACE_STEP_RANGE names the step ranges: 'iter *' matches none of
    # the program's (no window for its slow step), 'train_*' its steps
    d = tmpdir()
    r, _, dbs = _run_steps(d, "20", {"GPUTRACE_TRIGGER": "step-time>8x", "GPUTRACE_STEP_RANGE": "iter *"})
    assert_eq((r.stderr, dbs), ("", []))
    d = tmpdir()
    r, rows, dbs = _run_steps(d, "20", {"GPUTRACE_TRIGGER": "step-time>8x", "GPUTRACE_STEP_RANGE": "train_*",
                                        "GPUTRACE_TRIGGER_DURATION": "300ms"})
    assert_eq((r.stderr, len(dbs)), ("", 1))
    _check_auto_window(dbs[0], rows, 20, 8)


def _idle_pct_truth(rows, kernel_ns, t):
    """The simulated GPU's idle share of the second before t, recomputed
    from the program's log: one stream, each step's kernel starting at its
    launch or at the previous kernel's end."""
    busy, end = 0, 0
    for _, _, _, l0, _ in rows:
        start = max(l0, end)
        end = start + kernel_ns
        busy += max(0, min(end, t) - max(start, t - 1000000000))
    return 100 - 100.0 * busy / 1e9


def test_automatic_window_on_an_idle_gpu():
    # kernels of 15 ms in steps of 20 ms (the GPU idles 25%), a stall of 3 s
    # in step 0, before the GPU was ever busy, and one in step 60: only the
    # second opens a window, while the GPU sits idle
    d = tmpdir()
    kernel_ns = 15000000
    r, rows, dbs = _run_steps(d, "0,60", {"GPUTRACE_TRIGGER": "idle>50%", "GPUTRACE_TRIGGER_DURATION": "3s"},
                              steps=150, slow_ms=3000, kernel_us=kernel_ns // 1000)
    assert_eq(r.stderr, "")
    assert_eq(len(dbs), 1, [_meta(db)["window_trigger"] for db in dbs])
    m = _meta(dbs[0])
    ws, we = int(m["window_start_ns"]), int(m["window_end_ns"])
    stall_from, stall_to = rows[60][4] + kernel_ns, rows[60][2]
    assert stall_from < ws < stall_to, ("opens while the GPU idles", stall_from, ws, stall_to)
    why = m["window_trigger"]
    assert why.startswith("idle>50%: GPU 0 idle ") and why.endswith("% of the last second"), why
    got = int(why.split("GPU 0 idle ")[1].split("%")[0])
    assert got > 50, why
    # the figure is the idle share of a second the watcher looked at in the
    # half second before the window opened (opening a trace takes time)
    near = [_idle_pct_truth(rows, kernel_ns, t) for t in range(ws - 500000000, ws + 1, 1000000)]
    assert any(abs(x - got) <= 1 for x in near), (got, min(near), max(near))
    # and the window holds exactly the launches made inside it
    _check_step_launches(dbs[0], rows, ws, we)


def test_both_rules_share_one_cooldown():
    # a 3 s stall in step 60 idles the GPU (the idle rule fires during it)
    # and makes a slow step (the step rule fires at its end); windows of 1 s
    # close in between. One cooldown for both: one window; a cooldown
    # shorter than the stall: both
    for cooldown, want in (("10m", ["idle>50%"]), ("100ms", ["idle>50%", "step-time>8x"])):
        d = tmpdir()
        r, rows, dbs = _run_steps(d, "60", {"GPUTRACE_TRIGGER": "step-time>8x,idle>50%",
                                            "GPUTRACE_TRIGGER_DURATION": "1s", "GPUTRACE_TRIGGER_COOLDOWN": cooldown},
                                  steps=150, slow_ms=3000, kernel_us=15000)
        assert_eq(r.stderr, "")
        got = [_meta(db)["window_trigger"] for db in dbs]
        assert_eq([w.split(":")[0] for w in got], want, got)
        assert int(_meta(dbs[0])["window_start_ns"]) < rows[60][2], "the idle window opens during the stall"


def test_idle_rule_without_nvml_says_so_once():
    # NVML's library present but its driver not loaded, then no NVML at
    # all: the rule is off, said in one line, and the program runs as ever
    d = tmpdir()
    r, _, dbs = _run_steps(d, "20", {"GPUTRACE_TRIGGER": "idle>50%", "FAKECUDA_NVML": "uninitialized"},
                           steps=60, slow_ms=1500, kernel_us=15000)
    assert_eq(dbs, [])
    assert_eq(r.stderr.splitlines(), ["gputrace: GPUTRACE_TRIGGER=idle>50%: NVML did not start (Driver Not Loaded); "
                                      "the idle rule is off"])
    if "libnvidia-ml.so.1" in subprocess.run(["/sbin/ldconfig", "-p"], capture_output=True, text=True).stdout:
        return  # a machine with a real NVML: it would be found
    d = tmpdir()
    # a build that finds the driver through its RUNPATH, which the
    # tracer's dlopen does not search (tests/tests.mk)
    r, _, dbs = _run_steps(d, "20", {"GPUTRACE_TRIGGER": "idle>50%", "LD_LIBRARY_PATH": ""},
                           steps=60, slow_ms=1500, kernel_us=15000, program="nvml_hidden/standby_steps")
    assert_eq(dbs, [])
    lines = r.stderr.splitlines()
    assert_eq(len(lines), 1, lines)
    assert lines[0].startswith("gputrace: GPUTRACE_TRIGGER=idle>50%: no NVML (libnvidia-ml.so.1: ") and \
        lines[0].endswith("; the idle rule is off"), lines


def test_programs_find_the_simulated_nvml():
    """Run as a user runs them (no LD_LIBRARY_PATH), the test programs find
    the simulated NVML as they find the simulated driver: the idle rule
    runs, and says nothing."""
    d = tmpdir()
    # long enough for the watcher's first look (once a second)
    r, _, _ = _run_steps(d, "20", {"GPUTRACE_TRIGGER": "idle>50%", "LD_LIBRARY_PATH": ""},
                         steps=60, slow_ms=1500, kernel_us=15000)
    assert_eq(r.stderr, "")


def test_window_by_steps():
    """`trigger --steps 5`: the window starts with the next step and ends
    with the fifth step from there: exactly those steps' launches."""
    d = tmpdir()
    env = base_env({"GPUTRACE_MODE": "standby", "GPUTRACE_CONTROL_DIR": os.path.join(d, "ctl"),
                    "GPUTRACE_OUTPUT": os.path.join(d, "t-%p.db"), "LD_PRELOAD": SHIM,
                    "NVTX_INJECTION64_PATH": SHIM})
    log = os.path.join(d, "steps.log")
    p = subprocess.Popen([prog("standby_steps"), "60", "20", "-", "0", log], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    assert_eq(p.stdout.readline(), "ready\n")
    time.sleep(0.2)
    r = _trigger(d, "--steps", "5", str(p.pid))
    out, err = p.communicate(timeout=60)
    assert_eq((p.returncode, err), (0, ""))
    assert_eq(r.returncode, 0, r.stdout + r.stderr)
    assert "%d: 5 whole steps recorded" % p.pid in r.stdout, r.stdout
    with open(log) as f:
        rows = [tuple(int(x) for x in line.split()) for line in f]
    dbs = [os.path.join(d, f) for f in os.listdir(d) if f.endswith(".db")]
    assert_eq(len(dbs), 1)
    m = _meta(dbs[0])
    ws, we = int(m["window_start_ns"]), int(m["window_end_ns"])
    first = [i for i, t0, t1, l0, l1 in rows if t0 <= ws <= l0]
    assert_eq(len(first), 1, ("the window starts inside a step's push", ws))
    i = first[0]
    # it ends at the pop of the fifth step: after its launch, before the
    # program's own timestamp after the pop
    assert rows[i + 4][4] <= we <= rows[i + 4][2], (we, rows[i + 4])
    starts = [s for (s,) in query(dbs[0], "SELECT start_ns FROM api_calls WHERE name = 'cudaLaunchKernel'")]
    got = sorted(j for s in starts for j, _, _, l0, l1 in rows if l0 <= s <= l1)
    assert_eq(got, list(range(i, i + 5)), "the five steps' launches, no other")
    assert_eq(m["window_trigger"], "gputrace trigger --steps 5")


def test_python_job_in_standby():
    """A long-running Python job: a window holds exactly the copies made
    inside it, each with its Python line; the job's sleeps and exit
    status are its own."""
    import sys
    d = tmpdir()
    env = base_env({"GPUTRACE_MODE": "standby", "GPUTRACE_CONTROL_DIR": os.path.join(d, "ctl"),
                    "GPUTRACE_OUTPUT": os.path.join(d, "t-%p.db"), "LD_PRELOAD": SHIM,
                    "PYTHONDONTWRITEBYTECODE": "1"})
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "progs", "py", "standby_train.py")
    log = os.path.join(d, "log")
    rt = os.path.join(BUILD, "fakecuda", "libcudart.so.13")
    p = subprocess.Popen([sys.executable, script, rt, "1.5", log], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    assert_eq(p.stdout.readline(), "ready\n")
    time.sleep(0.3)
    r = _trigger(d, "--duration", "400ms", str(p.pid))
    assert_eq(r.returncode, 0, r.stdout + r.stderr)
    out, err = p.communicate(timeout=60)
    assert_eq((p.returncode, err), (0, ""))
    dbs = [os.path.join(d, f) for f in os.listdir(d) if f.endswith(".db")]
    assert_eq(len(dbs), 1)
    with open(log) as f:
        rows = [tuple(int(x) for x in line.split()) for line in f]
    m = _meta(dbs[0])
    ws, we = int(m["window_start_ns"]), int(m["window_end_ns"])
    calls = query(dbs[0], "SELECT id, start_ns FROM api_calls WHERE name = 'cudaMemcpy' ORDER BY start_ns")
    got = set()
    for cid, s in calls:
        hit = [i for i, t0, t1 in rows if t0 <= s <= t1]
        assert_eq(len(hit), 1, "the traced copy at %d is one of the job's" % s)
        got.add(hit[0])
    inside = {i for i, t0, t1 in rows if t0 >= ws and t1 <= we}
    assert inside <= got <= {i for i, t0, t1 in rows if t1 >= ws and t0 <= we}, (sorted(inside), sorted(got))
    assert len(inside) >= 20, len(inside)
    with open(script) as f:
        lines = {tag: n for n, text in enumerate(f, 1) for tag in ("@copy", "@step") if text.rstrip().endswith(tag)}
    for cid, _ in calls[:5]:
        frames = query(dbs[0], "SELECT function, line FROM py_stack_frames f JOIN api_calls c ON "
                               "c.pystack_id = f.pystack_id WHERE c.id = ? ORDER BY f.depth", cid)
        assert_eq(frames[:2], [("step", lines["@copy"]), ("main", lines["@step"])])

"""A program with a CUPTI activity collector of its own (as the PyTorch
profiler has), traced: CUPTI has one set of buffer callbacks a process, so
the tracer hands the program its records. Its collector must get exactly
what it gets untraced (tests/progs/cupti_client.c prints every record it
got: kind, name or bytes, CUPTI's correlation id), and the trace must keep
GPU times for every kernel, as it does without the program's collector."""
import collections
import os

import gtlib  # noqa: E402
from gtlib import FAKECUDA, HERE, ROOT, assert_eq, prog, run_plain, run_traced

CLIENTS = ("cupti_client", "cupti_client_dl")  # linked to CUPTI; found with dlopen/dlsym


def records(stdout):
    """The collector's records as a Counter of their lines, and its tail."""
    lines = stdout.splitlines()
    tail = dict(l.split(" ", 1) for l in lines if l.split(" ", 1)[0] in
                ("records", "foreign_buffers", "bad_walks", "dropped", "subscribe"))
    recs = collections.Counter(l for l in lines if l.split(" ", 1)[0] not in tail)
    return recs, tail


def by_name(recs):
    """kind and name (or bytes) of each record, counted."""
    out = collections.Counter()
    for line, n in recs.items():
        out[line.rsplit(" ", 1)[0]] += n
    return out


def meta(run, key):
    rows = run.q("SELECT value FROM meta WHERE key = ?", key)
    return rows[0][0] if rows else None


def traced_same_as_plain(client, scenario, env=None, stderr=""):
    """Runs the scenario untraced and traced; the collector's output must
    be the same. Returns (records, the traced run)."""
    plain = run_plain([prog(client), scenario], env=env)
    assert plain.returncode == 0, plain.stderr
    run = run_traced([prog(client), scenario], env=env)
    assert run.proc.returncode == 0, run.proc.stderr
    assert_eq(run.proc.stderr, stderr, "stderr")
    recs, tail = records(run.proc.stdout)
    # every record handed over in a buffer the program lent, walked by
    # CUPTI's own cuptiActivityGetNextRecord to validSize, none dropped
    assert_eq((tail["foreign_buffers"], tail["bad_walks"], tail["dropped"]), ("0", "0", "0"), scenario)
    assert_eq(run.proc.stdout, plain.stdout, "%s %s: the collector's records traced and untraced" % (client, scenario))
    return recs, run


def kernels(run):
    """The trace's kernels: {name: (count, how many with GPU times)}."""
    return {name: (n, gpu) for name, n, gpu in run.q(
        "SELECT name, count(*), sum(time_source = 'gpu') FROM kernels GROUP BY name")}


def check_shared(run, n_records):
    assert_eq(meta(run, "gpu_timing"), "cupti")
    assert_eq(meta(run, "cupti_program"), "shared")
    assert_eq(meta(run, "cupti_program_records"), str(n_records), "records the tracer handed the program")
    assert_eq(meta(run, "cupti_program_dropped"), "0")
    assert_eq(run.q1("SELECT count(*) FROM gpu_activity WHERE linked = 0"), 0, "GPU records not linked to a call")


def test_collector_gets_its_records_from_when_it_enabled_them():
    """The issue's program: 100 kernels, then its collector on for 100,
    off for 100 more. Untraced its collector gets the 100 of the middle;
    traced, the same 100 (names and correlation ids), and the trace has GPU
    times for all 300. The callback API's one subscriber stays free."""
    for client in CLIENTS:
        recs, run = traced_same_as_plain(client, "phases")
        assert_eq(by_name(recs), {"concurrent_kernel during": 100}, client)
        assert "subscribe 0\n" in run.proc.stdout, run.proc.stdout
        assert_eq(kernels(run), {"before": (100, 100), "during": (100, 100), "after": (100, 100)}, client)
        check_shared(run, 100)


def test_kinds_the_tracer_records_and_one_it_does_not():
    """KERNEL, MEMCPY and MEMSET (the tracer records kernels, copies and
    memsets itself) and RUNTIME (API records: the tracer has them on for
    every call, and skips them): each for the calls made while on, KERNEL
    records as KERNEL though the tracer's are concurrent ones."""
    for client in CLIENTS:
        recs, run = traced_same_as_plain(client, "kinds")
        named = by_name(recs)
        assert_eq(named["kernel during"], 20, client)
        assert_eq(named["memcpy 8192"], 5, client)
        assert_eq(named["memset 4096"], 5, client)
        # one runtime API record per work-making call while on: 20
        # launches, 10 copies and memsets, 1 sync
        assert_eq(named["runtime"], 31, client)
        assert_eq(sum(recs.values()), 61, client)
        assert_eq(kernels(run), {"before": (10, 10), "during": (20, 20), "after": (10, 10)}, client)
        assert_eq(run.q("SELECT time_source, count(*) FROM memcpys GROUP BY 1"), [("gpu", 25)], client)
        assert_eq(run.q("SELECT time_source, count(*) FROM memsets GROUP BY 1"), [("gpu", 25)], client)
        check_shared(run, 61)


def test_threads_launch_while_the_collector_turns_on_and_off():
    """4 threads launch while the main thread turns the kind on and off 10
    times and flushes: the collector gets only kernels, in its own buffers,
    and as many as were launched while on: at least the launch calls that
    lie wholly inside an on-window (read from the trace), at most those
    that overlap one; the trace has GPU times for all 1200."""
    run = run_traced([prog("cupti_client"), "threads"], env={"CUPTI_CLIENT_WINDOWS": "1"})
    assert run.proc.returncode == 0, run.proc.stderr
    assert_eq(meta(run, "cupti_dropped_records"), "0", "records CUPTI dropped for want of a tracer's buffer")
    assert_eq(run.proc.stdout, "all_w 1\nforeign_buffers 0\nbad_walks 0\ndropped 0\n")
    err = [l.split() for l in run.proc.stderr.splitlines()]
    # each window: before the enable call, after it returned, before the
    # disable call, after it returned; the kind was surely on between the
    # middle two, and perhaps between the outer two
    windows = [tuple(int(t) for t in l[1:5]) for l in err if l[0] == "window"]
    got = [int(l[1]) for l in err if l[0] == "records"]
    assert_eq(len(windows), 10, run.proc.stderr)
    calls = run.q("SELECT api_start_ns, api_end_ns FROM kernels WHERE name = 'w'")
    inside = sum(1 for s, e in calls if any(a_on <= s and e <= b_on for _, a_on, b_on, _ in windows))
    overlap = sum(1 for s, e in calls if any(s <= b and e >= a for a, _, _, b in windows))
    assert inside <= got[0] <= overlap, (inside, got, overlap)
    assert_eq(kernels(run), {"w": (1200, 1200)})
    check_shared(run, got[0])


def test_collector_flushing_faster_than_the_writer_drains():
    """Each flush of the program's hands the tracer's buffer back with a
    few records: 50 in a row, faster than the writer drains, must not leave
    CUPTI without a buffer of the tracer's (it would drop records, and
    kernels lose their GPU times). Nearly empty buffers are copied out and
    lent again at once."""
    recs, run = traced_same_as_plain("cupti_client", "flushes")
    assert_eq(by_name(recs), {"concurrent_kernel f": 50})
    assert_eq(meta(run, "cupti_dropped_records"), "0", "records CUPTI dropped for want of a tracer's buffer")
    assert_eq(kernels(run), {"f": (50, 50)})
    check_shared(run, 50)


def test_a_collector_flushing_from_the_start_loses_no_record():
    """4 threads launch 2000 kernels back to back from the program's start
    while its collector flushes every 100 us: each flush hands back one of
    the tracer's buffers with a few records in it, all in the milliseconds
    the tracer spends making its trace file, before it writes anything.
    CUPTI must never be refused a buffer meanwhile: the collector gets all
    2000 records, and the trace GPU times for all 2000 kernels, each linked
    to its launch, and no record dropped."""
    run = run_traced([prog("cupti_client"), "burst"])
    assert run.proc.returncode == 0, run.proc.stderr
    assert_eq(run.proc.stdout, "all_b 1\nrecords 2000\nforeign_buffers 0\nbad_walks 0\ndropped 0\n")
    assert_eq(meta(run, "cupti_dropped_records"), "0", "records CUPTI had no buffer of the tracer's for")
    assert_eq(kernels(run), {"b": (2000, 2000)})
    assert_eq(run.q1("SELECT count(*) FROM kernels WHERE api_start_ns IS NULL"), 0, "kernels without their call")
    check_shared(run, 2000)


def test_buffers_served_while_the_trace_file_is_made():
    """On one CPU, 16 threads launch 64000 short kernels back to back from
    the program's start while its collector flushes every 5 ms: the
    tracer's thread making the trace file (at nice +10) waits behind them
    for tens of milliseconds, the writer drains nothing meanwhile, and each
    flush hands back a buffer too full to be copied out. CUPTI must still
    get every buffer it asks for: no record dropped, the collector gets all
    64000, the trace GPU times for all 64000 kernels, each with its call."""
    run = run_traced(["taskset", "-c", "0", prog("cupti_client"), "burst"],
                     env={"CUPTI_CLIENT_BURST": "16 4000 5000", "FAKECUDA_KERNEL_NS": "100"})
    assert run.proc.returncode == 0, run.proc.stderr
    assert_eq(run.proc.stdout, "all_b 1\nrecords 64000\nforeign_buffers 0\nbad_walks 0\ndropped 0\n")
    assert_eq(meta(run, "cupti_dropped_records"), "0", "records CUPTI had no buffer of the tracer's for")
    assert_eq(kernels(run), {"b": (64000, 64000)})
    assert_eq(run.q1("SELECT count(*) FROM kernels WHERE api_start_ns IS NULL"), 0, "kernels without their call")
    check_shared(run, 64000)


def test_enable_and_disable_repeated():
    recs, run = traced_same_as_plain("cupti_client", "repeat")
    assert_eq(by_name(recs), {"concurrent_kernel on_%d" % i: 10 for i in range(5)})
    assert_eq(kernels(run), {"%s_%d" % (w, i): (10, 10) for i in range(5) for w in ("on", "off")})
    check_shared(run, 50)


def test_program_finalizes_cupti_mid_run():
    """cuptiFinalize by the program detaches its collector (its kinds off,
    its callbacks forgotten) and not the tracer's; registered again, it
    gets records again."""
    for client in CLIENTS:
        recs, run = traced_same_as_plain(client, "finalize")
        assert_eq(by_name(recs), {"concurrent_kernel k1": 50, "concurrent_kernel k3": 20}, client)
        assert_eq(kernels(run), {"k1": (50, 50), "k2": (50, 50), "k3": (20, 20), "k4": (30, 30)}, client)
        check_shared(run, 70)


def test_two_external_correlation_kinds_at_once():
    """The program's external ids of two kinds at once (CUSTOM0 and
    CUSTOM1, as the PyTorch profiler pushes) come back to it, each tied to
    its kernel's correlation id; the tracer's own (CUSTOM2) do not. The
    program asked for API records of cudaLaunchKernel alone: it gets those,
    not the ones the tracer asked for besides (its syncs')."""
    recs, run = traced_same_as_plain("cupti_client", "ext")
    kernel_corr = {int(l.split()[-1]) for l in recs if l.startswith("concurrent_kernel tagged")}
    ext = [l.split()[1:] for l in recs if l.startswith("external")]
    assert_eq(sorted(k for k, _, _ in ext), ["3"] * 20 + ["4"] * 20, "external kinds")
    for kind, base in (("3", 1000), ("4", 5000)):
        assert_eq({int(c) for k, _, c in ext if k == kind}, kernel_corr, "kind %s names the tagged kernels" % kind)
        assert_eq(sorted(int(i) for k, i, _ in ext if k == kind), list(range(base, base + 20)))
    # the program's API records of its 30 launches, and no more: the
    # tracer's own (its syncs') are not the program's
    assert_eq(sorted(int(l.split()[1]) for l in recs if l.startswith("runtime")), sorted(kernel_corr | {
        int(l.split()[-1]) for l in recs if l.startswith("concurrent_kernel bare")}), "the launches' API records")
    assert_eq(kernels(run), {"tagged": (20, 20), "bare": (10, 10)})
    check_shared(run, 100)


def test_window_opens_after_the_collector_started():
    """A capture range's window opens while the program's collector runs
    (its buffers were CUPTI's own until then) and closes before it stops:
    the collector gets all 150 kernels it had on, the trace the 50 of the
    window with GPU times."""
    env = {"GPUTRACE_CAPTURE_RANGE": "cudaProfilerApi"}
    for client in CLIENTS:
        recs, run = traced_same_as_plain(client, "range", env=env)
        assert_eq(by_name(recs), {"concurrent_kernel pre": 50, "concurrent_kernel in": 50,
                                  "concurrent_kernel post": 50}, client)
        assert_eq(kernels(run), {"in": (50, 50)}, client)
        assert_eq(meta(run, "cupti_program"), "shared")


def test_gpu_timing_off_leaves_cupti_to_the_program():
    recs, run = traced_same_as_plain("cupti_client", "phases", env={"GPUTRACE_GPU_TIMING": "off"})
    assert_eq(by_name(recs), {"concurrent_kernel during": 100})
    assert_eq(meta(run, "cupti_program"), "direct")
    assert_eq(meta(run, "cupti_program_records"), "0")


def test_program_clock_wins_and_the_trace_converts():
    """CUPTI has one clock a process: the program's own wins, so its records
    are on it as untraced (all 50 between its own readings); the tracer
    takes the lesser role, maps its GPU times onto its own clock through
    readings of both, and says so in one line and in meta. The program's
    clock: CLOCK_MONOTONIC plus an hour, in nanoseconds, and in ticks of
    0.4 ns (a TSC's, as the PyTorch profiler's); given while the tracer
    holds CUPTI, and (a capture range) before it does."""
    for ticks in (False, True):
        for env in ({}, {"GPUTRACE_CAPTURE_RANGE": "cudaProfilerApi"}):
            env = dict(env, **({"CUPTI_CLIENT_TICKS": "1"} if ticks else {}))
            plain = run_plain([prog("cupti_client"), "clock"], env=env)
            run = run_traced([prog("cupti_client"), "clock"], env=env)
            assert run.proc.returncode == 0, run.proc.stderr
            assert_eq(run.proc.stdout, plain.stdout, "the collector's records traced and untraced %r" % env)
            assert "on_my_clock 50\n" in run.proc.stdout, run.proc.stdout
            lines = run.proc.stderr.splitlines()
            assert_eq(len(lines), 1, "one line: %r" % lines)
            assert "clock of its own" in lines[0], lines
            rate = float(meta(run, "cupti_clock_ns_per_tick"))
            assert abs(rate - (0.4 if ticks else 1.0)) < 1e-4, (env, rate)
            if not ticks:
                off = int(meta(run, "cupti_clock_offset_ns"))
                assert abs(off + 3600 * 10**9) < 10**6, off
            # GPU times on the tracer's clock: durations exact in
            # nanoseconds (through ticks, within the measured rate's error),
            # each kernel within 2 us of its launch call or after it
            rows = run.q("SELECT end_ns - start_ns, start_ns - api_start_ns FROM kernels WHERE name = 'clocked'")
            assert_eq(len(rows), 50, env)
            durations = {d for d, _ in rows}
            assert durations == {2000} if not ticks else all(abs(d - 2000) <= 2 for d in durations), durations
            assert min(s for _, s in rows) > -2000, min(s for _, s in rows)
            assert max(s for _, s in rows) < 10**9, max(s for _, s in rows)
            check_shared(run, 50)


def test_collector_that_flushes_only_while_a_buffer_is_lent():
    """The PyTorch profiler's collector (Kineto) flushes CUPTI only while
    CUPTI holds a buffer it lent: "nothing in flight, nothing to flush".
    CUPTI asks for one as it writes a call's first record; the tracer must
    too, at the program's first call with a kind of its on, not when its
    own buffers come back (later than the window's end: the collector then
    never flushed, and got none of its kernels). Two cycles on a schedule,
    its clock in TSC-like ticks: each keeps its 10 kernels inside its
    window, with their external ids of two kinds and API records, as
    untraced; the trace keeps GPU times for all 70 kernels."""
    env = {"CUPTI_CLIENT_TICKS": "1"}
    for client in CLIENTS:
        plain = run_plain([prog(client), "kineto"], env=env)
        assert plain.returncode == 0, plain.stderr
        run = run_traced([prog(client), "kineto"], env=env)
        assert run.proc.returncode == 0, run.proc.stderr
        lines = run.proc.stderr.splitlines()
        assert len(lines) == 1 and "clock of its own" in lines[0], lines
        assert_eq(run.proc.stdout, plain.stdout, "%s: the collector's records traced and untraced" % client)
        recs, tail = records(run.proc.stdout)
        assert_eq((tail["foreign_buffers"], tail["bad_walks"], tail["dropped"]), ("0", "0", "0"), client)
        for c in (0, 1):
            assert_eq(recs["%d active_%d kept" % (c, c)], 10, client)
            assert_eq((recs["%d outside 0" % c], recs["%d api 11" % c]), (1, 1), client)
            assert_eq(sorted(int(l.split()[3]) for l in recs if l.startswith("%d external 3 " % c)),
                      list(range(100 * c, 100 * c + 10)), client)
            assert_eq(sorted(int(l.split()[3]) for l in recs if l.startswith("%d external 4 " % c)),
                      list(range(1000, 1010)), client)
        assert_eq(kernels(run), {"before": (10, 10), "warm_0": (5, 5), "active_0": (10, 10), "between_0": (10, 10),
                                 "warm_1": (5, 5), "active_1": (10, 10), "between_1": (10, 10)}, client)
        assert_eq(meta(run, "cupti_program"), "shared")
        assert_eq(run.q1("SELECT count(*) FROM gpu_activity WHERE linked = 0"), 0, "GPU records not linked to a call")


def test_torch_profiler_on_a_schedule_inside_a_traced_loop():
    """torch.profiler (Kineto) on a schedule inside a traced training loop:
    its trace lists the same kernels as untraced, and ours keeps GPU times
    for all of them (PyTorch from build/pyenv on the simulated GPU)."""
    py = gtlib.PYENV_PYTHON
    # PyTorch on the simulated GPU (docs/testing.md, "PyTorch"): the
    # simulated runtime and CUPTI preloaded in place of the wheel's, so
    # Kineto and the tracer share the one CUPTI the simulated driver feeds
    fake = [os.path.join(FAKECUDA, "libcudart.so.13"), os.path.join(FAKECUDA, "libcupti.so.13")]
    env = {"LD_PRELOAD": " ".join(fake)}
    script = os.path.join(HERE, "progs", "py", "profiler_loop.py")
    plain = run_plain([py, script], env=env)
    assert plain.returncode == 0, plain.stderr
    assert "cycles 2\n" in plain.stdout, plain.stdout
    outdir = gtlib.tmpdir()
    proc = run_plain([py, script], env={"LD_PRELOAD": " ".join([gtlib.SHIM] + fake),
                                        "GPUTRACE_OUTPUT": os.path.join(outdir, "trace-%p.db")})
    run = gtlib.Run(proc, outdir)
    assert run.proc.returncode == 0, run.proc.stderr
    assert_eq(run.proc.stdout, plain.stdout, "the profiler's kernels traced and untraced")
    assert_eq(meta(run, "cupti_program"), "shared")
    assert_eq(run.q("SELECT DISTINCT time_source FROM kernels"), [("gpu",)], "every kernel with GPU times")

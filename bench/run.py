#!/usr/bin/env python3
"""gputrace benchmarks on the simulated GPU, launch cost set to zero so what
remains is the tracer's. Every figure is a difference or ratio against the
untraced run measured in the same invocation, never an absolute target.

Usage: python3 bench/run.py [--calls N] [--rounds R] [--depth D]

python-call-cost: host time per kernel launch made from Python through a C
extension that releases the GIL, DEPTH Python frames down, under four
settings: untraced; traced with stacks off; native stacks only
(GPUTRACE_PYTHON=0, 32 frames); native and Python stacks (the default).
Each setting runs R times, interleaved; per setting the median and p99 of
all calls' times are reported, and the added cost against untraced.

c-call-cost: the same for kernel launches from C (bench/launch_loop.c),
40 native frames deep: standby (GPUTRACE_MODE=standby, no window open),
stacks off, 32-frame stacks, and 32-frame stacks with GPU timing through
CUPTI (its own cost, reported apart).

writer: one thread launching (--writer-events, default 1,000,000
launches) into the default rings, first paced (--writer-pace-ns of
simulated launch cost, default 500: about a million events a second
offered) and then as fast as it can: events offered, written per second
of recording and dropped, the trace's bytes per event, the tracer's added
peak resident memory, `gputrace report` on that trace (time, peak
resident memory); then with GPU timing on, paced at --gpu-pace-ns (default
1000: on a 2-CPU machine the simulated GPU and CUPTI share the CPUs with
the program and the writer): drops, bytes per event (GPU records
included) and added peak resident memory, also over a run of
--long-events launches (default 5,000,000: memory must not grow with the
run).

threads: T threads launching at once, each timing its own calls
(bench/launch_loop.c, T = 1, 2, 4), untraced and traced: whether the
tracer's cost per call grows with the threads (a shared lock would make
it).

total-cost: the tracer's whole cost in CPU per recorded call (user + system
time of every thread, traced minus untraced, from the kernel), over
--cost-events launches (default 500,000) of 1 us simulated launch cost,
split into the launching thread, the writer thread, the finish (indexes,
folding the WAL) and the rest; then with GPU timing on (CUPTI's share) and
the trace's bytes per call, indexes included.

ranks: `gputrace report` merging 1,024 synthetic rank summaries
(bench/rank_summaries.py, --rank-summaries, --rank-steps collectives each,
default 1,000): time, peak resident memory, one summary's size.

rank-traces: `gputrace report -j 2` on --rank-traces (default 64) copies of
a synthetic --rank-trace-events-call trace (default 1,000,000), each a
rank of its own whose kernel_100 is renamed as NCCL's all-reduce (1% of
launches: collectives to summarize and match), against report on one (the
median of three runs): the ratio of wall times, and of CPU times (user +
system, which a loaded machine disturbs less). Both in bench/cli.py.

nvtx: an nvtxRangePushA/nvtxRangePop pair from C (bench/nvtx_loop.c, NVIDIA's
NVTX v3 headers), 40 native frames deep, timed around the pair: untraced
(NVTX finds no injection library and makes the calls no-ops), traced with
stacks off, and with 32-frame stacks (a range carries the stack of its
push). --nvtx-pairs pairs per run (default 20,000: as many as the rings
hold, so none is dropped however far behind the writer is).

lines: a program whose stacks reach --lines-frames distinct native frames
(default 5,000: half as many functions, each launching from its own call
instruction, each called from its own line of main), built with -g and
without DWARF, traced: the process's CPU time (the writer's libdw work
is the difference), per frame resolved to a line, and the trace's size
with and without lines (bench/lines.py).

analyzer: `gputrace report` (text, then --format html) and `gputrace
info` on a synthetic trace of --analyzer-events events (default
10,000,000; bench/big_trace.py): time and peak resident memory of each,
the HTML page's size, and HTML's time as a ratio to text's.

export: `gputrace export` (Perfetto protobuf, the default) of a synthetic
trace of --export-events calls (default 5,000,000; bench/big_trace.py):
time, output size, peak resident memory; and gzip-compressed (.gz).
Both in bench/cli.py.

sampler: the host sampler's cost (GPUTRACE_SAMPLE_HZ=100, the default):
--sampler-threads Python threads (default 16, bench/py_threads.py), each
12 frames deep, launching, computing and sleeping for --sampler-seconds
(default 5): the sampler thread's CPU time (meta.tracer_sampler_cpu_ns)
as a share of one core over the run, the rounds a second it made (its
default budget, GPUTRACE_SAMPLE_BUDGET=1%, slows the rate when a round
costs more than the budget allows), and samples taken and torn (once
more with no budget, at the rate asked whatever it costs; once
more all active with threads that never call CUDA, whose Python stacks
come from the interpreter's list of threads, and once with
GPUTRACE_SAMPLE_NATIVE=perf, where the system permits perf events); the same share for as many native threads
(bench/native_threads.c, -O2 without -g, 12 frames down, each sleep a
blocked stack to unwind), with the budget and without; then the
per-call cost of python-call-cost's workload with sampling off and on,
interleaved over --rounds runs: the ratio of their medians (1.00: the
sampler adds nothing to a call), and the same with perf sampling (the
kernel takes each perf sample on the sampled thread). In bench/sampler.py.

flight: the flight recorder's cost per call, memory held and the history
a 10 s GPUTRACE_FLIGHT keeps at 100k calls a second (bench/flight.py).

The last lines put each figure beside the target docs/performance.md
states for it. --only SECTION runs one section."""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests"))
import gtlib  # noqa: E402
import test_python  # noqa: E402
import flight as bench_flight  # noqa: E402  (bench/flight.py: the flight recorder's section)
import sampler as bench_sampler  # noqa: E402  (bench/sampler.py: the sampler's section)
import lines as bench_lines  # noqa: E402  (bench/lines.py: the native source lines' section)
import cli as bench_cli  # noqa: E402  (bench/cli.py: the analyzer, export, ranks and rank-traces sections)

# Each section's figures, for the summary at the end.
RESULTS = {}

SETTINGS = [
    ("untraced", None),
    ("stacks off", {"GPUTRACE_STACK_DEPTH": "0"}),
    ("native stacks (32)", {"GPUTRACE_PYTHON": "0"}),
    ("native + Python stacks", {}),
]


def percentile(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * p))]


def run_once(exe, extdir, calls, depth, extra, workdir):
    out = os.path.join(workdir, "times.txt")
    env = gtlib.base_env({"PYTHONPATH": extdir, "PYTHONDONTWRITEBYTECODE": "1", "GPUTRACE_GPU_TIMING": "off",
                          "GPUTRACE_BUFFER_EVENTS": "131072",
                          "FAKECUDA_KERNEL_NS": "0",
                          "GPUTRACE_OUTPUT": os.path.join(workdir, "bench-%p.db")})
    if extra is not None:
        env.update(extra)
        env["LD_PRELOAD"] = gtlib.SHIM
    r = subprocess.run([exe, os.path.join(HERE, "py_workload.py"), str(calls), str(depth), out], env=env,
                       capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("bench: workload failed: %s" % r.stderr)
    with open(out) as f:
        times = [int(x) for x in f.read().split()]
    dropped = 0
    for fn in os.listdir(workdir):
        if fn.endswith(".db"):
            dropped += int(gtlib.query(os.path.join(workdir, fn),
                                       "SELECT value FROM meta WHERE key = 'dropped_events'")[0][0])
            os.unlink(os.path.join(workdir, fn))
    return times, dropped


def python_call_cost(args):
    found = test_python.interpreters()
    minor = sys.version_info[1] if sys.version_info[1] in found else max(found)
    exe, include = found[minor]
    extdir = test_python.build_ext(minor, include)
    results = {name: [] for name, _ in SETTINGS}
    drops = {name: 0 for name, _ in SETTINGS}
    with tempfile.TemporaryDirectory(prefix="gputrace-bench-") as d:
        for _ in range(args.rounds):
            for name, extra in SETTINGS:
                times, dropped = run_once(exe, extdir, args.calls, args.depth, extra, d)
                results[name] += times
                drops[name] += dropped
    base50 = statistics.median(results["untraced"])
    base99 = percentile(results["untraced"], 0.99)
    print("python-call-cost: Python 3.%d, %d launches x %d rounds, %d Python frames deep, GPU timing off"
          % (minor, args.calls, args.rounds, args.depth))
    print("  %-24s %10s %10s %12s %12s %8s" % ("setting", "p50 ns", "p99 ns", "added p50", "added p99", "dropped"))
    for name, _ in SETTINGS:
        xs = results[name]
        p50, p99 = statistics.median(xs), percentile(xs, 0.99)
        print("  %-24s %10.0f %10.0f %12s %12s %8d" % (
            name, p50, p99, "-" if name == "untraced" else "%+.0f" % (p50 - base50),
            "-" if name == "untraced" else "%+.0f" % (p99 - base99), drops[name]))
    py = statistics.median(results["native + Python stacks"]) - statistics.median(results["native stacks (32)"])
    print("  Python stacks add %+.0f ns per call over native stacks alone (p50)" % py)
    RESULTS["py_stacks_p50"] = statistics.median(results["native + Python stacks"]) - base50
    RESULTS["py_stacks_p99"] = percentile(results["native + Python stacks"], 0.99) - base99


C_SETTINGS = [
    ("untraced", None),
    ("standby", {"GPUTRACE_MODE": "standby"}),
    # a capture range set, the program never in one (launch_loop makes no
    # cudaProfilerStart): the standby branch
    ("capture range, outside", {"GPUTRACE_CAPTURE_RANGE": "cudaProfilerApi"}),
    ("stacks off", {"GPUTRACE_STACK_DEPTH": "0", "GPUTRACE_GPU_TIMING": "off"}),
    ("32-frame stacks", {"GPUTRACE_GPU_TIMING": "off"}),
    ("32-frame stacks + CUPTI", {}),
]


def run_c(n, depth, extra, workdir, keep=False, launch_ns=0, threads=1):
    out = os.path.join(workdir, "times.txt")
    env = gtlib.base_env({"FAKECUDA_KERNEL_NS": "0", "FAKECUDA_LAUNCH_NS": str(launch_ns),
                          "GPUTRACE_OUTPUT": os.path.join(workdir, "c-%p.db")})
    if extra is not None:
        env.update(extra)
        env["LD_PRELOAD"] = gtlib.SHIM
    r = subprocess.run([gtlib.prog("launch_loop"), str(n), str(depth), out, str(threads)], env=env,
                       capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("bench: launch_loop failed: %s" % r.stderr)
    with open(out) as f:
        times = [int(x) for x in f.read().split()]
    dbs = [os.path.join(workdir, fn) for fn in os.listdir(workdir) if fn.endswith(".db")]
    if not keep:
        for db in dbs:
            os.unlink(db)
    return times, int(r.stdout.split()[0]), dbs


def run_c_after_window(n, depth, workdir):
    """launch_loop in standby: a window opened around its warm-up launches
    and closed (its trace finished, CUPTI disabled, buffers freed) before
    the timed launches; their times, and the window's trace."""
    out = os.path.join(workdir, "times.txt")
    gate = os.path.join(workdir, "gate")
    os.makedirs(gate, exist_ok=True)
    for f in ("1", "2"):
        if os.path.exists(os.path.join(gate, f)):
            os.unlink(os.path.join(gate, f))
    ctl = os.path.join(workdir, "ctl")
    env = gtlib.base_env({"FAKECUDA_KERNEL_NS": "0", "GPUTRACE_OUTPUT": os.path.join(workdir, "w-%p.db"),
                          "GPUTRACE_MODE": "standby", "GPUTRACE_CONTROL_DIR": ctl, "LD_PRELOAD": gtlib.SHIM,
                          "LAUNCH_LOOP_GATE": gate})
    p = subprocess.Popen([gtlib.prog("launch_loop"), str(n), str(depth), out], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    if p.stdout.readline() != "ready\n":
        sys.exit("bench: launch_loop did not get ready: %s" % p.stderr.read())
    tenv = dict(os.environ, GPUTRACE_CONTROL_DIR=ctl)
    gt = os.path.join(gtlib.BUILD, "gputrace")
    t = subprocess.run([gt, "trigger", "--no-wait", "--duration", "300ms", str(p.pid)], env=tenv,
                       capture_output=True, text=True, timeout=60)
    if t.returncode != 0:
        sys.exit("bench: no window opened: %s" % t.stderr)
    open(os.path.join(gate, "1"), "w").close()
    if p.stdout.readline() != "warm\n":
        sys.exit("bench: launch_loop failed in its window: %s" % p.stderr.read())
    while True:  # until the window has closed (its trace finished, CUPTI off)
        listed = subprocess.run([gt, "trigger", "--list"], env=tenv, capture_output=True, text=True).stdout
        if "%d standby" % p.pid in listed:
            break
        time.sleep(0.05)
    open(os.path.join(gate, "2"), "w").close()
    rest, err = p.communicate(timeout=600)
    if p.returncode != 0:
        sys.exit("bench: launch_loop failed: %s" % err)
    with open(out) as f:
        times = [int(x) for x in f.read().split()]
    dbs = [os.path.join(workdir, fn) for fn in os.listdir(workdir) if fn.startswith("w-") and fn.endswith(".db")]
    calls = sum(gtlib.query(db, "SELECT count(*) FROM api_calls WHERE name = 'cudaLaunchKernel'")[0][0] for db in dbs)
    for db in dbs:
        os.unlink(db)
    return times, calls


def c_call_cost(args):
    results = {name: [] for name, _ in C_SETTINGS}
    results["standby, after a window"] = []
    in_window = []
    with tempfile.TemporaryDirectory(prefix="gputrace-bench-") as d:
        for _ in range(args.rounds):
            for name, extra in C_SETTINGS:
                results[name] += run_c(args.calls, 40, extra, d)[0]
            times, calls = run_c_after_window(args.calls, 40, d)
            results["standby, after a window"] += times
            in_window.append(calls)
    base50, base99 = statistics.median(results["untraced"]), percentile(results["untraced"], 0.99)
    print("c-call-cost: %d launches x %d rounds from C, 40 native frames deep, launch cost 0"
          % (args.calls, args.rounds))
    print("  %-24s %10s %10s %12s %12s" % ("setting", "p50 ns", "p99 ns", "added p50", "added p99"))
    for name in [n for n, _ in C_SETTINGS] + ["standby, after a window"]:
        xs = results[name]
        p50, p99 = statistics.median(xs), percentile(xs, 0.99)
        print("  %-24s %10.0f %10.0f %12s %12s" % (name, p50, p99, "-" if name == "untraced" else
                                                    "%+.0f" % (p50 - base50), "-" if name == "untraced" else
                                                    "%+.0f" % (p99 - base99)))
        RESULTS["c " + name] = (p50 - base50, p99 - base99)
    print("  (after a window: a 300 ms window recorded the %s warm-up launches of each round, with CUPTI, and "
          "closed before the timed launches)" % "/".join(str(c) for c in in_window))
    cupti50 = statistics.median(results["32-frame stacks + CUPTI"]) - statistics.median(results["32-frame stacks"])
    cupti99 = percentile(results["32-frame stacks + CUPTI"], 0.99) - percentile(results["32-frame stacks"], 0.99)
    print("  GPU timing (CUPTI) adds %+.0f ns p50, %+.0f ns p99 per call on the host here; on a real GPU its "
          "kernel instrumentation adds more (docs/performance.md)" % (cupti50, cupti99))
    RESULTS["cupti"] = (cupti50, cupti99)


def threads(args):
    """Several threads launching at once, each timing its own calls: the
    added cost per call should not grow with the threads (a shared lock,
    or a cache line they all write, would make it)."""
    n = args.calls
    print("threads: T threads launching at once, %d launches each x %d rounds, 40 native frames deep, "
          "32-frame stacks, GPU timing off" % (n, args.rounds))
    print("  %-8s %10s %10s %12s %12s %8s" % ("threads", "p50 ns", "p99 ns", "added p50", "added p99", "dropped"))
    added = []
    with tempfile.TemporaryDirectory(prefix="gputrace-bench-") as d:
        for nthreads in (1, 2, 4):
            plain, traced, dropped = [], [], 0
            for _ in range(args.rounds):
                plain += run_c(n, 40, None, d, threads=nthreads)[0]
                times, _, dbs = run_c(n, 40, {"GPUTRACE_GPU_TIMING": "off"}, d, keep=True, threads=nthreads)
                traced += times
                for db in dbs:
                    dropped += int(gtlib.query(db, "SELECT value FROM meta WHERE key = 'dropped_events'")[0][0])
                    os.unlink(db)
            p50, p99 = statistics.median(traced), percentile(traced, 0.99)
            b50, b99 = statistics.median(plain), percentile(plain, 0.99)
            added.append(p50 - b50)
            print("  %-8d %10.0f %10.0f %12s %12s %8d" % (nthreads, p50, p99, "%+.0f" % (p50 - b50),
                                                          "%+.0f" % (p99 - b99), dropped))
    print("  (this machine has %d CPUs: with more threads than CPUs, the p99 shows them taking turns)"
          % os.cpu_count())
    RESULTS["threads"] = added


def run_cpu(n, depth, extra, workdir, launch_ns):
    """launch_loop once, its whole CPU taken from the kernel (wait4): user
    and system time of every thread, the tracer's included. Returns
    (user_ns, sys_ns, loop_cpu_ns, meta or None, trace bytes)."""
    env = gtlib.base_env({"FAKECUDA_KERNEL_NS": "0", "FAKECUDA_LAUNCH_NS": str(launch_ns),
                          "GPUTRACE_OUTPUT": os.path.join(workdir, "cost-%p.db")})
    if extra is not None:
        env.update(extra)
        env["LD_PRELOAD"] = gtlib.SHIM
    p = subprocess.Popen([gtlib.prog("launch_loop"), str(n), str(depth), os.devnull], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = p.stdout.read(), p.stderr.read()
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        sys.exit("bench: launch_loop failed: %s" % err.decode(errors="replace"))
    loop_cpu = int(out.split()[1])
    meta, size = None, 0
    for fn in os.listdir(workdir):
        if fn.endswith(".db"):
            db = os.path.join(workdir, fn)
            meta = dict(gtlib.query(db, "SELECT key, value FROM meta"))
            size = os.path.getsize(db)
            os.unlink(db)
    return int(ru.ru_utime * 1e9), int(ru.ru_stime * 1e9), loop_cpu, meta, size


def total_cost(args):
    """What the tracer costs the whole process in CPU, per recorded call:
    traced minus untraced user + system time of every thread, from the
    kernel, over --cost-events launches of 1 us simulated launch cost, 40
    frames deep, default stacks, GPU timing off; rounds interleaved,
    medians. The split comes from the program (its launching thread's CPU
    in the loop) and from the tracer's own accounts in meta (the writer
    thread's CPU; the finish: indexes and folding the WAL); the rest is
    start-up and exit. Then once with GPU timing on, for CUPTI's share and
    the trace's size with GPU records."""
    n, rounds = args.cost_events, max(1, args.cost_rounds)
    rows = {k: [] for k in ("total", "sys", "thread", "writer", "writer_sys", "finish", "index", "fold", "size",
                            "gpu_total", "gpu_size")}
    dropped = 0
    with tempfile.TemporaryDirectory(prefix="gputrace-bench-") as d:
        for _ in range(rounds):
            bu, bs, bl, _, _ = run_cpu(n, 40, None, d, 1000)
            tu, ts, tl, meta, size = run_cpu(n, 40, {"GPUTRACE_GPU_TIMING": "off"}, d, 1000)
            gu, gs, _, gmeta, gsize = run_cpu(n, 40, {}, d, 1000)
            calls = int(meta["events_written"])
            dropped += int(meta["dropped_events"]) + int(gmeta["dropped_events"])
            rows["total"].append(((tu + ts) - (bu + bs)) / n)
            rows["sys"].append((ts - bs) / n)
            rows["thread"].append((tl - bl) / n)
            rows["writer"].append(int(meta["tracer_writer_cpu_ns"]) / n)
            rows["writer_sys"].append(int(meta["tracer_writer_sys_ns"]) / n)
            rows["finish"].append(int(meta["tracer_finish_cpu_ns"]) / n)
            rows["index"].append(int(meta["tracer_index_ns"]) / n)
            rows["fold"].append(int(meta["tracer_fold_ns"]) / n)
            rows["size"].append(size / max(1, calls))
            rows["gpu_total"].append(((gu + gs) - (bu + bs)) / n)
            rows["gpu_size"].append(gsize / max(1, int(gmeta["events_written"])))
    m = {k: statistics.median(v) for k, v in rows.items()}
    print("total-cost: %d launches x %d rounds, 1 us simulated launch cost, 40 frames deep, default stacks; "
          "whole-process CPU (user + system, every thread) traced minus untraced" % (n, rounds))
    print("  GPU timing off            %6.0f ns CPU per call (%.0f ns of it system time)" % (m["total"], m["sys"]))
    print("    launching thread        %6.0f ns" % m["thread"])
    print("    writer thread           %6.0f ns (%.0f ns system: sleeping and waking)" % (m["writer"], m["writer_sys"]))
    print("    finish                  %6.0f ns (indexes %.0f ns, folding the WAL %.0f ns, wall)"
          % (m["finish"], m["index"], m["fold"]))
    print("    start-up, exit, rest    %6.0f ns" % (m["total"] - m["thread"] - m["writer"] - m["finish"]))
    print("  GPU timing on             %6.0f ns CPU per call: CUPTI and the GPU records add %.0f ns"
          % (m["gpu_total"], m["gpu_total"] - m["total"]))
    print("  trace size                %.1f B per call, GPU timing off; %.1f B with GPU timing on (indexes included)"
          % (m["size"], m["gpu_size"]))
    print("  events dropped            %d" % dropped)
    RESULTS["total_cost"] = (m["total"], m["gpu_total"], m["gpu_size"], dropped)


NVTX_SETTINGS = [
    ("untraced", None),
    ("stacks off", {"GPUTRACE_STACK_DEPTH": "0"}),
    ("32-frame stacks", {}),
]


def nvtx(args):
    results = {name: [] for name, _ in NVTX_SETTINGS}
    drops = {name: 0 for name, _ in NVTX_SETTINGS}
    with tempfile.TemporaryDirectory(prefix="gputrace-bench-") as d:
        out = os.path.join(d, "times.txt")
        for _ in range(args.rounds):
            for name, extra in NVTX_SETTINGS:
                env = gtlib.base_env({"FAKECUDA_KERNEL_NS": "0", "GPUTRACE_GPU_TIMING": "off",
                                      "GPUTRACE_BUFFER_EVENTS": "1048576",
                                      "GPUTRACE_OUTPUT": os.path.join(d, "n-%p.db")})
                env.pop("NVTX_INJECTION64_PATH", None)
                if extra is not None:
                    env.update(extra)
                    env["LD_PRELOAD"] = gtlib.SHIM
                    env["NVTX_INJECTION64_PATH"] = gtlib.SHIM
                r = subprocess.run([gtlib.prog("nvtx_loop"), str(args.nvtx_pairs), "40", out], env=env,
                                   capture_output=True, text=True)
                if r.returncode != 0:
                    sys.exit("bench: nvtx_loop failed: %s" % r.stderr)
                with open(out) as f:
                    results[name] += [int(x) for x in f.read().split()]
                for fn in os.listdir(d):
                    if fn.endswith(".db"):
                        db = os.path.join(d, fn)
                        m = dict(gtlib.query(db, "SELECT key, value FROM meta"))
                        drops[name] += int(m["dropped_events"])
                        n = gtlib.query(db, "SELECT count(*) FROM ranges WHERE name = 'bench-range'")[0][0]
                        if int(m["dropped_events"]) == 0 and n != 2000 + args.nvtx_pairs:
                            sys.exit("bench: nvtx_loop: %d ranges recorded, %d made" % (n, 2000 + args.nvtx_pairs))
                        os.unlink(db)
    base50, base99 = statistics.median(results["untraced"]), percentile(results["untraced"], 0.99)
    print("nvtx: %d push/pop pairs x %d rounds from C, 40 native frames deep, timed around each pair"
          % (args.nvtx_pairs, args.rounds))
    print("  %-24s %10s %10s %12s %12s %8s" % ("setting", "p50 ns", "p99 ns", "added p50", "added p99", "dropped"))
    for name, _ in NVTX_SETTINGS:
        xs = results[name]
        p50, p99 = statistics.median(xs), percentile(xs, 0.99)
        print("  %-24s %10.0f %10.0f %12s %12s %8d" % (name, p50, p99, "-" if name == "untraced" else
                                                       "%+.0f" % (p50 - base50), "-" if name == "untraced" else
                                                       "%+.0f" % (p99 - base99), drops[name]))
        RESULTS["nvtx " + name] = (p50 - base50, p99 - base99)


def summary():
    """Each figure beside its target (docs/performance.md)."""
    rows = []

    def row(what, measured, target, ok):
        rows.append((what, measured, target, "met" if ok else "MISSED"))
    if "c standby" in RESULTS:
        v = RESULTS["c standby"]
        row("per call, standby (no window)", "%+.0f ns p50, %+.0f ns p99" % v, "10 ns", v[0] <= 10)
    if "c standby, after a window" in RESULTS:
        v, s = RESULTS["c standby, after a window"], RESULTS["c standby"]
        row("per call, standby after a window", "%+.0f ns p50 (standby %+.0f)" % (v[0], s[0]), "standby's",
            v[0] <= max(s[0], 10) + 5)
    if "c capture range, outside" in RESULTS:
        v, s = RESULTS["c capture range, outside"], RESULTS["c standby"]
        row("per call, outside a capture range", "%+.0f ns p50 (standby %+.0f)" % (v[0], s[0]), "standby's",
            v[0] <= max(s[0], 10) + 5)
    if "c stacks off" in RESULTS:
        v = RESULTS["c stacks off"]
        row("per call, stacks off (C)", "%+.0f ns p50, %+.0f ns p99" % v, "120 ns", v[0] <= 120)
        v = RESULTS["c 32-frame stacks"]
        row("per call, 32-frame stacks (C)", "%+.0f ns p50, %+.0f ns p99" % v, "600 ns", v[0] <= 600)
        v = RESULTS["cupti"]
        row("GPU timing (CUPTI), apart", "%+.0f ns p50, %+.0f ns p99" % v, "reported", True)
    if "py_stacks_p50" in RESULTS:
        row("per call, native + Python stacks", "%+.0f ns p50, %+.0f ns p99" % (RESULTS["py_stacks_p50"],
                                                                                RESULTS["py_stacks_p99"]),
            "1.5 us", RESULTS["py_stacks_p50"] <= 1500)
    if "paced" in RESULTS:
        rate, dropped = RESULTS["paced"]
        row("writer, paced", "%.2fM events/s, %d dropped" % (rate / 1e6, dropped), "1M/s, none dropped",
            rate >= 1e6 and dropped == 0)
        rate, dropped = RESULTS["unpaced"]
        row("writer, unpaced (its ceiling)", "%.2fM events/s written" % (rate / 1e6), "1M/s", rate >= 1e6)
        row("trace size, GPU timing off", "%.1f B/event" % RESULTS["size_off"], "64 B", RESULTS["size_off"] <= 64)
        row("trace size, GPU timing on", "%.1f B/event" % RESULTS["size_on"], "64 B", RESULTS["size_on"] <= 64)
        row("added peak resident memory", "%+.1f MiB" % RESULTS["rss"], "64 MiB", RESULTS["rss"] < 64)
        row("  the same, GPU timing on", "%+.1f MiB" % RESULTS["rss_gpu"], "64 MiB", RESULTS["rss_gpu"] < 64)
        row("  GPU timing on, a 5x longer run", "%+.1f MiB" % RESULTS["rss_long"], "64 MiB", RESULTS["rss_long"] < 64)
    if "nvtx stacks off" in RESULTS:
        v = RESULTS["nvtx stacks off"]
        row("NVTX push/pop pair, stacks off", "%+.0f ns p50, %+.0f ns p99" % v, "150 ns", v[0] <= 150)
        v = RESULTS["nvtx 32-frame stacks"]
        row("NVTX push/pop pair, 32-frame stacks", "%+.0f ns p50, %+.0f ns p99" % v, "reported", True)
    if "threads" in RESULTS:
        r = RESULTS["threads"]
        row("per call, 1/2/4 threads at once", "/".join("%+.0f" % x for x in r) + " ns p50",
            "no growth with threads", max(r) <= r[0] * 1.25 + 20)
    if "ranks" in RESULTS:
        n, steps, secs, rss, size = RESULTS["ranks"]
        row("ranks: %d summaries merged (%d collectives each)" % (n, steps), "%.2f s, %.0f MiB" % (secs, rss),
            "5 s, 512 MiB", secs < 5 and rss < 512)
        row("ranks: one summary", "%.0f KiB" % (size / 1024), "1 MiB", size < 1 << 20)
    if "rank_traces" in RESULTS:
        n, events, ratio, cpu_ratio = RESULTS["rank_traces"]
        row("ranks: %d traces of %d calls, -j 2" % (n, events),
            "%.1fx one trace's time (CPU %.1fx)" % (ratio, cpu_ratio), "40x (for 64)", ratio <= 40 * n / 64)
    if "total_cost" in RESULTS:
        total, gpu_total, gpu_size, dropped = RESULTS["total_cost"]
        row("total CPU per call (whole process)", "%.0f ns, %d dropped" % (total, dropped), "1 us",
            total <= 1000 and dropped == 0)
        row("  with GPU timing on", "%.0f ns" % gpu_total, "reported", True)
        row("trace size with GPU timing, indexed", "%.1f B/call" % gpu_size, "40 B", gpu_size <= 40)
    if "analyzer" in RESULTS:
        n, secs, rss = RESULTS["analyzer"]
        row("report on %dM events" % (n // 1000000), "%.1f s, %.0f MiB" % (secs, rss), "10 s, 512 MiB",
            secs < 10 and rss < 512)
        n, secs, rss, size, ratio = RESULTS["analyzer_html"]
        row("  report --format html", "%.1f s (%.2fx text's CPU), %.0f MiB, %.1f MB" % (secs, ratio, rss, size / 1e6),
            "10 s, 512 MiB", secs < 10 and rss < 512)
        n, secs, rss = RESULTS["analyzer_info"]
        row("  info", "%.1f s, %.0f MiB" % (secs, rss), "10 s", secs < 10)
    if "export" in RESULTS:
        n, secs, size, rss = RESULTS["export"]
        row("export (Perfetto) of %dM calls" % (n // 1000000), "%.1f s, %.0f MB, %.0f MiB" % (secs, size / 1e6, rss),
            "15 s, 400 MB, 600 MiB", secs < 15 and size < 400e6 and rss < 600)
        n, secs, size, rss = RESULTS["export_gz"]
        row("  the same, .gz", "%.1f s, %.0f MB, %.0f MiB" % (secs, size / 1e6, rss), "reported", True)
    if "sampler_core_pct_all" in RESULTS:
        row("sampler, 16 Python threads active", "%.3f%% of a core, %.0f rounds a second"
            % (RESULTS["sampler_core_pct_all"], RESULTS["sampler_rate_all"]), "1%",
            RESULTS["sampler_core_pct_all"] < 1)
        row("  the same, no budget", "%.3f%% of a core, %.0f rounds a second"
            % (RESULTS["sampler_core_pct_nobudget"], RESULTS["sampler_rate_nobudget"]), "1% at 100 a second",
            RESULTS["sampler_core_pct_nobudget"] < 1)
        row("  2 active, 14 waiting", "%.3f%% of a core" % RESULTS["sampler_core_pct_two"], "1%",
            RESULTS["sampler_core_pct_two"] < 1)
        if "sampler_core_pct_nocuda" in RESULTS:
            row("  16 Python threads active, none calling CUDA", "%.3f%% of a core"
                % RESULTS["sampler_core_pct_nocuda"], "1%", RESULTS["sampler_core_pct_nocuda"] < 1)
        if "sampler_core_pct_native_nobudget" in RESULTS:
            row("  16 native threads active, no budget", "%.3f%% of a core, %.0f rounds a second"
                % (RESULTS["sampler_core_pct_native_nobudget"], RESULTS["sampler_rate_native_nobudget"]),
                "1% at 100 a second", RESULTS["sampler_core_pct_native_nobudget"] < 1)
        if "sampler_core_pct_native" in RESULTS:
            row("  16 native threads active, blocked stacks unwound", "%.3f%% of a core"
                % RESULTS["sampler_core_pct_native"], "1%", RESULTS["sampler_core_pct_native"] < 1)
        if "sampler_core_pct_perf" in RESULTS:
            row("  16 active, native stacks by perf", "%.3f%% of a core" % RESULTS["sampler_core_pct_perf"],
                "1%", RESULTS["sampler_core_pct_perf"] < 1)
        row("  per call, sampling on / off", "%.3f (p50 ratio)" % RESULTS["sampler_call_ratio"], "1.00 (noise)",
            RESULTS["sampler_call_ratio"] <= 1.05)
        row("  per call, perf sampling / off", "%.3f (p50 ratio)" % RESULTS["sampler_call_ratio_perf"],
            "1.00 (noise)", RESULTS["sampler_call_ratio_perf"] <= 1.05)
    if not rows:
        return
    print("summary against the targets:")
    for r in rows:
        print("  %-34s %-32s %-22s %s" % r)


def writer(args):
    with tempfile.TemporaryDirectory(prefix="gputrace-bench-") as d:
        for pace in (args.writer_pace_ns,):
            t0 = time.monotonic()
            _, _, dbs = run_c(args.writer_events, 1, {"GPUTRACE_GPU_TIMING": "off"}, d, keep=True, launch_ns=pace)
            wall = time.monotonic() - t0
            meta = dict(gtlib.query(dbs[0], "SELECT key, value FROM meta"))
            os.unlink(dbs[0])
            made = int(meta["events_written"]) + int(meta["dropped_events"])
            secs = (int(meta["end_ns"]) - int(meta["start_ns"])) / 1e9
            print("writer, paced: %d launches of %d ns each: %.0f events/s offered over %.2f s of recording, "
                  "%d dropped (%.1f%%)" % (made, pace, made / secs, secs, int(meta["dropped_events"]),
                                          100.0 * int(meta["dropped_events"]) / max(1, made)))
            RESULTS["paced"] = (made / secs, int(meta["dropped_events"]))
        _, rss_plain, _ = run_c(args.writer_events, 1, None, d)
        _, rss_traced, dbs = run_c(args.writer_events, 1, {"GPUTRACE_GPU_TIMING": "off"}, d, keep=True)
        db = dbs[0]
        meta = dict(gtlib.query(db, "SELECT key, value FROM meta"))
        written, dropped = int(meta["events_written"]), int(meta["dropped_events"])
        secs = (int(meta["end_ns"]) - int(meta["start_ns"])) / 1e9
        size = os.path.getsize(db)
        report_s, _, report_rss, report_status = bench_cli.timed_report(db)
        os.unlink(db)
        # GPU timing on (CUPTI), paced so nothing drops: what a GPU-timed
        # trace costs per event, the GPU records included.
        _, rss_gpu, dbs = run_c(args.writer_events, 1, {}, d, keep=True, launch_ns=args.gpu_pace_ns)
        gpu_meta = dict(gtlib.query(dbs[0], "SELECT key, value FROM meta"))
        gpu_size = os.path.getsize(dbs[0])
        gpu_written = int(gpu_meta["events_written"])
        gpu_ops = gtlib.query(dbs[0], "SELECT count(*) FROM gpu_ops")[0][0]
        in_row = gtlib.query(dbs[0], "SELECT count(*) FROM events WHERE g_dur_ns IS NOT NULL")[0][0]
        os.unlink(dbs[0])
    print("writer, unpaced: %d launches from one thread, as fast as it can, GPU timing off" % args.writer_events)
    print("  events written            %d in %.2f s of recording: %.0f events/s" % (written, secs, written / secs))
    print("  events dropped            %d (%.1f%%)" % (dropped, 100.0 * dropped / max(1, written + dropped)))
    print("  trace size                %.1f bytes per event written (%d bytes)" % (size / max(1, written), size))
    print("  added peak resident       %+.1f MiB (%d kB traced, %d kB untraced)"
          % ((rss_traced - rss_plain) / 1024, rss_traced, rss_plain))
    print("  gputrace report           %.2f s, peak resident %.1f MiB, status %d"
          % (report_s, report_rss, report_status))
    gpu_secs = (int(gpu_meta["end_ns"]) - int(gpu_meta["start_ns"])) / 1e9
    print("writer, GPU timing on, paced at %d ns (%.0f launches/s): %d events written, %d dropped, %d CUPTI "
          "records dropped; %d GPU records in their call's row, %d in gpu_ops"
          % (args.gpu_pace_ns, gpu_written / gpu_secs, gpu_written, int(gpu_meta["dropped_events"]),
             int(gpu_meta["cupti_dropped_records"]), in_row, gpu_ops))
    print("  trace size                %.1f bytes per event, GPU records included" % (gpu_size / max(1, gpu_written)))
    print("  added peak resident       %+.1f MiB (CUPTI's buffers and the rows waiting for their records "
          "included)" % ((rss_gpu - rss_plain) / 1024))
    RESULTS["rss_gpu"] = (rss_gpu - rss_plain) / 1024
    # A run five times as long: the added memory stays where it was.
    with tempfile.TemporaryDirectory(prefix="gputrace-bench-") as d:
        _, rss_long_plain, _ = run_c(args.long_events, 1, None, d, launch_ns=args.gpu_pace_ns)
        _, rss_long, _ = run_c(args.long_events, 1, {}, d, launch_ns=args.gpu_pace_ns)
    print("  over %d launches        %+.1f MiB added peak resident, GPU timing on"
          % (args.long_events, (rss_long - rss_long_plain) / 1024))
    RESULTS["rss_long"] = (rss_long - rss_long_plain) / 1024
    RESULTS["gpu_drops"] = int(gpu_meta["dropped_events"]) + int(gpu_meta["cupti_dropped_records"])
    RESULTS["unpaced"] = (written / secs, dropped)
    RESULTS["size_off"] = size / max(1, written)
    RESULTS["size_on"] = gpu_size / max(1, gpu_written)
    RESULTS["rss"] = (rss_traced - rss_plain) / 1024


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--calls", type=int, default=50000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--depth", type=int, default=12)
    ap.add_argument("--writer-events", type=int, default=1000000)
    ap.add_argument("--writer-pace-ns", type=int, default=500)
    ap.add_argument("--gpu-pace-ns", type=int, default=1000)
    ap.add_argument("--long-events", type=int, default=5000000)
    ap.add_argument("--analyzer-events", type=int, default=10000000)
    ap.add_argument("--cost-events", type=int, default=500000)
    ap.add_argument("--cost-rounds", type=int, default=3)
    ap.add_argument("--nvtx-pairs", type=int, default=20000)
    ap.add_argument("--export-events", type=int, default=5000000)
    ap.add_argument("--lines-frames", type=int, default=5000)
    ap.add_argument("--rank-summaries", type=int, default=1024)
    ap.add_argument("--rank-steps", type=int, default=1000)
    ap.add_argument("--rank-traces", type=int, default=64)
    ap.add_argument("--rank-trace-events", type=int, default=1000000)
    ap.add_argument("--sampler-threads", type=int, default=16)
    ap.add_argument("--sampler-seconds", type=float, default=5.0)
    ap.add_argument("--flight-calls", type=int, default=1000000)
    ap.add_argument("--flight-pace-ns", type=int, default=10000)
    ap.add_argument("--flight-seconds", type=float, default=12.0)
    ap.add_argument("--only", choices=("python-call-cost", "c-call-cost", "writer", "total-cost", "threads", "nvtx", "flight",
                                       "lines", "analyzer", "export", "ranks", "rank-traces", "sampler"))
    ap.add_argument("--json", help="also write the figures to this file")
    args = ap.parse_args()
    if not os.path.exists(gtlib.SHIM):
        sys.exit("bench: build first (make)")
    print("machine: %s, %d CPUs" % (os.uname().machine, os.cpu_count()))
    sections = [("python-call-cost", python_call_cost), ("c-call-cost", c_call_cost), ("writer", writer),
                ("total-cost", total_cost), ("threads", threads), ("nvtx", nvtx),
                ("lines", lambda a: bench_lines.lines(a, RESULTS)),
                ("analyzer", lambda a: bench_cli.analyzer(a, RESULTS)), ("export", lambda a: bench_cli.export(a, RESULTS)),
                ("ranks", lambda a: bench_cli.ranks(a, RESULTS)),
                ("rank-traces", lambda a: bench_cli.rank_traces(a, RESULTS)),
                ("sampler", lambda a: bench_sampler.sampler(a, run_once, percentile, RESULTS)),
                ("flight", lambda a: bench_flight.flight(a, run_c, percentile, RESULTS))]
    for name, fn in sections:
        if args.only in (None, name):
            fn(args)
    summary()
    if args.json:
        with open(args.json, "w") as f:
            json.dump(RESULTS, f, indent=1)


if __name__ == "__main__":
    main()

"""bench/run.py's flight section: the flight recorder (GPUTRACE_FLIGHT,
docs/standby.md) on bench/launch_loop.c, 40 native frames deep, launch cost
0, every figure against the untraced run of the same invocation.

1. Cost per call: untraced; standby; standby with the flight recorder (the
   hooks record into the rings, 32-frame stacks, no writer); recording
   (32-frame stacks, GPU timing off: the rings and the writer). Interleaved
   rounds; p50 and p99 of all calls, and the added cost.
2. Memory held: the process's peak resident memory with the flight
   recorder over --flight-calls launches, against standby's.
3. History kept: launches paced at --flight-pace-ns (default 10,000: 100k
   calls a second) for --flight-seconds (default 12), GPUTRACE_FLIGHT=10s
   (256 MiB of rings by default); `gputrace trigger` opens a window near
   the end: how many seconds before the trigger the window reaches back,
   and how many launches it holds from them."""
import os
import statistics
import subprocess
import sys
import tempfile
import time

import gtlib

FLIGHT_SETTINGS = [
    ("untraced", None),
    ("standby", {"GPUTRACE_MODE": "standby"}),
    ("flight (rings, no writer)", {"GPUTRACE_MODE": "standby", "GPUTRACE_FLIGHT": "30s",
                                   "GPUTRACE_GPU_TIMING": "off"}),
    ("recording (32-frame stacks)", {"GPUTRACE_GPU_TIMING": "off"}),
]


def _cpu_per_call(n, extra, d):
    """CPU (user + system, every thread) per launch of a whole run of n
    launches, from the kernel's accounting of the child."""
    env = gtlib.base_env({"FAKECUDA_KERNEL_NS": "0", "GPUTRACE_OUTPUT": os.path.join(d, "cpu-%p.db")})
    if extra is not None:
        env.update(extra)
        env["LD_PRELOAD"] = gtlib.SHIM
    p = subprocess.Popen([gtlib.prog("launch_loop"), str(n), "40", os.path.join(d, "cpu.txt")], env=env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = status
    for f in os.listdir(d):
        if f.startswith("cpu-") and f.endswith(".db"):
            os.unlink(os.path.join(d, f))
    return (ru.ru_utime + ru.ru_stime) * 1e9 / n


def _history(args, d):
    ctl = os.path.join(d, "ctl")
    n = int(args.flight_seconds * 1e9 / args.flight_pace_ns)
    env = gtlib.base_env({"FAKECUDA_KERNEL_NS": "0", "FAKECUDA_LAUNCH_NS": str(args.flight_pace_ns),
                          "GPUTRACE_MODE": "standby", "GPUTRACE_FLIGHT": "10s", "GPUTRACE_CONTROL_DIR": ctl,
                          "GPUTRACE_GPU_TIMING": "off", "GPUTRACE_OUTPUT": os.path.join(d, "h-%p.db"),
                          "LD_PRELOAD": gtlib.SHIM})
    p = subprocess.Popen([gtlib.prog("launch_loop"), str(n), "40", os.path.join(d, "h.txt")], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # the trigger at 90% of the run's planned length, once the run has had
    # more than 10 s
    time.sleep(max(args.flight_seconds * 0.9, 10.5))
    t = subprocess.run([gtlib.GPUTRACE, "trigger", "--duration", "100ms", str(p.pid)],
                       env=dict(os.environ, GPUTRACE_CONTROL_DIR=ctl), capture_output=True, text=True, timeout=120)
    out, err = p.communicate(timeout=600)
    if t.returncode != 0 or p.returncode != 0:
        sys.exit("bench: flight history run failed: %s %s" % (t.stderr, err))
    db = [os.path.join(d, f) for f in os.listdir(d) if f.startswith("h-") and f.endswith(".db")][0]
    m = dict(gtlib.query(db, "SELECT key, value FROM meta"))
    ws, fired = int(m["window_start_ns"]), int(m["trigger_ns"])
    before = gtlib.query(db, "SELECT count(*), min(start_ns), max(start_ns) FROM api_calls "
                             "WHERE name = 'cudaLaunchKernel' AND start_ns < ?", fired)[0]
    rate = (before[0] - 1) / ((before[2] - before[1]) / 1e9) if before[0] > 1 else 0
    return {"history_s": (fired - ws) / 1e9, "launches": before[0], "rate": rate,
            "wanted": 10.0 * rate, "bytes_held": int(m["flight_bytes_held"]),
            "complete_from": m["flight_complete_from"]}


def flight(args, run_c, percentile, results_out):
    results = {name: [] for name, _ in FLIGHT_SETTINGS}
    rss = {"standby": [], "flight (rings, no writer)": []}
    with tempfile.TemporaryDirectory(prefix="gputrace-bench-") as d:
        for _ in range(args.rounds):
            for name, extra in FLIGHT_SETTINGS:
                times, peak_kb, _ = run_c(args.calls, 40, extra, d)
                results[name] += times
        cpu = {name: [] for name, _ in FLIGHT_SETTINGS}
        for _ in range(2):
            for name in rss:
                rss[name].append(run_c(args.flight_calls, 40, dict(FLIGHT_SETTINGS)[name], d)[1])
            for name, extra in FLIGHT_SETTINGS:
                cpu[name].append(_cpu_per_call(args.flight_calls, extra, d))
        hist = _history(args, d)
    base50, base99 = statistics.median(results["untraced"]), percentile(results["untraced"], 0.99)
    print("flight: %d launches x %d rounds from C, 40 native frames deep, launch cost 0" % (args.calls, args.rounds))
    print("  %-28s %10s %10s %12s %12s" % ("setting", "p50 ns", "p99 ns", "added p50", "added p99"))
    for name, _ in FLIGHT_SETTINGS:
        xs = results[name]
        p50, p99 = statistics.median(xs), percentile(xs, 0.99)
        print("  %-28s %10.0f %10.0f %12s %12s" % (name, p50, p99, "-" if name == "untraced" else
                                                    "%+.0f" % (p50 - base50), "-" if name == "untraced" else
                                                    "%+.0f" % (p99 - base99)))
        results_out["flight " + name] = (p50 - base50, p99 - base99)
    base = statistics.median(cpu["untraced"])
    print("  whole process's CPU per launch over %d launches (user + system, all threads: the writer, SQLite and "
          "the finish included):" % args.flight_calls)
    for name, _ in FLIGHT_SETTINGS[1:]:
        v = statistics.median(cpu[name]) - base
        print("    %-28s %+8.0f ns" % (name, v))
        results_out["flight cpu " + name] = v
    held = (statistics.median(rss["flight (rings, no writer)"]) - statistics.median(rss["standby"])) / 1024
    print("  memory held: %+.1f MiB peak resident over standby after %d launches (one thread; the rings' cap "
          "is 256 MiB, a thread's ring at most half of it)" % (held, args.flight_calls))
    results_out["flight_rss_mib"] = held
    print("  history: %.0f launches/s for %.1f s; the window reaches back %.2f s before its trigger with %d "
          "launches (%.0f%% of the last 10 s's %.0f), rings holding %.1f MiB (%s)"
          % (hist["rate"], args.flight_seconds, hist["history_s"], hist["launches"],
             100.0 * hist["launches"] / hist["wanted"] if hist["wanted"] else 0, hist["wanted"],
             hist["bytes_held"] / 2 ** 20,
             "older calls written over" if hist["complete_from"] == "overwritten" else "nothing written over"))
    results_out["flight_history"] = hist

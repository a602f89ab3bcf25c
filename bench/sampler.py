"""bench/run.py's sampler section: the host sampler's cost (GPUTRACE_SAMPLE_HZ,
GPUTRACE_SAMPLE_BUDGET, docs/performance.md), on bench/py_threads.py and
bench/native_threads.c, every figure from the trace's own meta.

1. Python threads, 12 frames deep, at 100 Hz: 16 busy (at the default
   budget and with none), 2 busy of 16, 16 that never call CUDA, and with
   GPUTRACE_SAMPLE_NATIVE=perf: the sampler thread's CPU as a share of one
   core, the rounds a second made, the samples.
2. Native threads blocked in ever new stacks (-O2, no -g), with the
   default budget and with none.
3. The cost per call of python-call-cost's workload with sampling off, at
   100 Hz, and with perf callchains."""
import os
import statistics
import subprocess
import sys
import tempfile

import gtlib
import test_python

HERE = os.path.dirname(os.path.abspath(__file__))


def sampler(args, run_once, percentile, results):
    """The section; run_once and percentile are bench/run.py's, its figures go
    into results."""
    found = test_python.interpreters()
    minor = sys.version_info[1] if sys.version_info[1] in found else max(found)
    exe, include = found[minor]
    extdir = test_python.build_ext(minor, include)
    with tempfile.TemporaryDirectory(prefix="gputrace-bench-") as d:
        print("sampler: Python 3.%d, %d threads x %.0f s, 12 frames deep, GPUTRACE_SAMPLE_HZ=100"
              % (minor, args.sampler_threads, args.sampler_seconds))
        # "nocuda": threads that never call CUDA (loaders), found in the
        # interpreter's list of threads (every thread sampled by default)
        # "nobudget": the same 16 threads with GPUTRACE_SAMPLE_BUDGET=0, at
        # the rate asked whatever it costs (the others run at the default
        # budget, 1% of a core, which slows the rate when rounds cost more)
        for active, key, native in ((args.sampler_threads, "all", "blocked"),
                                    (args.sampler_threads, "nobudget", "blocked"), (2, "two", "blocked"),
                                    (args.sampler_threads, "nocuda", "blocked"),
                                    (args.sampler_threads, "perf", "perf")):
            env = gtlib.base_env({"PYTHONPATH": extdir, "PYTHONDONTWRITEBYTECODE": "1",
                                  "GPUTRACE_GPU_TIMING": "off", "FAKECUDA_KERNEL_NS": "0", "LD_PRELOAD": gtlib.SHIM,
                                  "GPUTRACE_OUTPUT": os.path.join(d, "sampler-%p.db"),
                                  "GPUTRACE_SAMPLE_NATIVE": native,
                                  "GPUTRACE_SAMPLE_BUDGET": "0" if key == "nobudget" else None})
            r = subprocess.run([exe, os.path.join(HERE, "py_threads.py"), str(args.sampler_threads),
                                str(args.sampler_seconds), "12", str(active), "0" if key == "nocuda" else "1"],
                               env=env, capture_output=True, text=True)
            if r.returncode != 0:
                sys.exit("bench: sampler workload failed: %s" % r.stderr)
            db = [os.path.join(d, f) for f in os.listdir(d) if f.endswith(".db")][0]
            meta = dict(gtlib.query(db, "SELECT key, value FROM meta"))
            span = int(meta["end_ns"]) - int(meta["start_ns"])
            cpu = int(meta["tracer_sampler_cpu_ns"])
            taken, torn, rounds = int(meta["samples_taken"]), int(meta["samples_torn"]), int(meta["samples_rounds"])
            withpy = gtlib.query(db, "SELECT count(*) FROM samples WHERE pystack_id IS NOT NULL")[0][0]
            running, withnative = gtlib.query(db, "SELECT count(*), count(stack_id) FROM host_samples "
                                                  "WHERE state = 'running'")[0]
            os.unlink(db)
            if native == "perf" and meta["sample_native_stacks"] != "perf_callchain":
                print("  GPUTRACE_SAMPLE_NATIVE=perf: perf events refused here (%s); not measured"
                      % meta["sample_native_stacks"])
                continue
            per = cpu / max(taken + torn, 1)
            slowed = int(meta.get("samples_slowed", 0))
            print("  %2d of them active%s: sampler CPU %.1f ms over %.2f s: %.3f%% of one core; %d rounds (%.1f a "
                  "second, %d slowed by the budget), %d samples (%d with a Python stack), %d torn; %.1f us per sample"
                  % (active, ", no budget" if key == "nobudget" else "", cpu / 1e6, span / 1e9, 100.0 * cpu / span,
                     rounds, rounds * 1e9 / span, slowed, taken, withpy, torn, per / 1e3))
            results["sampler_rate_" + key] = rounds * 1e9 / span
            if native == "perf":
                print("    (GPUTRACE_SAMPLE_NATIVE=perf: %d of %d running samples with a native stack)"
                      % (withnative, running))
            results["sampler_core_pct_" + key] = 100.0 * cpu / span
        # native threads (bench/native_threads.c, -O2 without -g): each
        # sleep a new blocked stack, unwound from .eh_frame, 12 frames down
        for budget, key in ((None, "native"), ("0", "native_nobudget")):
            out = os.path.join(d, "native.db")
            env = gtlib.base_env({"GPUTRACE_GPU_TIMING": "off", "LD_PRELOAD": gtlib.SHIM, "GPUTRACE_OUTPUT": out,
                                  "GPUTRACE_SAMPLE_BUDGET": budget})
            r = subprocess.run([gtlib.prog("native_threads"), str(args.sampler_threads), str(args.sampler_seconds),
                                "12"], env=env, capture_output=True, text=True)
            if r.returncode != 0:
                sys.exit("bench: native sampler workload failed: %s" % r.stderr)
            meta = dict(gtlib.query(out, "SELECT key, value FROM meta"))
            span, cpu = int(meta["end_ns"]) - int(meta["start_ns"]), int(meta["tracer_sampler_cpu_ns"])
            rounds, slowed = int(meta["samples_rounds"]), int(meta.get("samples_slowed", 0))
            blocked, deep = gtlib.query(out, "SELECT count(*), avg((SELECT count(*) FROM stack_frames f "
                                             "WHERE f.stack_id = h.stack_id)) FROM host_samples h "
                                             "WHERE state != 'running'")[0]
            print("  %2d native threads active%s: sampler CPU %.1f ms over %.2f s: %.3f%% of one core; %d rounds "
                  "(%.1f a second, %d slowed by the budget), %s samples, %d blocked (stacks %.1f frames on "
                  "average, %s stale)" % (
                      args.sampler_threads, ", no budget" if budget else "", cpu / 1e6, span / 1e9,
                      100.0 * cpu / span, rounds, rounds * 1e9 / span, slowed, meta["samples_taken"], blocked,
                      deep or 0, meta.get("samples_stale", "?")))
            results["sampler_core_pct_" + key] = 100.0 * cpu / span
            results["sampler_rate_" + key] = rounds * 1e9 / span
            os.unlink(out)
        off, on, perf = [], [], []
        for _ in range(args.rounds):
            for extra, acc in (({"GPUTRACE_SAMPLE_HZ": "0"}, off), ({"GPUTRACE_SAMPLE_HZ": "100"}, on),
                               ({"GPUTRACE_SAMPLE_HZ": "100", "GPUTRACE_SAMPLE_NATIVE": "perf"}, perf)):
                times, _ = run_once(exe, extdir, args.calls, args.depth, extra, d)
                acc += times
        m_off, m_on, m_perf = statistics.median(off), statistics.median(on), statistics.median(perf)
        print("  per call (python-call-cost's workload, %d x %d): p50 %.0f ns sampling off, %.0f ns at 100 Hz: "
              "ratio %.3f; p99 %.0f / %.0f ns" % (args.calls, args.rounds, m_off, m_on, m_on / m_off,
                                                  percentile(off, 0.99), percentile(on, 0.99)))
        # the kernel writes each perf sample on the sampled thread itself
        print("  per call with GPUTRACE_SAMPLE_NATIVE=perf: p50 %.0f ns, ratio to off %.3f; p99 %.0f ns"
              % (m_perf, m_perf / m_off, percentile(perf, 0.99)))
        results["sampler_call_ratio"] = m_on / m_off
        results["sampler_call_ratio_perf"] = m_perf / m_off

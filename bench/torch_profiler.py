#!/usr/bin/env python3
"""gputrace beside PyTorch's own profiler (torch.profiler, Kineto), on the
simulated GPU (docs/performance.md, "Beside torch.profiler").

One loop of elementwise kernel launches from PyTorch (x.mul_, one launch
each), run R times in each of three ways, interleaved: untraced; under
`gputrace record` (stacks and Python stacks on, GPU times from CUPTI, the
defaults), and again with stacks off (--stack-depth 0); inside `torch.profiler.profile(activities=[CPU, CUDA])`. Both
tools read the same simulated CUPTI (preloaded in place of the wheel's).
Per way, the medians of: the loop's CPU time (user + system of every
thread of the process, from the kernel: a tool's own threads count), its
wall time, and for the profiler the time its `with` block takes to end
(collection and post-processing). Reported as the added CPU per CUDA call
and the loop's time as ratios against the untraced loop, and whether each
tool saw every kernel the simulated GPU ran (FAKECUDA_LOG).

Usage: python3 bench/torch_profiler.py [--launches N] [--rounds R]"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.join(ROOT, "build")
FAKECUDA = os.path.join(BUILD, "fakecuda")
PYTHON = os.path.join(BUILD, "pyenv", "bin", "python")
GPUTRACE = os.path.join(BUILD, "gputrace")

CHILD = r"""
import json, resource, sys, time
import torch
mode, n = sys.argv[1], int(sys.argv[2])
x = torch.ones(256, device='cuda')
for _ in range(200):            # warm-up: first launches, allocator, lazy loading
    x.mul_(1.0)
torch.cuda.synchronize()

def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return int((r.ru_utime + r.ru_stime) * 1e9)

def loop():
    c0, w0 = cpu(), time.perf_counter_ns()
    for _ in range(n):
        x.mul_(1.0)
    torch.cuda.synchronize()
    return cpu() - c0, time.perf_counter_ns() - w0

out = {}
if mode == "profiler":
    from torch.profiler import profile, ProfilerActivity
    p = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])
    p.__enter__()
    out["cpu_ns"], out["wall_ns"] = loop()
    t0 = time.perf_counter_ns()
    p.__exit__(None, None, None)
    out["stop_ns"] = time.perf_counter_ns() - t0
    out["seen"] = sum(1 for e in p.events() if e.device_type == torch.autograd.DeviceType.CUDA)
else:
    out["cpu_ns"], out["wall_ns"] = loop()
print("RESULT " + json.dumps(out))
"""


def run(mode, n, d):
    log = os.path.join(d, "gpu-%s.log" % mode)
    if os.path.exists(log):
        os.unlink(log)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GPUTRACE_", "FAKECUDA_"))}
    env.update({"LD_LIBRARY_PATH": FAKECUDA, "FAKECUDA_LOG": log, "FAKECUDA_KERNEL_NS": "200",
                "LD_PRELOAD": "%s %s" % (os.path.join(FAKECUDA, "libcudart.so.13"),
                                         os.path.join(FAKECUDA, "libcupti.so.13"))})
    argv = [PYTHON, "-c", CHILD, "profiler" if mode == "profiler" else "plain", str(n)]
    db = os.path.join(d, "t-%s.db" % mode)
    if mode.startswith("gputrace"):
        for f in (db, db + "-wal", db + "-shm"):
            if os.path.exists(f):
                os.unlink(f)
        # gputrace-nostacks: the same with stacks off (--stack-depth 0), to
        # say how much of gputrace's cost is its stacks
        depth = ["--stack-depth", "0"] if mode == "gputrace-nostacks" else []
        argv = [GPUTRACE, "record", "-q", "-o", db] + depth + ["--"] + argv
    r = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        sys.exit("%s run failed: %s" % (mode, r.stderr[-2000:]))
    res = json.loads(next(l for l in r.stdout.splitlines() if l.startswith("RESULT "))[7:])
    with open(log) as f:
        res["ran"] = sum(1 for line in f if line.startswith("kernel "))
    if mode.startswith("gputrace"):
        import sqlite3
        con = sqlite3.connect(db)
        res["seen"] = con.execute("SELECT count(*) FROM kernels WHERE time_source = 'gpu'").fetchone()[0]
        con.close()
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--launches", type=int, default=20000)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    modes = ["untraced", "gputrace", "gputrace-nostacks", "profiler"]
    got = {m: [] for m in modes}
    with tempfile.TemporaryDirectory(prefix="gputrace-bench-torch-") as d:
        for _ in range(a.rounds):
            for m in modes:
                got[m].append(run(m, a.launches, d))
    med = {m: {k: statistics.median(r[k] for r in got[m]) for k in got[m][0] if k != "seen"} for m in modes}
    base = med["untraced"]
    print("torch loop of %d launches (x.mul_), %d rounds, medians; simulated GPU, launch cost 0" %
          (a.launches, a.rounds))
    print("%-18s %12s %12s %14s %12s %s" % ("", "loop CPU", "loop wall", "added CPU/call", "wall ratio",
                                            "kernels seen"))
    for m in modes:
        seen = "" if m == "untraced" else "%s of %s" % (
            ", ".join(str(r["seen"]) for r in got[m]), ", ".join(str(r["ran"]) for r in got[m]))
        added = (med[m]["cpu_ns"] - base["cpu_ns"]) / a.launches
        print("%-18s %9.1f ms %9.1f ms %11.2f us %12.2f %s" % (
            m, med[m]["cpu_ns"] / 1e6, med[m]["wall_ns"] / 1e6, added / 1e3, med[m]["wall_ns"] / base["wall_ns"],
            seen))
    print("profiler's stop (collection, post-processing): %.1f ms" % (med["profiler"]["stop_ns"] / 1e6))
    g = med["gputrace"]["cpu_ns"] - base["cpu_ns"]
    p = med["profiler"]["cpu_ns"] - base["cpu_ns"]
    if p > 0:
        print("gputrace's added loop CPU / the profiler's: %.2f (goal: at most 0.33)" % (g / p))


if __name__ == "__main__":
    main()

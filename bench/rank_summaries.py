"""Synthetic rank summaries (the JSON `gputrace summarize` writes,
docs/ranks.md) for bench/run.py's ranks section: N ranks of one job on one
host, each with STEPS all-reduces (one a step, its start jittered, one rank
late at one step) and five idle gaps."""
import json
import os
import random

CAUSES = ["sync", "copy", "memset", "launch", "graph", "alloc", "free", "event", "stream", "other_cuda", "host",
          "startup", "teardown"]


def make(d, ranks, steps, seed=1):
    rnd = random.Random(seed)
    step_ns = 50_000_000
    t0 = 1_000_000_000_000
    paths = []
    # arrivals first: every rank's collective ends at the latest arrival plus 5 ms
    arrive = [[s * step_ns + 40_000_000 + rnd.randrange(200_000) + (30_000_000 if (r, s) == (7, 11) else 0)
               for s in range(steps)] for r in range(ranks)]
    latest = [max(arrive[r][s] for r in range(ranks)) for s in range(steps)]
    for r in range(ranks):
        colls = []
        for s in range(steps):
            start = arrive[r][s]
            colls.append([0, 0, s, start - 10_000, start, latest[s] + 5_000_000, 0, s])
        span = steps * step_ns
        doc = {"format": 1, "tool": "gputrace", "tool_version": "bench", "path": "trace-%d.db" % r,
               "rank": str(r), "host": "node0", "pid": 1000 + r, "complete": True, "gpu_times": True,
               "start_ns": t0 - 1_000_000, "start_unix_ns": 1_700_000_000_000_000_000, "first_ns": t0,
               "summary": {"span_ns": span, "busy_ns": span // 2, "idle_ns": span - span // 2,
                           "idle_by_cause_ns": {c: (span // 20 if c == "host" else 0) for c in CAUSES},
                           "calls": steps * 20, "launches": steps * 10, "launch_host_ns": steps * 50_000,
                           "kernel_ns": span // 2, "sync_ns": steps * 1_000_000, "h2d_bytes": steps << 20,
                           "pageable_h2d_bytes": 0},
               "collective_ns": steps * 5_000_000, "collectives_total": steps,
               "collective_names": ["ncclDevKernel_AllReduce_Sum_f32_RING_LL"], "collectives": colls,
               "gaps": [{"start_ns": t0 + i * step_ns, "dur_ns": 2_000_000 - i, "cause": "host",
                         "after": "load_batch (train+0x1a2b) < main (train+0x1000)", "before": "", "after_api":
                         "cudaMemcpy", "range": "step", "range_index": i} for i in range(5)],
               "ranges": ["step"]}
        p = os.path.join(d, "rank-%04d.summary.json" % r)
        with open(p, "w") as f:
            json.dump(doc, f, separators=(",", ":"))
        paths.append(p)
    return paths

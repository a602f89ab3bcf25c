"""The workload bench/run.py times: N kernel launches through the gtcuda
extension (GIL released around each, as PyTorch does), made DEPTH Python
frames down. Prints the host time of each call in nanoseconds, one per line,
to the file argv[3]."""
import sys
import time

import gtcuda

N, DEPTH, OUT = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]


def loop(n):
    launch, clock = gtcuda.launch, time.perf_counter_ns
    times = [0] * n
    for i in range(n):
        t0 = clock()
        launch("bench_kernel")
        times[i] = clock() - t0
    return times


def nest(depth, n):
    if depth <= 1:
        return loop(n)
    return nest(depth - 1, n)


nest(DEPTH, 2000)  # warm up: first-seen stacks, code objects and frames
times = nest(DEPTH, N)
gtcuda.sync()
with open(OUT, "w") as f:
    f.write("\n".join(map(str, times)))

"""The sampler bench's workload (bench/run.py --only sampler): THREADS
Python threads for SECONDS, each DEPTH Python frames down. The first
ACTIVE of them loop: a kernel launch through the gtcuda extension, 2 ms of
pure-Python work, a 3 ms sleep; the others make one launch (so every
thread is one the sampler samples) and then wait on a queue, as idle
data-loader or logging threads do.
    py_threads.py THREADS SECONDS DEPTH [ACTIVE]"""
import queue
import sys
import threading
import time

import gtcuda

THREADS, SECONDS, DEPTH = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
ACTIVE = int(sys.argv[4]) if len(sys.argv) > 4 else THREADS
idle = queue.Queue()


def work(end, active):
    if not active:
        gtcuda.launch("bench_kernel")
        idle.get()
        return
    while time.perf_counter() < end:
        gtcuda.launch("bench_kernel")
        t = time.perf_counter() + 0.002
        x = 0
        while time.perf_counter() < t:
            x = (x * 31 + 7) % 1000003
        time.sleep(0.003)


def nest(depth, end, active):
    if depth <= 1:
        return work(end, active)
    return nest(depth - 1, end, active)


end = time.perf_counter() + SECONDS
ts = [threading.Thread(target=nest, args=(DEPTH, end, i < ACTIVE)) for i in range(THREADS)]
for t in ts:
    t.start()
time.sleep(SECONDS)
for _ in range(THREADS - ACTIVE):
    idle.put(None)
for t in ts:
    t.join()
gtcuda.sync()

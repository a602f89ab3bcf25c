"""The sampler bench's workload (bench/run.py --only sampler): THREADS
Python threads for SECONDS, each DEPTH Python frames down. The first
ACTIVE of them loop: a kernel launch through the gtcuda extension, 2 ms of
pure-Python work, a 3 ms sleep; the others make one launch (so every
thread is one the sampler samples) and then wait on a queue, as idle
data-loader or logging threads do. With LAUNCH 0 the threads never call
CUDA (the main thread does, once): loader threads, whose Python stacks the
sampler finds in the interpreter's own list of threads.
    py_threads.py THREADS SECONDS DEPTH [ACTIVE [LAUNCH]]"""
import queue
import sys
import threading
import time

import gtcuda

THREADS, SECONDS, DEPTH = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
ACTIVE = int(sys.argv[4]) if len(sys.argv) > 4 else THREADS
LAUNCH = int(sys.argv[5]) if len(sys.argv) > 5 else 1
idle = queue.Queue()


def launch():
    if LAUNCH:
        gtcuda.launch("bench_kernel")


def work(end, active):
    if not active:
        launch()
        idle.get()
        return
    while time.perf_counter() < end:
        launch()
        t = time.perf_counter() + 0.002
        x = 0
        while time.perf_counter() < t:
            x = (x * 31 + 7) % 1000003
        time.sleep(0.003)


def nest(depth, end, active):
    if depth <= 1:
        return work(end, active)
    return nest(depth - 1, end, active)


gtcuda.launch("bench_kernel")
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

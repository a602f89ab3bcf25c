"""A data pipeline whose launching thread only waits (tests/test_idle_threads.py,
issue 36): the main thread takes batches from a queue.Queue and copies each
to the GPU (through the gtcuda extension), while loader threads that never
call CUDA build the batches with zlib in native code.
  LOADERS 1: one loader, build() compresses for about BUILD_MS a batch.
  LOADERS 2: two loaders taking turns, each with its own queue of one
             batch: build_slow() for BUILD_MS, build_fast() for a fifth of
             that; the main thread takes one batch of each in turn.
Lines marked '# @name' are where the test expects the samples. On stderr,
its own log: the seconds each loader spent building, by function.
    queue_loader.py LOADERS STEPS BUILD_MS"""
import queue
import sys
import threading
import time
import zlib

import gtcuda


def calibrate(ms):
    """A buffer zlib takes about ms to compress at level 9 here (the
    quickest of five timings: a busy machine only slows one down)."""
    data = bytes((i * 7919 + (i >> 5)) % 251 for i in range(1 << 16))
    per = 1.0
    for _ in range(5):
        t0 = time.perf_counter()
        zlib.compress(data, 9)
        per = min(per, time.perf_counter() - t0)
    reps = max(5, int(ms / 1000.0 / max(per, 1e-6)))
    return data * reps


def build(data):
    return zlib.compress(data, 9)  # @build


def build_slow(data):
    return zlib.compress(data, 9)  # @build_slow


def build_fast(data):
    return zlib.compress(data, 9)  # @build_fast


def loader(fn, data, q, steps, spent, key):
    for _ in range(steps):
        t0 = time.perf_counter()
        b = fn(data)
        spent[key] = spent.get(key, 0.0) + time.perf_counter() - t0
        q.put(len(b))


def main():
    loaders, steps, ms = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
    spent = {}
    if loaders == 1:
        qs = [queue.Queue(maxsize=1)]
        ts = [threading.Thread(target=loader, args=(build, calibrate(ms), qs[0], steps, spent, "build"))]
    else:
        # the fast loader's batch: a fifth of the slow one's, whatever
        # the calibration's noise
        qs = [queue.Queue(maxsize=1), queue.Queue(maxsize=1)]
        data = calibrate(ms)
        ts = [threading.Thread(target=loader, args=(build_slow, data, qs[0], steps, spent, "build_slow")),
              threading.Thread(target=loader, args=(build_fast, data[:len(data) // 5], qs[1], steps, spent,
                                                    "build_fast"))]
    gtcuda.launch("warmup")
    gtcuda.sync()
    for t in ts:
        t.start()
    for _ in range(steps):
        for q in qs:
            n = q.get()  # @get
            gtcuda.copy_h2d(n)
            gtcuda.launch("step")
            gtcuda.sync()
    for t in ts:
        t.join()
    print("queue_loader: done")
    for k in sorted(spent):
        sys.stderr.write("queue_loader: %s %.6f\n" % (k, spent[k]))


main()

"""Host stalls with planted answers (tests/test_samples.py), through the
gtcuda extension. Each step launches a kernel and syncs; then the GPU
idles while the host, for STALL_MS each:
  nap():       sleeps (time.sleep: blocked in clock_nanosleep)
  crunch():    computes in pure Python (running)
  wait_pipe(): blocks reading a pipe (read) that a feeder thread fills
and each stall ends with the next launch. Lines marked '# @name' are where
the test expects the samples.
    host_stalls.py STEPS STALL_MS"""
import os
import sys
import threading
import time

import gtcuda


def nap(s):
    time.sleep(s)  # @nap


def crunch(s):
    end = time.perf_counter() + s
    x = 0
    while time.perf_counter() < end: x = (x * 31 + 7) % 1000003  # @crunch
    return x


def wait_pipe(fd):
    return os.read(fd, 1)  # @wait_pipe


def feeder(go, fd, s, steps):
    for _ in range(steps):
        go.wait()
        go.clear()
        time.sleep(s)
        os.write(fd, b"x")


def main():
    steps, stall_s = int(sys.argv[1]), int(sys.argv[2]) / 1000.0
    r, w = os.pipe()
    go = threading.Event()
    t = threading.Thread(target=feeder, args=(go, w, stall_s, steps))
    t.start()
    for _ in range(steps):
        gtcuda.launch("step_a")
        gtcuda.sync()
        nap(stall_s)
        gtcuda.launch("step_b")
        gtcuda.sync()
        crunch(stall_s)
        gtcuda.launch("step_c")
        gtcuda.sync()
        go.set()
        wait_pipe(r)
    gtcuda.launch("last")
    gtcuda.sync()
    t.join()
    print("host_stalls: done")


main()

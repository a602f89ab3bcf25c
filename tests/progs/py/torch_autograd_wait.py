"""A PyTorch loop whose backward kernels are launched from autograd's own
thread, which waits for another thread (tests/test_idle_threads.py, issue
36): a custom autograd Function's backward takes the step's gradient scale
from a queue that a loader thread (never calling CUDA) fills after about
BUILD_MS of zlib in native code. While autograd's thread waits, the GPU
does too; the report should name the loader's line. Elementwise kernels
only (no cuBLAS: the simulated GPU has none). On stderr, its own log: the
seconds the loader spent building.
    torch_autograd_wait.py STEPS BUILD_MS"""
import queue
import sys
import threading
import time
import zlib

import torch

scales = queue.Queue()


class WaitForScale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 1.0

    @staticmethod
    def backward(ctx, g):
        return g * scales.get()  # @wait


def build(data):
    return zlib.compress(data, 9)  # @build


def loader(steps, ms, spent):
    # the quickest of five timings: a busy machine only slows one down
    data = bytes((i * 7919 + (i >> 5)) % 251 for i in range(1 << 16))
    per = 1.0
    for _ in range(5):
        t0 = time.perf_counter()
        zlib.compress(data, 9)
        per = min(per, time.perf_counter() - t0)
    data = data * max(5, int(ms / 1000.0 / max(per, 1e-6)))
    for _ in range(steps):
        t0 = time.perf_counter()
        build(data)
        spent[0] += time.perf_counter() - t0
        scales.put(0.5)


def main():
    steps, ms = int(sys.argv[1]), float(sys.argv[2])
    w = torch.ones(4096, device="cuda", requires_grad=True)
    x = torch.ones(4096, device="cuda")
    torch.cuda.synchronize()
    spent = [0.0]
    t = threading.Thread(target=loader, args=(steps, ms, spent))
    t.start()
    for _ in range(steps):
        loss = (WaitForScale.apply(x * w) * 2.0).sum()
        loss.backward()
        with torch.no_grad():
            w -= 0.01 * w.grad
        w.grad = None
    torch.cuda.synchronize()
    t.join()
    print("torch_autograd_wait: done")
    sys.stderr.write("torch_autograd_wait: build %.6f\n" % spent[0])


main()

"""CuPy from PyPI (cupy-cuda13x) as its users write it, on the simulated GPU:
an ElementwiseKernel and a RawKernel, both compiled by NVRTC on the CPU and
loaded with cuModuleLoadData, launched with cuLaunchKernel on a stream of
the program's own, around host memory from CuPy's pinned pool and NumPy's
pageable arrays, inside cupy.cuda.nvtx ranges.

Ground truth is what this script prints: one line per piece of GPU work it
asks for (kernel and its grid and block, copy and its bytes, direction and
host memory, memset and its bytes) and per sync, each from the line marked
'# @name' (the simulated GPU computes nothing, so no values are printed).
argv[1]: steps (default 3)."""
import sys

import cupy as cp
import cupyx
import numpy as np

N = 1 << 14  # float32s per array
BLOCK = 128
STEPS = int(sys.argv[1]) if len(sys.argv) > 1 else 3

scale_shift = cp.ElementwiseKernel("float32 x, float32 a, float32 b", "float32 y", "y = a * x + b", "scale_shift")
saxpy = cp.RawKernel(r"""
extern "C" __global__ void saxpy(float a, const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] += a * x[i];
}
""", "saxpy")


def say(*what):
    print("cupy_client:", *what, flush=True)


def step(i, stream, x, y, host_in, host_out):
    cp.cuda.nvtx.RangePush("step %d" % i)
    with stream:
        x.set(host_in, stream=stream)  # @h2d
        say("copy HtoD %d pinned" % host_in.nbytes)
        y.fill(0)  # @memset
        say("memset %d" % y.nbytes)
        scale_shift(x, np.float32(2), np.float32(1), y)  # @elementwise
        say("kernel scale_shift")
        saxpy(((N + BLOCK - 1) // BLOCK,), (BLOCK,), (np.float32(0.5), x, y, np.int32(N)))  # @raw
        say("kernel saxpy grid %d block %d" % ((N + BLOCK - 1) // BLOCK, BLOCK))
        y.get(stream=stream, out=host_out)  # @d2h
        say("copy DtoH %d pinned" % host_out.nbytes)
    stream.synchronize()  # @stream_sync
    say("sync stream")
    cp.cuda.nvtx.RangePop()


def main():
    stream = cp.cuda.Stream(non_blocking=True)
    x = cp.empty(N, dtype=cp.float32)
    y = cp.empty(N, dtype=cp.float32)
    host_in = cupyx.empty_pinned(N, dtype=np.float32)
    host_out = cupyx.empty_pinned(N, dtype=np.float32)
    host_in[:] = np.arange(N, dtype=np.float32)
    cp.cuda.nvtx.RangePush("train")
    for i in range(STEPS):
        step(i, stream, x, y, host_in, host_out)
    cp.cuda.nvtx.RangePop()
    pageable = np.ones(N // 2, dtype=np.float32)
    z = cp.asarray(pageable)  # @h2d_pageable
    say("copy HtoD %d pageable" % pageable.nbytes)
    back = cp.asnumpy(z)  # @d2h_pageable
    say("copy DtoH %d pageable" % back.nbytes)
    cp.cuda.Device().synchronize()  # @device_sync
    say("sync device")


main()

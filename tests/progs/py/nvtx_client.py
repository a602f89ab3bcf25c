"""The nvtx package from PyPI as its users write it: nvtx.annotate as a
decorator and as a context manager, nvtx.push_range/pop_range, around a
Python loop that calls CUDA through ctypes: the runtime (libcudart.so.13)
for memory, copies, memsets, streams and syncs, the driver (libcuda.so.1)
for a kernel loaded from PTX with cuModuleLoadData and launched with
cuLaunchKernel, as cuda-python's users do.

Ground truth is what this script prints: one line per piece of GPU work it
asks for (kernel and its grid and block, copy and its bytes, direction and
host memory, memset and its bytes) and per sync, each from the line marked
'# @name', and the NVTX ranges: a phase "train" holding steps "step 0",
"step 1"... (each a "load" range from the decorator and a "compute" range),
then a phase "eval". argv[1]: steps (default 3)."""
import ctypes
import sys

import nvtx

N = 1 << 16  # bytes per copy
GRID, BLOCK = 64, 256
STEPS = int(sys.argv[1]) if len(sys.argv) > 1 else 3
PTX = (b".version 8.0\n.target sm_90\n.address_size 64\n\n"
       b".visible .entry scale(\n\t.param .u64 scale_param_0,\n\t.param .u32 scale_param_1\n)\n{\n\tret;\n}\n")

rt = ctypes.CDLL("libcudart.so.13")
drv = ctypes.CDLL("libcuda.so.1")
HTOD, DTOH = 1, 2  # cudaMemcpyKind


def say(*what):
    print("nvtx_client:", *what, flush=True)


def ok(rc, what):
    if rc != 0:
        say("%s failed: %d" % (what, rc))
        sys.exit(1)


class Gpu:
    def __init__(self):
        self.dev = ctypes.c_void_p()
        ok(rt.cudaMalloc(ctypes.byref(self.dev), ctypes.c_size_t(N)), "cudaMalloc")
        self.pinned = ctypes.c_void_p()
        ok(rt.cudaMallocHost(ctypes.byref(self.pinned), ctypes.c_size_t(N)), "cudaMallocHost")
        self.pageable = ctypes.create_string_buffer(N)
        self.stream = ctypes.c_void_p()
        ok(rt.cudaStreamCreate(ctypes.byref(self.stream)), "cudaStreamCreate")
        self.module, self.kernel = ctypes.c_void_p(), ctypes.c_void_p()
        ok(drv.cuModuleLoadData(ctypes.byref(self.module), PTX), "cuModuleLoadData")
        ok(drv.cuModuleGetFunction(ctypes.byref(self.kernel), self.module, b"scale"), "cuModuleGetFunction")
        self.arg_ptr, self.arg_n = ctypes.c_void_p(self.dev.value), ctypes.c_uint32(N // 4)
        self.params = (ctypes.c_void_p * 2)(ctypes.addressof(self.arg_ptr), ctypes.addressof(self.arg_n))

    def launch(self):
        ok(drv.cuLaunchKernel(self.kernel, GRID, 1, 1, BLOCK, 1, 1, 0, self.stream, self.params, None),  # @launch
           "cuLaunchKernel")
        say("kernel scale grid %d block %d" % (GRID, BLOCK))


@nvtx.annotate("load", color="blue")
def load(gpu):
    ok(rt.cudaMemcpy(gpu.dev, gpu.pageable, ctypes.c_size_t(N), HTOD), "cudaMemcpy")  # @h2d
    say("copy HtoD %d pageable" % N)


def step(gpu, i):
    with nvtx.annotate("step %d" % i, color="green"):
        load(gpu)
        ok(rt.cudaMemsetAsync(gpu.dev, 0, ctypes.c_size_t(N), gpu.stream), "cudaMemsetAsync")  # @memset
        say("memset %d" % N)
        nvtx.push_range("compute")
        gpu.launch()
        nvtx.pop_range()
        ok(rt.cudaMemcpyAsync(gpu.pinned, gpu.dev, ctypes.c_size_t(N), DTOH, gpu.stream),  # @d2h
           "cudaMemcpyAsync")
        say("copy DtoH %d pinned" % N)
        ok(rt.cudaStreamSynchronize(gpu.stream), "cudaStreamSynchronize")  # @stream_sync
        say("sync stream")


def main():
    gpu = Gpu()
    nvtx.push_range("train", color="red")
    for i in range(STEPS):
        step(gpu, i)
    nvtx.pop_range()
    with nvtx.annotate("eval"):
        gpu.launch()
        ok(rt.cudaDeviceSynchronize(), "cudaDeviceSynchronize")  # @device_sync
        say("sync device")


main()

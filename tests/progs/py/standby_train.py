"""A long-running Python job for the standby tests: copies to the GPU
through ctypes (CDLL releases the GIL, as framework bindings do) from
step(), sleeping 2 ms between them, for SECONDS; logs each copy as
"i t0 t1" (time.monotonic_ns, CLOCK_MONOTONIC as the trace) to LOG at the
end. Prints "ready" after its first CUDA call. Exits 3 if a sleep came
back early. argv: LIBCUDART SECONDS LOG"""
import ctypes
import sys
import time

rt = ctypes.CDLL(sys.argv[1])
seconds, log = float(sys.argv[2]), sys.argv[3]
dev = ctypes.c_void_p()
rt.cudaMalloc(ctypes.byref(dev), ctypes.c_size_t(4096))
host = ctypes.create_string_buffer(4096)
print("ready", flush=True)


def step(i, out):
    t0 = time.monotonic_ns()
    rt.cudaMemcpy(dev, host, ctypes.c_size_t(4096), 1)  # @copy
    out.append((i, t0, time.monotonic_ns()))


def main():
    out, early, i = [], False, 0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        step(i, out)  # @step
        i += 1
        s0 = time.monotonic_ns()
        time.sleep(0.002)
        early |= time.monotonic_ns() - s0 < 2000000
    with open(log, "w") as f:
        f.writelines("%d %d %d\n" % r for r in out)
    return 3 if early else 0


sys.exit(main())

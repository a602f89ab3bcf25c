"""Whether perf callchains are allowed, for scripts/gpu-validate.sh: a
CUDA thread that spends most of its time in a native busy loop (zlib) and
the rest launching kernels, traced with GPUTRACE_SAMPLE_NATIVE=perf. argv:
SECONDS. Prints one line."""
import sys
import time
import zlib

import torch


def main():
    end = time.monotonic() + float(sys.argv[1])
    x = torch.ones(1 << 16, device="cuda")
    blob = bytes(range(256)) * 4096
    n = 0
    while time.monotonic() < end:
        zlib.compress(blob, 9)  # @busy
        x = x * 1.0001
        n += 1
    torch.cuda.synchronize()
    print("rounds", n > 0)


if __name__ == "__main__":
    main()

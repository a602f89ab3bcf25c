"""torch.compile on the simulated GPU (tests/test_torch.py): Inductor
writes a Triton kernel, Triton compiles it on the CPU (its own LLVM and
ptxas), and its launcher loads the cubin with cuModuleLoad and launches it
with cuLaunchKernel. Prints its own log, not values (the simulated GPU
does not compute). Lines ending in '# @name' are where the test expects
a site.

    torch_compile.py CALLS"""
import sys

import torch


def scale_bias_sum(x, s, b):
    return torch.tanh(x * s + b).sum(0)


def main():
    calls = int(sys.argv[1])
    dev = torch.device("cuda")
    compiled = torch.compile(scale_bias_sum)
    x = torch.ones(64, 512, device=dev)
    s = torch.ones(512, device=dev)
    b = torch.zeros(512, device=dev)
    for _ in range(calls):
        y = compiled(x, s, b)  # @compiled
    torch.cuda.synchronize()
    print("log calls=%d out=%s" % (calls, tuple(y.shape)))


if __name__ == "__main__":
    main()

"""A small PyTorch training loop with torch.profiler on a schedule (wait 1,
warmup 1, active 2, twice), as training scripts carry it
(tests/test_cupti_share.py). Prints, for each active cycle, the CUDA
kernels the profiler's own trace lists, by name with their counts, one
line each: "CYCLE NAME COUNT". Its output must be the same traced and
untraced."""
import collections

import torch
from torch.profiler import ProfilerActivity, profile, schedule


def main():
    torch.manual_seed(0)
    x = torch.randn(64, 64, device="cuda")
    w = torch.randn(64, 64, device="cuda", requires_grad=True)
    cycles = []

    def ready(prof):
        cycles.append(collections.Counter(
            e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA))

    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                 schedule=schedule(wait=1, warmup=1, active=2, repeat=2), on_trace_ready=ready) as prof:
        for _ in range(10):
            # elementwise: cuBLAS's matmul needs a real driver's private tables
            y = (x * w).relu().sum()
            y.backward()
            w.grad = None
            torch.cuda.synchronize()
            prof.step()
    for i, c in enumerate(cycles):
        for name, n in sorted(c.items()):
            print(i, name, n)
    print("cycles", len(cycles))


if __name__ == "__main__":
    main()

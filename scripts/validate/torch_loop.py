"""The PyTorch workload of scripts/gpu-validate.sh: a small model trained
from a DataLoader with worker processes. Each step copies its batch to the
GPU from pageable memory and a second tensor from pinned memory, and reads
the loss with .item() (a sync). Step 5 plants a 200 ms host stall. Each
step is an NVTX range "step" (torch.cuda.nvtx), seen with LD_PRELOAD alone.

argv: MODE (plain, profile), STEPS, OUT.json. Prints nothing; writes the
step times (ns) to OUT.json, and in profile mode the number of GPU
events the profiler saw. Lines marked '# @name' are where
gpu-validate.sh expects each call."""
import json
import sys
import time

import torch
from torch.utils.data import DataLoader, Dataset


class Batches(Dataset):
    def __len__(self):
        return 10_000

    def __getitem__(self, i):
        return torch.full((64,), float(i % 7))


def step(model, opt, x_cpu, side_cpu):
    x = x_cpu.to("cuda")  # @pageable_copy
    side = side_cpu.to("cuda", non_blocking=True)  # @pinned_copy
    loss = (model(x) + side.sum()).square().mean()
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    return loss.item()  # @item_sync


def main():
    mode, steps, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Linear(64, 8)).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    side_cpu = torch.ones(256).pin_memory()
    loader = DataLoader(Batches(), batch_size=32, num_workers=2, pin_memory=False)
    times = []
    prof = None
    if mode == "profile":
        prof = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU,
                                                  torch.profiler.ProfilerActivity.CUDA])
        prof.__enter__()
    for i, x_cpu in enumerate(loader):
        if i == steps:
            break
        t0 = time.perf_counter_ns()
        torch.cuda.nvtx.range_push("step")
        step(model, opt, x_cpu, side_cpu)
        torch.cuda.nvtx.range_pop()
        times.append(time.perf_counter_ns() - t0)
        if i == 5:
            time.sleep(0.2)  # @stall
    torch.cuda.synchronize()
    res = {"step_ns": times}
    if prof is not None:
        prof.__exit__(None, None, None)
        # what the profiler saw on the GPU: with gputrace sharing CUPTI,
        # both must see the kernels
        res["profiler_gpu_events"] = sum(1 for e in prof.events()
                                         if e.device_type == torch.autograd.DeviceType.CUDA)
    with open(out, "w") as f:
        json.dump(res, f)


if __name__ == "__main__":
    main()

"""A PyTorch training loop as users write it, for the simulated GPU
(tests/test_torch.py). Nothing contrived but its model, which avoids cuBLAS
and cuDNN (their static runtime needs a real driver): per-feature scale and
bias, activations and reductions.

The simulated GPU does not compute, so this prints no tensor values: only
its own log of what it asked the GPU to do, which the test checks the trace
against. Lines ending in '# @name' are where the test expects a site.

    torch_train.py STEPS STALL_MS REPLAYS"""
import sys
import time

import torch
from torch.utils.data import DataLoader, Dataset

FEATURES = 512
BATCH = 64


class Samples(Dataset):
    """Inputs and targets made on the CPU, in the DataLoader's workers."""

    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        x = torch.full((FEATURES,), float(i % 17) / 17.0)
        y = torch.full((FEATURES,), float(i % 5) / 5.0)
        return x, y


class ScaleBias(torch.nn.Module):
    """Two layers of per-feature scale and bias: elementwise kernels only."""

    def __init__(self):
        super().__init__()
        self.scale1 = torch.nn.Parameter(torch.ones(FEATURES))
        self.bias1 = torch.nn.Parameter(torch.zeros(FEATURES))
        self.scale2 = torch.nn.Parameter(torch.ones(FEATURES))
        self.bias2 = torch.nn.Parameter(torch.zeros(FEATURES))

    def forward(self, x):
        h = torch.tanh(x * self.scale1 + self.bias1)  # @forward
        return torch.sigmoid(h * self.scale2 + self.bias2)


def fetch(batches, stall_s):
    """The data path: the next batch, then host-side work on it (planted: a
    sleep standing for decoding or augmenting on the main thread)."""
    x, y = next(batches)
    time.sleep(stall_s)  # @stall
    return x, y


def main():
    steps, stall_s, replays = int(sys.argv[1]), int(sys.argv[2]) / 1000.0, int(sys.argv[3])
    dev = torch.device("cuda")
    model = ScaleBias().to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, foreach=True)
    loader = DataLoader(Samples(steps * BATCH), batch_size=BATCH, num_workers=2, pin_memory=True)
    batches = iter(loader)
    h2d = h2d_bytes = 0
    for step in range(steps):
        torch.cuda.nvtx.range_push("step %d" % step)
        x, y = fetch(batches, stall_s)
        x = x.to(dev, non_blocking=True)  # @h2d
        y = y.to(dev, non_blocking=True)
        h2d += 2
        h2d_bytes += x.numel() * x.element_size() + y.numel() * y.element_size()
        out = model(x)
        loss = ((out - y) ** 2).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()  # @backward
        opt.step()
        torch.cuda.synchronize()  # @sync
        torch.cuda.nvtx.range_pop()
        print("step %d done" % step)

    # Evaluation: the forward pass captured once as a CUDA graph, replayed.
    static_x = torch.zeros(BATCH, FEATURES, device=dev)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.no_grad():
        with torch.cuda.stream(side):
            model(static_x)  # warm-up on a side stream, as torch.cuda.graphs asks
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            static_out = model(static_x)
    torch.cuda.nvtx.range_push("eval")
    for _ in range(replays):
        graph.replay()  # @replay
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_pop()
    print("eval out %s" % (tuple(static_out.shape),))
    print("log steps=%d h2d=%d h2d_bytes=%d replays=%d" % (steps, h2d, h2d_bytes, replays))


if __name__ == "__main__":
    main()

"""torch.compile (Triton kernels) and a CUDA Graph replay, for
scripts/gpu-validate.sh. argv: REPLAYS."""
import sys

import torch


def f(x, y):
    return torch.nn.functional.gelu(x @ y) * 2 + x.sin()


def main():
    replays = int(sys.argv[1])
    x = torch.randn(512, 512, device="cuda")
    y = torch.randn(512, 512, device="cuda")
    g = torch.compile(f)
    for _ in range(3):
        g(x, y)  # @compiled
    torch.cuda.synchronize()
    static_in = torch.randn(1024, device="cuda")
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(2):
            static_in.mul(2).add(1).relu()
    torch.cuda.current_stream().wait_stream(s)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_out = static_in.mul(2).add(1).relu()
    for _ in range(replays):
        graph.replay()  # @replay
    torch.cuda.synchronize()
    print("compiled and replayed", float(static_out.sum()) >= 0)


if __name__ == "__main__":
    main()

"""NVIDIA's libraries under the tracer, for scripts/gpu-validate.sh: each
line marked '# @name' runs work that PyTorch hands to a library or to its
own kernels: cuBLAS (fp32 and bf16 matrix products), cuDNN (a
convolution), fused attention, and ATen's elementwise, reduction, softmax
and norm kernels. gpu-validate.sh checks that every kernel is traced with
its GPU time and linked to the marked line, and keeps the kernels' names
(the names real traces carry, for the kernel categories).

argv: REPEATS. Prints one line."""
import sys

import torch
import torch.nn.functional as F


def main():
    n = int(sys.argv[1])
    torch.manual_seed(0)
    a = torch.randn(1024, 1024, device="cuda")
    b = torch.randn(1024, 1024, device="cuda")
    ah, bh = a.bfloat16(), b.bfloat16()
    img = torch.randn(8, 16, 64, 64, device="cuda")
    w = torch.randn(32, 16, 3, 3, device="cuda")
    q = torch.randn(4, 8, 256, 64, device="cuda", dtype=torch.bfloat16)
    x = torch.randn(256, 1024, device="cuda")
    torch.cuda.synchronize()
    acc = 0.0
    for _ in range(n):
        c = a @ b  # @matmul
        ch = ah @ bh  # @matmul_bf16
        y = F.conv2d(img, w, padding=1)  # @conv
        o = F.scaled_dot_product_attention(q, q, q)  # @attention
        e = (x * 2 + 1).relu()  # @elementwise
        s = x.sum(dim=1)  # @reduction
        p = torch.softmax(x, dim=1)  # @softmax
        ln = F.layer_norm(x, (1024,))  # @layer_norm
        acc += float(c[0, 0] + ch[0, 0].float() + y[0, 0, 0, 0] + o[0, 0, 0, 0].float() + e[0, 0] + s[0] + p[0, 0]
                     + ln[0, 0])
    torch.cuda.synchronize()
    print("libraries ran", acc == acc)


if __name__ == "__main__":
    main()

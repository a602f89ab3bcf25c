"""PyTorch's own kernels (ATen's elementwise, reduction, softmax and layer
norm kernels, its random number generator) on the simulated GPU, for
tests/test_categories.py: their names are libtorch_cuda's, whatever
category they fall in. (cuBLAS and cuDNN do not run on the simulated GPU:
no matmul or convolution here.)"""
import torch
import torch.nn.functional as F

x = torch.randn(256, 512, device="cuda", dtype=torch.float16)
w = torch.randn(256, 512, device="cuda", dtype=torch.float16)
for _ in range(2):
    y = torch.relu(x * w) + 1
    y = F.softmax(y.float(), dim=-1)
    y = F.layer_norm(y, (512,))
    s = y.sum()
torch.cuda.synchronize()
print("kinds_torch: done", float(s) != 0)

// nvtx_cuda: CUDA C++ built by nvcc with NVTX v3 ranges around known work.
// Ground truth (tests/test_nvtx.py): push "setup" holding 1 cudaMalloc; then
// 3 x push "step" (depth 0), each holding "forward" (depth 1, 1 launch of
// fwd) and then "backward" (depth 1, 2 launches of bwd); a final
// cudaDeviceSynchronize outside any range.
#include <cstdio>
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

__global__ void fwd(float *x)
{
    x[threadIdx.x] += 1.0f;
}

__global__ void bwd(float *x)
{
    x[threadIdx.x] *= 0.5f;
}

int main()
{
    float *x;
    nvtxRangePushA("setup");
    cudaMalloc(&x, 32 * sizeof(float));
    nvtxRangePop();
    for (int i = 0; i < 3; i++) {
        nvtxRangePushA("step");
        nvtxRangePushA("forward");
        fwd<<<1, 32>>>(x);
        nvtxRangePop();
        nvtxRangePushA("backward");
        bwd<<<1, 32>>>(x);
        bwd<<<1, 32>>>(x);
        nvtxRangePop();
        nvtxRangePop();
    }
    cudaError_t e = cudaDeviceSynchronize();
    std::printf("nvtx_cuda: %s\n", e == cudaSuccess ? "ok" : "failed");
    return e == cudaSuccess ? 0 : 1;
}

// graph_nvcc: CUDA Graphs from a program built by nvcc -cudart shared, the
// <<<>>> path: graph_nvcc R.
//   capture_cu(): step_k<<<8, 128>>> twice, then tail_k<<<1, 32>>>, captured on a stream
//   add_cu():     a graph built node by node: tail_k, then step_k after it
// Each graph is launched R times from replay_cu().
//   zero_copy():  4 KiB of mapped host memory (cudaHostAllocMapped), read by one
//                 step_k<<<1, 32>>> through its device pointer and copied to the device once
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

__global__ void step_k(float *x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] += 1.0f;
}

__global__ void tail_k(float *x, int n)
{
    if (threadIdx.x == 0 && n > 0)
        x[0] *= 2.0f;
}

__attribute__((noinline)) static cudaGraph_t capture_cu(cudaStream_t s, float *x, int n)
{
    cudaGraph_t g;
    cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
    step_k<<<8, 128, 0, s>>>(x, n);
    step_k<<<8, 128, 0, s>>>(x, n);
    tail_k<<<1, 32, 0, s>>>(x, n);
    if (cudaStreamEndCapture(s, &g) != cudaSuccess)
        exit(3);
    return g;
}

__attribute__((noinline)) static cudaGraph_t add_cu(float *x, int n)
{
    cudaGraph_t g;
    cudaGraphNode_t a, b;
    void *args[] = {&x, &n};
    cudaKernelNodeParams p = {};
    cudaGraphCreate(&g, 0);
    p.func = (void *)tail_k;
    p.gridDim = dim3(1);
    p.blockDim = dim3(32);
    p.kernelParams = args;
    if (cudaGraphAddKernelNode(&a, g, nullptr, 0, &p) != cudaSuccess)
        exit(4);
    p.func = (void *)step_k;
    p.gridDim = dim3(8);
    p.blockDim = dim3(128);
    if (cudaGraphAddKernelNode(&b, g, &a, 1, &p) != cudaSuccess)
        exit(5);
    return g;
}

__attribute__((noinline)) static void replay_cu(cudaGraphExec_t e, cudaStream_t s, int r)
{
    for (int i = 0; i < r; i++)
        cudaGraphLaunch(e, s);
}

__attribute__((noinline)) static void zero_copy(float *x)
{
    float *h, *d;
    if (cudaHostAlloc(&h, 4096, cudaHostAllocMapped) != cudaSuccess ||
        cudaHostGetDevicePointer((void **)&d, h, 0) != cudaSuccess)
        exit(7);
    step_k<<<1, 32>>>(d, 16);
    cudaMemcpy(x, h, 4096, cudaMemcpyHostToDevice);
    cudaFreeHost(h);
}

int main(int argc, char **argv)
{
    int r = argc > 1 ? atoi(argv[1]) : 1, n = 1024;
    float *x;
    cudaStream_t s;
    cudaMalloc(&x, n * sizeof(float));
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    cudaGraph_t g1 = capture_cu(s, x, n), g2 = add_cu(x, n);
    cudaGraphExec_t e1, e2;
    if (cudaGraphInstantiate(&e1, g1, 0) != cudaSuccess || cudaGraphInstantiate(&e2, g2, 0) != cudaSuccess)
        return 6;
    replay_cu(e1, s, r);
    replay_cu(e2, s, r);
    cudaStreamSynchronize(s);
    zero_copy(x);
    printf("graph_nvcc: %s\n", cudaGetLastError() == cudaSuccess ? "ok" : "error");
    return 0;
}

/* truth_graph: a CUDA Graph captured from a stream and replayed, with
 * planted answers for tests/test_truth.py.
 *   truth_graph REPLAYS
 * capture(): on a created stream, in capture: g_gemm, a 4096-byte memset,
 * g_bias, a 65536-byte device-to-device copy, g_gemm (3 launches, a memset
 * and a copy: 5 captured calls that run nothing). replay(): the graph
 * launched REPLAYS times, then a stream sync: REPLAYS x (2 g_gemm, 1
 * g_bias, 1 memset, 1 copy) run on the GPU under the graph launches. */
#include <stdio.h>
#include <stdlib.h>
#include <cuda_runtime_api.h>
#include "fakecuda.h"

static const void *k_gemm, *k_bias;

__attribute__((noinline)) static void capture(cudaStream_t s, char *dev)
{
    dim3 g = {8, 1, 1}, b = {256, 1, 1};
    cudaLaunchKernel(k_gemm, g, b, NULL, 0, s);
    cudaMemsetAsync(dev, 0, 4096, s);
    cudaLaunchKernel(k_bias, g, b, NULL, 0, s);
    cudaMemcpyAsync(dev + 65536, dev, 65536, cudaMemcpyDeviceToDevice, s);
    cudaLaunchKernel(k_gemm, g, b, NULL, 0, s);
}

__attribute__((noinline)) static int replay(cudaGraphExec_t exec, cudaStream_t s, int n)
{
    int ok = 0;
    for (int i = 0; i < n; i++)
        ok += cudaGraphLaunch(exec, s) == cudaSuccess;
    cudaStreamSynchronize(s);
    return ok;
}

int main(int argc, char **argv)
{
    int replays = argc > 1 ? atoi(argv[1]) : 6;
    k_gemm = fakecuda_runtime_kernel("g_gemm", 0);
    k_bias = fakecuda_runtime_kernel("g_bias", 0);
    cudaStream_t s;
    char *dev;
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    if (cudaMalloc((void **)&dev, 131072) != cudaSuccess)
        return 1;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    if (cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal) != cudaSuccess)
        return 2;
    capture(s, dev);
    if (cudaStreamEndCapture(s, &graph) != cudaSuccess || cudaGraphInstantiate(&exec, graph, 0) != cudaSuccess)
        return 3;
    int n = replay(exec, s, replays);
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
    cudaStreamDestroy(s);
    cudaFree(dev);
    printf("truth_graph: %d replays\n", n);
    return 0;
}

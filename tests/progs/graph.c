/* graph: a CUDA Graph captured from a stream and replayed.
 * Ground truth: during capture, 2 launches of "graph_a", 1 of "graph_b"
 * and one 4096-byte memset (recorded as captured, run nothing); the graph
 * is then launched 5 times from replay(): 15 kernels and 5 memsets run on
 * the GPU, each linked to its cudaGraphLaunch. One plain launch of
 * "plain_kernel" on the same stream, outside capture, for contrast. */
#include <stdio.h>
#include <cuda_runtime_api.h>
#include "fakecuda.h"

static const void *ka, *kb, *kp;

__attribute__((noinline)) static void capture_step(cudaStream_t s, void *dev)
{
    dim3 g = {2, 1, 1}, b = {64, 1, 1};
    cudaLaunchKernel(ka, g, b, NULL, 0, s);
    cudaMemsetAsync(dev, 0, 4096, s);
    cudaLaunchKernel(kb, g, b, NULL, 0, s);
    cudaLaunchKernel(ka, g, b, NULL, 0, s);
}

__attribute__((noinline)) static int replay(cudaGraphExec_t exec, cudaStream_t s)
{
    int ok = 0;
    for (int i = 0; i < 5; i++)
        ok += cudaGraphLaunch(exec, s) == cudaSuccess;
    return ok;
}

int main(void)
{
    ka = fakecuda_runtime_kernel("graph_a", 0);
    kb = fakecuda_runtime_kernel("graph_b", 0);
    kp = fakecuda_runtime_kernel("plain_kernel", 0);
    cudaStream_t s;
    void *dev;
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    cudaMalloc(&dev, 4096);
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    if (cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal) != cudaSuccess)
        return 1;
    capture_step(s, dev);
    if (cudaStreamEndCapture(s, &graph) != cudaSuccess || cudaGraphInstantiate(&exec, graph, 0) != cudaSuccess)
        return 2;
    int n = replay(exec, s);
    dim3 g = {1, 1, 1}, b = {1, 1, 1};
    cudaLaunchKernel(kp, g, b, NULL, 0, s);
    cudaStreamSynchronize(s);
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
    printf("graph: %d replays\n", n);
    return 0;
}

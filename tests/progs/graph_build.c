/* graph_build: CUDA Graphs made every way a framework makes them, each
 * replayed a number of times the test sets: graph_build R1 R2 R3 R4.
 *
 *   G1, node by node (runtime) in build_nodes():
 *       node_a (kernel) -> memset 4096 B -> node_b (kernel) -> copy 8192 B DtoD -> host -> empty
 *     instantiated, launched R1 times from replay_nodes(); then updated
 *     from its clone (same shape: cudaGraphExecUpdate succeeds) and
 *     launched R1 more times from replay_nodes()
 *   G2 = clone of G1 (clone_step()), instantiated, launched R2 times from replay_clone()
 *   G3, captured in capture_step(): cap_c, cap_d, cap_c, then a 2048 B memset,
 *     launched R3 times from replay_captured()
 *   G4, node by node with the driver API in build_driver(): drv_node -> memset 1024 B,
 *     launched R4 times from replay_driver()
 * One plain launch of "plain_kernel" for contrast. Prints the host node's
 * count of runs. */
#include <stdio.h>
#include <stdlib.h>
#include <cuda.h>
#include <cuda_runtime_api.h>
#include "fakecuda.h"

static int host_runs;

static void CUDART_CB on_host(void *data)
{
    (void)data;
    __atomic_add_fetch(&host_runs, 1, __ATOMIC_RELAXED);
}

__attribute__((noinline)) static cudaGraph_t build_nodes(void *dev)
{
    cudaGraph_t g;
    cudaGraphNode_t a, m, b, c, h, e;
    if (cudaGraphCreate(&g, 0) != cudaSuccess)
        exit(10);
    struct cudaKernelNodeParams ka = {(void *)fakecuda_runtime_kernel("node_a", 0), {4, 1, 1}, {128, 1, 1}, 0,
                                      NULL, NULL};
    struct cudaKernelNodeParams kb = {(void *)fakecuda_runtime_kernel("node_b", 0), {2, 1, 1}, {64, 1, 1}, 0,
                                      NULL, NULL};
    struct cudaMemsetParams mp = {dev, 0, 0, 1, 4096, 1};
    struct cudaHostNodeParams hp = {on_host, NULL};
    if (cudaGraphAddKernelNode(&a, g, NULL, 0, &ka) != cudaSuccess ||
        cudaGraphAddMemsetNode(&m, g, &a, 1, &mp) != cudaSuccess ||
        cudaGraphAddKernelNode(&b, g, &m, 1, &kb) != cudaSuccess ||
        cudaGraphAddMemcpyNode1D(&c, g, &b, 1, (char *)dev + 8192, dev, 8192, cudaMemcpyDeviceToDevice) !=
            cudaSuccess ||
        cudaGraphAddHostNode(&h, g, &c, 1, &hp) != cudaSuccess || cudaGraphAddEmptyNode(&e, g, &h, 1) != cudaSuccess)
        exit(11);
    return g;
}

__attribute__((noinline)) static cudaGraph_t clone_step(cudaGraph_t g)
{
    cudaGraph_t c;
    if (cudaGraphClone(&c, g) != cudaSuccess)
        exit(12);
    return c;
}

__attribute__((noinline)) static cudaGraph_t capture_step(cudaStream_t s, void *dev)
{
    cudaGraph_t g;
    const void *kc = fakecuda_runtime_kernel("cap_c", 0), *kd = fakecuda_runtime_kernel("cap_d", 0);
    dim3 grid = {8, 1, 1}, block = {32, 1, 1};
    if (cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal) != cudaSuccess)
        exit(13);
    cudaLaunchKernel(kc, grid, block, NULL, 0, s);
    cudaLaunchKernel(kd, grid, block, NULL, 0, s);
    cudaLaunchKernel(kc, grid, block, NULL, 0, s);
    cudaMemsetAsync(dev, 1, 2048, s);
    if (cudaStreamEndCapture(s, &g) != cudaSuccess)
        exit(14);
    return g;
}

__attribute__((noinline)) static CUgraph build_driver(CUdeviceptr dev)
{
    CUgraph g;
    CUgraphNode k, m;
    if (cuGraphCreate(&g, 0) != CUDA_SUCCESS)
        exit(15);
    CUDA_KERNEL_NODE_PARAMS kp = {0};
    kp.func = fakecuda_driver_kernel("drv_node", 0);
    kp.gridDimX = kp.gridDimY = kp.gridDimZ = 1;
    kp.blockDimX = 256;
    kp.blockDimY = kp.blockDimZ = 1;
    CUDA_MEMSET_NODE_PARAMS mp = {dev, 0, 0, 1, 1024, 1};
    CUcontext ctx;
    cuCtxGetCurrent(&ctx);
    if (cuGraphAddKernelNode(&k, g, NULL, 0, &kp) != CUDA_SUCCESS ||
        cuGraphAddMemsetNode(&m, g, &k, 1, &mp, ctx) != CUDA_SUCCESS)
        exit(16);
    return g;
}

__attribute__((noinline)) static void replay_nodes(cudaGraphExec_t e, cudaStream_t s, int n)
{
    for (int i = 0; i < n; i++)
        cudaGraphLaunch(e, s);
}

__attribute__((noinline)) static void replay_clone(cudaGraphExec_t e, cudaStream_t s, int n)
{
    for (int i = 0; i < n; i++)
        cudaGraphLaunch(e, s);
}

__attribute__((noinline)) static void replay_captured(cudaGraphExec_t e, cudaStream_t s, int n)
{
    for (int i = 0; i < n; i++)
        cudaGraphLaunch(e, s);
}

__attribute__((noinline)) static void replay_driver(CUgraphExec e, CUstream s, int n)
{
    for (int i = 0; i < n; i++)
        cuGraphLaunch(e, s);
}

int main(int argc, char **argv)
{
    if (argc != 5)
        return 2;
    int r1 = atoi(argv[1]), r2 = atoi(argv[2]), r3 = atoi(argv[3]), r4 = atoi(argv[4]);
    void *dev;
    cudaStream_t s;
    cudaMalloc(&dev, 1 << 16);
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);

    cudaGraph_t g1 = build_nodes(dev), g2 = clone_step(g1), g3 = capture_step(s, dev);
    CUgraph g4 = build_driver((CUdeviceptr)(uintptr_t)dev + 32768);
    cudaGraphExec_t e1, e2, e3;
    CUgraphExec e4;
    if (cudaGraphInstantiate(&e1, g1, 0) != cudaSuccess || cudaGraphInstantiateWithFlags(&e2, g2, 0) != cudaSuccess ||
        cudaGraphInstantiate(&e3, g3, 0) != cudaSuccess || cuGraphInstantiate(&e4, g4, 0) != CUDA_SUCCESS)
        return 3;

    replay_nodes(e1, s, r1);
    cudaGraphExecUpdateResultInfo info;
    if (cudaGraphExecUpdate(e1, g2, &info) != cudaSuccess)
        return 4;
    replay_nodes(e1, s, r1);
    replay_clone(e2, s, r2);
    replay_captured(e3, s, r3);
    replay_driver(e4, (CUstream)s, r4);
    dim3 one = {1, 1, 1};
    cudaLaunchKernel(fakecuda_runtime_kernel("plain_kernel", 0), one, one, NULL, 0, s);
    cudaStreamSynchronize(s);
    printf("graph_build: host node ran %d times\n", host_runs);
    return 0;
}

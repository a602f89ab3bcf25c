/* sim_graph: a CUDA Graph built node by node, as frameworks build them.
 *
 *   M  memset of dev_a (1 MiB of 7s)        C1 copy pinned -> dev_b (1 MiB)
 *   K1 graph_k1, after M and C1             K2 graph_k2, after M
 *   H  host node, after K1 and K2           E  empty node, after H
 *   C2 copy dev_a -> pinned out, after E
 *
 * The graph is cloned, instantiated, uploaded and launched twice on one
 * stream; then K1 is changed to graph_k1b and the instantiated graph
 * updated from the graph, and launched a third time; an update from a
 * graph of another shape fails. Then a two-kernel graph built with the
 * driver API (drv_g1 -> drv_g2) is launched once. Prints "name value"
 * lines for tests/test_simulator.py. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cuda.h>
#include <cuda_runtime_api.h>
#include "fakecuda.h"

void fakecuda_activity_flush(void); /* libcuda.so.1: hands over the records of ended work */

#define N (1u << 20)

static int host_calls;

static void CUDART_CB on_host(void *data)
{
    (void)data;
    host_calls++;
}

static void out(const char *name, long long v)
{
    printf("%s %lld\n", name, v);
}

int main(void)
{
    const void *k1 = fakecuda_runtime_kernel("graph_k1", 0), *k2 = fakecuda_runtime_kernel("graph_k2", 0);
    const void *k1b = fakecuda_runtime_kernel("graph_k1b", 0);
    char *dev_a, *dev_b, *pinned, *result;
    cudaMalloc((void **)&dev_a, N);
    cudaMalloc((void **)&dev_b, N);
    cudaMallocHost((void **)&pinned, N);
    cudaMallocHost((void **)&result, N);
    memset(pinned, 1, N);
    cudaStream_t s;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);

    cudaGraph_t g;
    out("create_rc", cudaGraphCreate(&g, 0));
    cudaGraphNode_t m, c1, n1, n2, h, e, c2;
    struct cudaMemsetParams mp = {dev_a, 0, 7, 1, N, 1};
    out("add_memset_rc", cudaGraphAddMemsetNode(&m, g, NULL, 0, &mp));
    out("add_memcpy_rc", cudaGraphAddMemcpyNode1D(&c1, g, NULL, 0, dev_b, pinned, N, cudaMemcpyHostToDevice));
    struct cudaKernelNodeParams kp = {(void *)k1, {2, 1, 1}, {64, 1, 1}, 0, NULL, NULL};
    cudaGraphNode_t deps[2] = {m, c1};
    out("add_kernel_rc", cudaGraphAddKernelNode(&n1, g, deps, 2, &kp));
    kp.func = (void *)k2;
    out("add_kernel2_rc", cudaGraphAddKernelNode(&n2, g, &m, 1, &kp));
    struct cudaHostNodeParams hp = {on_host, NULL};
    cudaGraphNode_t kdeps[2] = {n1, n2};
    out("add_host_rc", cudaGraphAddHostNode(&h, g, kdeps, 2, &hp));
    out("add_empty_rc", cudaGraphAddEmptyNode(&e, g, &h, 1));
    out("add_memcpy2_rc", cudaGraphAddMemcpyNode1D(&c2, g, &e, 1, result, dev_a, N, cudaMemcpyDeviceToHost));
    cudaGraphNode_t dup[2] = {m, m};
    cudaGraphNode_t x;
    out("add_duplicate_dependency_rc", cudaGraphAddEmptyNode(&x, g, dup, 2));
    cudaGetLastError();

    size_t count = 0;
    cudaGraphGetNodes(g, NULL, &count);
    out("nodes", (long long)count);
    cudaGraphNode_t nodes[16];
    size_t cap = 16;
    cudaGraphGetNodes(g, nodes, &cap);
    char types[17] = {0};
    for (size_t i = 0; i < count && i < 16; i++) {
        enum cudaGraphNodeType t;
        cudaGraphNodeGetType(nodes[i], &t);
        types[i] = (char)('0' + t);
    }
    printf("types %s\n", types);
    cudaGraph_t clone;
    out("clone_rc", cudaGraphClone(&clone, g));
    size_t clone_count = 0;
    cudaGraphGetNodes(clone, NULL, &clone_count);
    out("clone_nodes", (long long)clone_count);

    cudaGraphExec_t ge;
    out("instantiate_rc", cudaGraphInstantiateWithFlags(&ge, g, 0));
    out("upload_rc", cudaGraphUpload(ge, s));
    out("launch1_rc", cudaGraphLaunch(ge, s));
    out("launch2_rc", cudaGraphLaunch(ge, s));
    out("sync_rc", cudaStreamSynchronize(s));
    out("host_calls", host_calls);
    out("bytes_ok", result[0] == 7 && result[N - 1] == 7);

    kp.func = (void *)k1b;
    out("set_params_rc", cudaGraphKernelNodeSetParams(n1, &kp));
    cudaGraphExecUpdateResultInfo info;
    out("update_rc", cudaGraphExecUpdate(ge, g, &info));
    out("update_result", info.result);
    out("launch3_rc", cudaGraphLaunch(ge, s));
    cudaStreamSynchronize(s);
    cudaGraphNode_t extra;
    cudaGraphAddEmptyNode(&extra, clone, NULL, 0);
    out("update_other_shape_rc", cudaGraphExecUpdate(ge, clone, &info));
    out("update_other_shape_result", info.result);
    cudaGetLastError();

    /* the driver's own calls */
    CUfunction f1 = fakecuda_driver_kernel("drv_g1", 0), f2 = fakecuda_driver_kernel("drv_g2", 0);
    CUgraph dg;
    CUgraphNode d1, d2;
    CUgraphExec dge;
    out("cu_create_rc", cuGraphCreate(&dg, 0));
    CUDA_KERNEL_NODE_PARAMS dp;
    memset(&dp, 0, sizeof(dp));
    dp.func = f1;
    dp.gridDimX = dp.gridDimY = dp.gridDimZ = dp.blockDimX = dp.blockDimY = dp.blockDimZ = 1;
    out("cu_add_rc", cuGraphAddKernelNode(&d1, dg, NULL, 0, &dp));
    dp.func = f2;
    out("cu_add2_rc", cuGraphAddKernelNode(&d2, dg, &d1, 1, &dp));
    out("cu_instantiate_rc", cuGraphInstantiate(&dge, dg, 0));
    out("cu_launch_rc", cuGraphLaunch(dge, (CUstream)s));
    out("cu_sync_rc", cuStreamSynchronize((CUstream)s));
    cuGraphExecDestroy(dge);
    cuGraphDestroy(dg);
    cudaGraphExecDestroy(ge);
    cudaGraphDestroy(g);
    cudaGraphDestroy(clone);
    fakecuda_activity_flush(); /* every record to FAKECUDA_LOG before exit */
    return 0;
}

/* polls: the calls a tracer used to miss. polls N:
 *   cudaSetDevice(0) twice;
 *   spin_event(): a kernel "slow_event" (FAKECUDA_KERNEL_NS sets it long)
 *     then cudaEventQuery on its event until it answers success;
 *   spin_stream(): a kernel "slow_stream" (as long), then cudaStreamQuery on its
 *     stream until done; both N times;
 *   a stream callback (cudaStreamAddCallback);
 *   update_graph(): a graph of a kernel, a memset, a host function and a
 *     copy, each node of its instance updated (cudaGraphExec*NodeSetParams),
 *     launched once; then cudaGraphKernelNodeSetParams + cudaGraphExecUpdate.
 * Prints each spin's count of not-ready answers, as the program counted
 * them, and the callback's runs. */
#include <stdio.h>
#include <stdlib.h>
#include <cuda_runtime_api.h>
#include "fakecuda.h"

static int callback_runs;

static void CUDART_CB on_callback(cudaStream_t s, cudaError_t status, void *data)
{
    (void)s; (void)status; (void)data;
    __atomic_add_fetch(&callback_runs, 1, __ATOMIC_RELAXED);
}

#define CHECK(x, code)                                                              \
    do {                                                                            \
        cudaError_t e_ = (x);                                                       \
        if (e_ != cudaSuccess) {                                                    \
            fprintf(stderr, "polls: %s: %s\n", #x, cudaGetErrorName(e_));            \
            exit(code);                                                             \
        }                                                                           \
    } while (0)

static const dim3 one = {1, 1, 1};

__attribute__((noinline)) static long spin_event(cudaStream_t s, cudaEvent_t e)
{
    void *args[] = {NULL};
    CHECK(cudaLaunchKernel(fakecuda_runtime_kernel("slow_event", 0), one, one, args, 0, s), 10);
    CHECK(cudaEventRecord(e, s), 11);
    long n = 0;
    cudaError_t r;
    while ((r = cudaEventQuery(e)) == cudaErrorNotReady)
        n++;
    CHECK(r, 12);
    return n;
}

__attribute__((noinline)) static long spin_stream(cudaStream_t s)
{
    void *args[] = {NULL};
    CHECK(cudaLaunchKernel(fakecuda_runtime_kernel("slow_stream", 0), one, one, args, 0, s), 13);
    long n = 0;
    cudaError_t r;
    while ((r = cudaStreamQuery(s)) == cudaErrorNotReady)
        n++;
    CHECK(r, 14);
    return n;
}

static int host_a, host_b;

static void CUDART_CB on_a(void *d) { (void)d; __atomic_add_fetch(&host_a, 1, __ATOMIC_RELAXED); }
static void CUDART_CB on_b(void *d) { (void)d; __atomic_add_fetch(&host_b, 1, __ATOMIC_RELAXED); }

/* A kernel, a memset of 1s, a host function and a copy of the memset's
 * bytes back, then every node of the instantiated graph updated: the
 * memset writes 5s, the host function is another one. */
__attribute__((noinline)) static void update_graph(cudaStream_t s)
{
    cudaGraph_t g;
    cudaGraphNode_t k, m, h, c;
    cudaGraphExec_t x;
    unsigned char *dev, *pinned;
    CHECK(cudaMalloc((void **)&dev, 4096), 20);
    CHECK(cudaMallocHost((void **)&pinned, 4096), 20);
    CHECK(cudaGraphCreate(&g, 0), 20);
    struct cudaKernelNodeParams p = {(void *)fakecuda_runtime_kernel("node_k", 0), {2, 1, 1}, {32, 1, 1}, 0, NULL,
                                     NULL};
    struct cudaMemsetParams mp = {dev, 0, 1, 1, 4096, 1};
    struct cudaHostNodeParams hp = {on_a, NULL};
    CHECK(cudaGraphAddKernelNode(&k, g, NULL, 0, &p), 21);
    CHECK(cudaGraphAddMemsetNode(&m, g, &k, 1, &mp), 21);
    CHECK(cudaGraphAddHostNode(&h, g, &m, 1, &hp), 21);
    CHECK(cudaGraphAddMemcpyNode1D(&c, g, &h, 1, pinned, dev, 4096, cudaMemcpyDeviceToHost), 21);
    CHECK(cudaGraphInstantiate(&x, g, 0), 22);
    p.gridDim.x = 4;
    CHECK(cudaGraphExecKernelNodeSetParams(x, k, &p), 23);
    mp.value = 5;
    CHECK(cudaGraphExecMemsetNodeSetParams(x, m, &mp), 23);
    hp.fn = on_b;
    CHECK(cudaGraphExecHostNodeSetParams(x, h, &hp), 23);
    CHECK(cudaGraphExecMemcpyNodeSetParams1D(x, c, pinned, dev, 4096, cudaMemcpyDeviceToHost), 23);
    CHECK(cudaGraphLaunch(x, s), 26);
    CHECK(cudaStreamSynchronize(s), 27);
    int fives = 0;
    for (int i = 0; i < 4096; i++)
        fives += pinned[i] == 5;
    printf("polls: updated graph wrote %d fives, host functions %d old %d new\n", fives, host_a, host_b);
    p.gridDim.x = 8;
    CHECK(cudaGraphKernelNodeSetParams(k, &p), 24);
    cudaGraphExecUpdateResultInfo info;
    CHECK(cudaGraphExecUpdate(x, g, &info), 25);
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 1;
    CHECK(cudaSetDevice(0), 2);
    cudaStream_t s;
    cudaEvent_t e;
    CHECK(cudaStreamCreate(&s), 3);
    CHECK(cudaEventCreate(&e), 3);
    CHECK(cudaSetDevice(0), 2);
    for (int i = 0; i < n; i++) {
        long a = spin_event(s, e);
        long b = spin_stream(s);
        printf("polls: event %ld stream %ld\n", a, b);
    }
    CHECK(cudaStreamAddCallback(s, on_callback, NULL, 0), 4);
    CHECK(cudaStreamSynchronize(s), 5);
    update_graph(s);
    printf("polls: callback ran %d times\n", __atomic_load_n(&callback_runs, __ATOMIC_RELAXED));
    return 0;
}

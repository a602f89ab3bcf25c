/* graph_fork: a CUDA Graph captured across two streams joined through
 * events, NVIDIA's fork/join pattern (simpleCudaGraphs), replayed R times:
 * graph_fork R.
 *
 *   capture on s1, in capture_fork():
 *     fork_k (kernel) on s1; event e1 recorded on s1; s2 waits on e1 (fork)
 *     on s2: a 64 MiB device-to-device copy, a 4096 B memset, a host function
 *     event e2 recorded on s2; s1 waits on e2 (join)
 *     join_k (kernel) on s1
 *   instantiated and launched R times on s1 from replay_fork().
 * Prints the host function's count of runs and the nodes the graph holds. */
#include <stdio.h>
#include <stdlib.h>
#include <cuda_runtime_api.h>
#include "fakecuda.h"

#define COPY_BYTES (64u << 20)

static int host_runs;

static void CUDART_CB on_host(void *data)
{
    (void)data;
    __atomic_add_fetch(&host_runs, 1, __ATOMIC_RELAXED);
}

#define CHECK(x, code)                                                              \
    do {                                                                            \
        cudaError_t e_ = (x);                                                       \
        if (e_ != cudaSuccess) {                                                    \
            fprintf(stderr, "graph_fork: %s: %s\n", #x, cudaGetErrorName(e_));       \
            exit(code);                                                             \
        }                                                                           \
    } while (0)

__attribute__((noinline)) static cudaGraph_t capture_fork(cudaStream_t s1, cudaStream_t s2, char *dev)
{
    cudaEvent_t e1, e2;
    CHECK(cudaEventCreateWithFlags(&e1, cudaEventDisableTiming), 10);
    CHECK(cudaEventCreateWithFlags(&e2, cudaEventDisableTiming), 10);
    void *args[] = {NULL};
    CHECK(cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal), 11);
    CHECK(cudaLaunchKernel(fakecuda_runtime_kernel("fork_k", 0), (dim3){8, 1, 1}, (dim3){128, 1, 1}, args, 0, s1), 12);
    CHECK(cudaEventRecord(e1, s1), 13);
    CHECK(cudaStreamWaitEvent(s2, e1, 0), 14);
    CHECK(cudaMemcpyAsync(dev + COPY_BYTES, dev, COPY_BYTES, cudaMemcpyDeviceToDevice, s2), 15);
    CHECK(cudaMemsetAsync(dev, 0, 4096, s2), 16);
    CHECK(cudaLaunchHostFunc(s2, on_host, NULL), 17);
    CHECK(cudaEventRecord(e2, s2), 18);
    CHECK(cudaStreamWaitEvent(s1, e2, 0), 19);
    CHECK(cudaLaunchKernel(fakecuda_runtime_kernel("join_k", 0), (dim3){4, 1, 1}, (dim3){64, 1, 1}, args, 0, s1), 20);
    cudaGraph_t g;
    CHECK(cudaStreamEndCapture(s1, &g), 21);
    return g;
}

__attribute__((noinline)) static void replay_fork(cudaGraphExec_t x, cudaStream_t s1, int r)
{
    for (int i = 0; i < r; i++)
        CHECK(cudaGraphLaunch(x, s1), 30);
    CHECK(cudaStreamSynchronize(s1), 31);
}

int main(int argc, char **argv)
{
    int r = argc > 1 ? atoi(argv[1]) : 2;
    cudaStream_t s1, s2;
    CHECK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking), 2);
    CHECK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking), 2);
    char *dev;
    CHECK(cudaMalloc((void **)&dev, 2 * (size_t)COPY_BYTES), 3);
    cudaGraph_t g = capture_fork(s1, s2, dev);
    size_t n = 0;
    CHECK(cudaGraphGetNodes(g, NULL, &n), 4);
    cudaGraphExec_t x;
    CHECK(cudaGraphInstantiate(&x, g, 0), 5);
    replay_fork(x, s1, r);
    CHECK(cudaDeviceSynchronize(), 6);
    printf("graph_fork: %zu nodes, host function ran %d times\n", n, __atomic_load_n(&host_runs, __ATOMIC_RELAXED));
    return 0;
}

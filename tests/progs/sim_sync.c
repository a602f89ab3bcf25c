/* sim_sync: the simulated GPU's blocking and ordering rules, one scenario
 * per run (argv[1]); tests/test_simulator.py sets the ground truth
 * (bandwidths, kernel durations, queue depth, launch latency) and reads
 * the trace.
 *
 *  copies   every kind of copy and memset, synchronous and async, each on
 *           an idle GPU (a device sync between them), in the order the
 *           test lists them; then checks the bytes arrived
 *  legacy   the legacy default stream between blocking and non-blocking
 *           streams
 *  queue    argv[2] kernels on one stream, back to back
 *  latency  one kernel on an idle GPU */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cuda_runtime_api.h>
#include "fakecuda.h"

#define N (1u << 20)

static int failed;

static void check(cudaError_t e, const char *what)
{
    if (e != cudaSuccess) {
        fprintf(stderr, "sim_sync: %s: %s\n", what, cudaGetErrorName(e));
        failed = 1;
    }
}

#define DO(call)                          \
    do {                                  \
        check(call, #call);               \
        check(cudaDeviceSynchronize(), "sync after " #call); \
    } while (0)

static void copies(void)
{
    char *pageable = malloc(N), *pageable2 = malloc(N), *pinned, *pinned2, *dev, *dev2, *managed;
    check(cudaMallocHost((void **)&pinned, N), "cudaMallocHost");
    check(cudaMallocHost((void **)&pinned2, N), "cudaMallocHost");
    check(cudaMalloc((void **)&dev, N), "cudaMalloc");
    check(cudaMalloc((void **)&dev2, N), "cudaMalloc");
    check(cudaMallocManaged((void **)&managed, N, cudaMemAttachGlobal), "cudaMallocManaged");
    cudaStream_t s;
    check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "stream");
    for (unsigned i = 0; i < N; i++) {
        pageable[i] = (char)(i * 7);
        pinned[i] = (char)(i * 13);
    }
    /* the order tests/test_simulator.py lists */
    DO(cudaMemcpy(dev, pageable, N, cudaMemcpyHostToDevice));          /* blocks */
    DO(cudaMemcpy(pageable2, dev, N, cudaMemcpyDeviceToHost));         /* blocks */
    DO(cudaMemcpy(dev, pinned, N, cudaMemcpyHostToDevice));            /* blocks */
    DO(cudaMemcpy(pinned2, dev, N, cudaMemcpyDeviceToHost));           /* blocks */
    DO(cudaMemcpy(dev2, dev, N, cudaMemcpyDeviceToDevice));            /* returns */
    DO(cudaMemcpy(pageable2, pageable, N, cudaMemcpyHostToHost));      /* blocks */
    DO(cudaMemcpyAsync(dev, pageable, N, cudaMemcpyHostToDevice, s));  /* blocks */
    DO(cudaMemcpyAsync(pageable2, dev, N, cudaMemcpyDeviceToHost, s)); /* blocks */
    DO(cudaMemcpyAsync(dev, pinned, N, cudaMemcpyHostToDevice, s));    /* returns */
    DO(cudaMemcpyAsync(pinned2, dev, N, cudaMemcpyDeviceToHost, s));   /* returns */
    DO(cudaMemcpyAsync(dev2, dev, N, cudaMemcpyDeviceToDevice, s));    /* returns */
    DO(cudaMemcpyAsync(pinned2, pinned, N, cudaMemcpyHostToHost, s));  /* blocks */
    DO(cudaMemcpy2DAsync(dev, 1024, pinned, 1024, 1024, N / 1024, cudaMemcpyHostToDevice, s)); /* returns */
    DO(cudaMemcpy2D(dev, 1024, pinned, 1024, 1024, N / 1024, cudaMemcpyHostToDevice));         /* blocks */
    DO(cudaMemset(dev, 3, N));                                         /* returns */
    DO(cudaMemset(managed, 3, N));                                     /* blocks */
    DO(cudaMemsetAsync(managed, 4, N, s));                             /* returns */
    DO(cudaMemset(pinned2, 5, N));                                     /* blocks */

    /* the bytes: an async pinned round trip, seen after a stream sync */
    memset(pinned2, 0, N);
    check(cudaMemcpyAsync(dev2, pinned, N, cudaMemcpyHostToDevice, s), "h2d");
    check(cudaMemcpyAsync(pinned2, dev2, N, cudaMemcpyDeviceToHost, s), "d2h");
    check(cudaStreamSynchronize(s), "stream sync");
    int ok = memcmp(pinned, pinned2, N) == 0 && managed[N - 1] == 4;
    check(cudaMemcpy(pageable2, dev2, N, cudaMemcpyDeviceToHost), "d2h pageable");
    ok = ok && memcmp(pinned, pageable2, N) == 0;
    printf("sim_sync: bytes %s\n", ok ? "ok" : "WRONG");
    failed |= !ok;
}

static void legacy(void)
{
    const void *ka = fakecuda_runtime_kernel("on_blocking_a", 0);
    const void *kn = fakecuda_runtime_kernel("on_nonblocking", 0);
    const void *k0 = fakecuda_runtime_kernel("on_legacy", 0);
    const void *kb = fakecuda_runtime_kernel("on_blocking_b", 0);
    const void *kn2 = fakecuda_runtime_kernel("on_nonblocking_2", 0);
    cudaStream_t a, b, n, n2;
    check(cudaStreamCreate(&a), "stream a");
    check(cudaStreamCreate(&b), "stream b");
    check(cudaStreamCreateWithFlags(&n, cudaStreamNonBlocking), "stream n");
    check(cudaStreamCreateWithFlags(&n2, cudaStreamNonBlocking), "stream n2");
    dim3 one = {1, 1, 1};
    check(cudaLaunchKernel(ka, one, one, NULL, 0, a), "ka");
    check(cudaLaunchKernel(kn, one, one, NULL, 0, n), "kn");
    check(cudaLaunchKernel(k0, one, one, NULL, 0, NULL), "k0");
    check(cudaLaunchKernel(kb, one, one, NULL, 0, b), "kb");
    check(cudaLaunchKernel(kn2, one, one, NULL, 0, n2), "kn2");
    check(cudaDeviceSynchronize(), "sync");
}

static void queue(int count)
{
    const void *k = fakecuda_runtime_kernel("queued_kernel", 0);
    dim3 one = {1, 1, 1};
    for (int i = 0; i < count; i++)
        check(cudaLaunchKernel(k, one, one, NULL, 0, NULL), "launch");
    check(cudaDeviceSynchronize(), "sync");
}

static void latency(void)
{
    const void *k = fakecuda_runtime_kernel("late_kernel", 0);
    dim3 one = {1, 1, 1};
    check(cudaLaunchKernel(k, one, one, NULL, 0, NULL), "launch");
    check(cudaDeviceSynchronize(), "sync");
}

int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "";
    if (strcmp(what, "copies") == 0)
        copies();
    else if (strcmp(what, "legacy") == 0)
        legacy();
    else if (strcmp(what, "queue") == 0)
        queue(argc > 2 ? atoi(argv[2]) : 8);
    else if (strcmp(what, "latency") == 0)
        latency();
    else {
        fprintf(stderr, "usage: sim_sync copies|legacy|queue [n]|latency\n");
        return 2;
    }
    return failed;
}

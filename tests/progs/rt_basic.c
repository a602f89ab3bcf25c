/* rt_basic: a runtime-API program with known work, for the capture tests.
 * Each kind of call is made from its own named function so tests can check
 * the calling function in each stack.
 *
 * Ground truth (asserted by tests/test_capture.py):
 *   kernels:  3 x "step_kernel" grid (4,2,1) block (128,1,1) shm 256 on stream s
 *             1 x "big_kernel" grid (1,1,1) block (32,1,1) on the NULL stream
 *   copies:   HtoD 1 MiB pageable sync, HtoD 1 MiB pinned async on s,
 *             DtoH 1 MiB pageable sync, DtoD 4096 B sync
 *   memsets:  1 x 65536 B sync, 1 x 4096 B async on s
 *   syncs:    1 stream (s), 1 event, 1 device
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cuda_runtime_api.h>
#include "fakecuda.h"

#define MB (1 << 20)

static void check(cudaError_t e, const char *what)
{
    if (e != cudaSuccess) {
        fprintf(stderr, "rt_basic: %s failed: %s\n", what, cudaGetErrorString(e));
        exit(1);
    }
}

__attribute__((noinline)) static void upload_batch(void *dev, void *pageable, void *pinned, cudaStream_t s)
{
    check(cudaMemcpy(dev, pageable, MB, cudaMemcpyHostToDevice), "cudaMemcpy HtoD");
    check(cudaMemcpyAsync(dev, pinned, MB, cudaMemcpyHostToDevice, s), "cudaMemcpyAsync HtoD");
}

__attribute__((noinline)) static void launch_steps(const void *k, void *dev, cudaStream_t s)
{
    void *args[] = {&dev};
    dim3 grid = {4, 2, 1}, block = {128, 1, 1};
    for (int i = 0; i < 3; i++)
        check(cudaLaunchKernel(k, grid, block, args, 256, s), "cudaLaunchKernel");
}

__attribute__((noinline)) static void launch_big(const void *k, void *dev)
{
    void *args[] = {&dev};
    dim3 grid = {1, 1, 1}, block = {32, 1, 1};
    check(cudaLaunchKernel(k, grid, block, args, 0, NULL), "cudaLaunchKernel big");
}

__attribute__((noinline)) static void clear_buffers(void *dev, cudaStream_t s)
{
    check(cudaMemset(dev, 0, 65536), "cudaMemset");
    check(cudaMemsetAsync(dev, 1, 4096, s), "cudaMemsetAsync");
}

__attribute__((noinline)) static void wait_all(cudaStream_t s, cudaEvent_t e)
{
    check(cudaStreamSynchronize(s), "cudaStreamSynchronize");
    check(cudaEventSynchronize(e), "cudaEventSynchronize");
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
}

__attribute__((noinline)) static void download(void *host, void *dev, void *dev2)
{
    check(cudaMemcpy(host, dev, MB, cudaMemcpyDeviceToHost), "cudaMemcpy DtoH");
    check(cudaMemcpy(dev2, dev, 4096, cudaMemcpyDeviceToDevice), "cudaMemcpy DtoD");
}

int main(void)
{
    const void *step = fakecuda_runtime_kernel("step_kernel", 0);
    const void *big = fakecuda_runtime_kernel("big_kernel", 0);
    void *dev, *dev2, *pinned;
    char *pageable = malloc(MB), *back = malloc(MB);
    for (int i = 0; i < MB; i++)
        pageable[i] = (char)(i * 7);
    cudaStream_t s;
    cudaEvent_t e;
    check(cudaMalloc(&dev, MB), "cudaMalloc");
    check(cudaMalloc(&dev2, MB), "cudaMalloc 2");
    check(cudaMallocHost(&pinned, MB), "cudaMallocHost");
    memcpy(pinned, pageable, MB);
    check(cudaStreamCreate(&s), "cudaStreamCreate");
    check(cudaEventCreate(&e), "cudaEventCreate");

    upload_batch(dev, pageable, pinned, s);
    launch_steps(step, dev, s);
    launch_big(big, dev);
    clear_buffers(dev2, s);
    check(cudaEventRecord(e, s), "cudaEventRecord");
    wait_all(s, e);
    /* the memsets above touched dev2 only: dev still holds the upload */
    download(back, dev, dev2);
    int same = memcmp(back, pageable, MB) == 0;

    check(cudaEventDestroy(e), "cudaEventDestroy");
    check(cudaStreamDestroy(s), "cudaStreamDestroy");
    check(cudaFreeHost(pinned), "cudaFreeHost");
    check(cudaFree(dev2), "cudaFree 2");
    check(cudaFree(dev), "cudaFree");
    free(pageable);
    free(back);
    printf("rt_basic: round trip %s\n", same ? "ok" : "MISMATCH");
    return same ? 0 : 3;
}

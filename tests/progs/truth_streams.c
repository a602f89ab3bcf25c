/* truth_streams: launches from several threads on several streams, and
 * compute/copy overlap, for tests/test_truth.py.
 *   truth_streams THREADS LAUNCHES
 * workers(): THREADS threads, each with its own non-blocking stream:
 *   LAUNCHES launches of worker_k there, then a sync of that stream.
 * overlap(): on device 0, big_compute (its duration from
 *   FAKECUDA_KERNEL_NS, longer than the copy) on stream A, then at once an
 *   async host-to-device copy of 2 MiB from pinned memory on stream B: the
 *   copy runs entirely under the kernel; then a device sync. (A memset
 *   and a sync first: the simulated GPU moves real bytes, and touching the
 *   device buffer's pages for the first time inside the copy would delay
 *   it past the kernel.) */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cuda_runtime_api.h>
#include "fakecuda.h"

#define COPY_BYTES (2u << 20)

static const void *k_worker, *k_big;
static int per_thread;

__attribute__((noinline)) static int worker_launches(cudaStream_t s)
{
    int ok = 0;
    dim3 g = {4, 1, 1}, b = {64, 1, 1};
    for (int i = 0; i < per_thread; i++)
        ok += cudaLaunchKernel(k_worker, g, b, NULL, 0, s) == cudaSuccess;
    return ok;
}

static void *worker(void *arg)
{
    (void)arg;
    cudaStream_t s;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    long ok = worker_launches(s);
    cudaStreamSynchronize(s);
    cudaStreamDestroy(s);
    return (void *)ok;
}

__attribute__((noinline)) static long workers(int n)
{
    pthread_t t[64];
    long total = 0;
    for (int i = 0; i < n; i++)
        pthread_create(&t[i], NULL, worker, (void *)(long)i);
    for (int i = 0; i < n; i++) {
        void *r;
        pthread_join(t[i], &r);
        total += (long)r;
    }
    return total;
}

__attribute__((noinline)) static void overlap(void)
{
    cudaStream_t a, b;
    char *dev, *pinned;
    dim3 g = {64, 1, 1}, blk = {256, 1, 1};
    cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking);
    cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking);
    cudaMalloc((void **)&dev, COPY_BYTES);
    cudaMallocHost((void **)&pinned, COPY_BYTES);
    memset(pinned, 5, COPY_BYTES);
    cudaMemset(dev, 0, COPY_BYTES);
    cudaDeviceSynchronize();
    cudaLaunchKernel(k_big, g, blk, NULL, 0, a);
    cudaMemcpyAsync(dev, pinned, COPY_BYTES, cudaMemcpyHostToDevice, b);
    cudaDeviceSynchronize();
    cudaFreeHost(pinned);
    cudaFree(dev);
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 4;
    per_thread = argc > 2 ? atoi(argv[2]) : 50;
    if (n > 64)
        n = 64;
    k_worker = fakecuda_runtime_kernel("worker_k", 0);
    k_big = fakecuda_runtime_kernel("big_compute", 0);
    long launched = workers(n);
    overlap();
    printf("truth_streams: %ld worker launches\n", launched);
    return 0;
}

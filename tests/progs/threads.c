/* threads: T threads (argv[1]) each launch L kernels (argv[2]) at once and
 * copy 4096 bytes to the device once; threads start and end while others
 * are still launching. Prints the number of launches that succeeded. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <cuda_runtime_api.h>
#include "fakecuda.h"

static const void *kern;
static int per_thread;
static pthread_barrier_t go;

__attribute__((noinline)) static int worker_launches(cudaStream_t s)
{
    int ok = 0;
    dim3 g = {1, 1, 1}, b = {64, 1, 1};
    for (int i = 0; i < per_thread; i++)
        ok += cudaLaunchKernel(kern, g, b, NULL, 0, s) == cudaSuccess;
    return ok;
}

static void *worker(void *arg)
{
    (void)arg;
    cudaStream_t s;
    void *d;
    char buf[4096] = {0};
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    cudaMalloc(&d, sizeof(buf));
    pthread_barrier_wait(&go);
    long ok = worker_launches(s);
    cudaMemcpy(d, buf, sizeof(buf), cudaMemcpyHostToDevice);
    cudaStreamSynchronize(s);
    cudaFree(d);
    cudaStreamDestroy(s);
    return (void *)ok;
}

int main(int argc, char **argv)
{
    int nthreads = argc > 1 ? atoi(argv[1]) : 4;
    per_thread = argc > 2 ? atoi(argv[2]) : 1000;
    kern = fakecuda_runtime_kernel("thread_kernel", 1000);
    pthread_t t[64];
    if (nthreads > 64)
        nthreads = 64;
    pthread_barrier_init(&go, NULL, (unsigned)nthreads);
    for (int i = 0; i < nthreads; i++)
        pthread_create(&t[i], NULL, worker, NULL);
    long total = 0;
    for (int i = 0; i < nthreads; i++) {
        void *r;
        pthread_join(t[i], &r);
        total += (long)r;
    }
    cudaDeviceSynchronize();
    printf("threads: %ld launches\n", total);
    return 0;
}

/* diff_work: a training-like loop with planted changes for tests/test_diff.py.
 *   base:     10 steps: step() launches step_kernel (5 ms), host_work() 10 ms
 *   pageable: also load_batch() copies 64 KiB from pageable memory each step
 *   sync:     also wait_step() calls cudaDeviceSynchronize each step, after
 *             the host work (the kernel is done by then: timing unchanged)
 *   slow:     step_kernel runs 8 ms instead of 5 (still inside the host work,
 *             so the span is unchanged); the kernel is registered with its
 *             duration, which FAKECUDA_KERNEL_NS does not override */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <cuda_runtime_api.h>
#include "fakecuda.h"

static const void *kern;
static void *dev;
static dim3 g1 = {1, 1, 1}, b1 = {32, 1, 1};

__attribute__((noinline)) static void step(void) { cudaLaunchKernel(kern, g1, b1, NULL, 0, NULL); }

__attribute__((noinline)) static void host_work(void)
{
    struct timespec ts = {0, 10 * 1000 * 1000};
    nanosleep(&ts, NULL);
}

__attribute__((noinline)) static void load_batch(void)
{
    static char buf[65536];
    cudaMemcpy(dev, buf, sizeof(buf), cudaMemcpyHostToDevice);
}

__attribute__((noinline)) static void wait_step(void) { cudaDeviceSynchronize(); }

int main(int argc, char **argv)
{
    const char *v = argc > 1 ? argv[1] : "base";
    int pageable = strcmp(v, "pageable") == 0, sync = strcmp(v, "sync") == 0, slow = strcmp(v, "slow") == 0;
    kern = fakecuda_runtime_kernel("step_kernel", slow ? 8000000 : 5000000);
    cudaMalloc(&dev, 65536);
    for (int i = 0; i < 10; i++) {
        if (pageable)
            load_batch();
        step();
        host_work();
        if (sync)
            wait_step();
    }
    cudaDeviceSynchronize();
    cudaFree(dev);
    printf("diff_work: %s done\n", v);
    return 0;
}

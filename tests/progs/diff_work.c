/* diff_work: a training-like loop with planted changes for tests/test_diff.py.
 *   base:     10 steps: step() launches step_kernel (5 ms), host_work() 10 ms
 *   pageable: also load_batch() copies 64 KiB from pageable memory each step
 *   sync:     also wait_step() calls cudaDeviceSynchronize each step, after
 *             the host work (the kernel is done by then: timing unchanged)
 *   slow:     step_kernel runs 8 ms instead of 5 (still inside the host work,
 *             so the span is unchanged); the kernel is registered with its
 *             duration, which FAKECUDA_KERNEL_NS does not override
 *   launch:   also launch_extra() launches extra_kernel (10 us) 20 times a
 *             step, from a new launch site
 * An optional second argument sets the number of steps (default 10). Each
 * step is an NVTX range "train_step" (recorded when NVTX_INJECTION64_PATH
 * names the shim).
 * Built also without debug information, twice (tests/tests.mk): once as is
 * and once with DIFF_WORK_SHIFT, which puts code before every function so
 * that each frame's offset in the module differs between the two builds. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>
#include "fakecuda.h"

#ifdef DIFF_WORK_SHIFT
__attribute__((noinline, used)) static int shift_pad(volatile int *p)
{
    int s = 0;
    for (int i = 0; i < *p; i++)
        s += p[i] * 3 + (s >> 2) - i;
    return s;
}
#endif

static const void *kern, *extra;
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

__attribute__((noinline)) static void launch_extra(void)
{
    for (int i = 0; i < 20; i++)
        cudaLaunchKernel(extra, g1, b1, NULL, 0, NULL);
}

int main(int argc, char **argv)
{
    const char *v = argc > 1 ? argv[1] : "base";
    int pageable = strcmp(v, "pageable") == 0, sync = strcmp(v, "sync") == 0, slow = strcmp(v, "slow") == 0;
    int more = strcmp(v, "launch") == 0;
    int steps = argc > 2 ? atoi(argv[2]) : 10;
    kern = fakecuda_runtime_kernel("step_kernel", slow ? 8000000 : 5000000);
    extra = fakecuda_runtime_kernel("extra_kernel", 10000);
    cudaMalloc(&dev, 65536);
    for (int i = 0; i < steps; i++) {
        nvtxRangePushA("train_step");
        if (pageable)
            load_batch();
        step();
        if (more)
            launch_extra();
        host_work();
        if (sync)
            wait_step();
        nvtxRangePop();
    }
    cudaDeviceSynchronize();
    cudaFree(dev);
    printf("diff_work: %s done\n", v);
    return 0;
}

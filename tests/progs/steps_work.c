/* steps_work: training steps marked with NVTX (NVIDIA's v3 headers), with
 * one slow step: planted answers for the report's steps section
 * (tests/test_steps.py).
 *   steps_work NAMING STEPS SLOW STALL_US
 * NAMING: train_step (ranges "train_step"), profiler ("ProfilerStep#N",
 * N from 100), iter ("iter N", N from 0: a name only --step finds), or
 * names: then only one push/pop range of each name in NAMES below, in
 * that order, around one launch of k_fwd each (6 of them are step names).
 * main thread:
 *   push "warmup": cudaMalloc, one launch of k_fwd, cudaDeviceSynchronize,
 *     one cudaMemcpy as load_batch's (the simulator's first pageable copy
 *     is slow); pop
 *   STEPS x (step s):
 *     push the step's range:
 *       load_batch(): one blocking cudaMemcpy of 1 MiB host-to-device from
 *         pageable memory; in step SLOW load_batch_slow() instead, which
 *         sleeps STALL_US first (the GPU idles, the host is outside CUDA)
 *       2 launches of k_fwd
 *       push "step" (nested: not a step of its own): 1 launch of k_bwd; pop
 *       cudaStreamSynchronize(legacy)
 *     pop
 * Every kernel runs FAKECUDA_KERNEL_NS. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>
#include "fakecuda.h"

#define MB (1 << 20)

static const char *const NAMES[] = {"Step 3", "step#4", "train_step_5", "TRAINING_STEP-7", "ProfilerStep#9",
                                    "step12", "step_", "stepper", "my_step", "step 1a", "warmup"};

static void *dev;
static char *pageable;

__attribute__((noinline)) static void load_batch(void)
{
    cudaMemcpy(dev, pageable, MB, cudaMemcpyHostToDevice);
}

__attribute__((noinline)) static void load_batch_slow(unsigned stall_us)
{
    usleep(stall_us);
    cudaMemcpy(dev, pageable, MB, cudaMemcpyHostToDevice);
}

int main(int argc, char **argv)
{
    const char *naming = argc > 1 ? argv[1] : "train_step";
    int steps = argc > 2 ? atoi(argv[2]) : 8;
    int slow = argc > 3 ? atoi(argv[3]) : 5;
    unsigned stall = argc > 4 ? (unsigned)atoi(argv[4]) : 20000;
    const void *fwd = fakecuda_runtime_kernel("k_fwd", 0);
    const void *bwd = fakecuda_runtime_kernel("k_bwd", 0);
    dim3 g = {8, 1, 1}, b = {128, 1, 1};
    pageable = malloc(MB);
    memset(pageable, 1, MB);
    nvtxRangePushA("warmup");
    cudaMalloc(&dev, MB);
    cudaLaunchKernel(fwd, g, b, NULL, 0, NULL);
    cudaDeviceSynchronize();
    cudaMemcpy(dev, pageable, MB, cudaMemcpyHostToDevice);
    nvtxRangePop();
    if (strcmp(naming, "names") == 0) {
        for (size_t i = 0; i < sizeof(NAMES) / sizeof(NAMES[0]); i++) {
            nvtxRangePushA(NAMES[i]);
            cudaLaunchKernel(fwd, g, b, NULL, 0, NULL);
            nvtxRangePop();
        }
        cudaDeviceSynchronize();
        printf("steps_work: names\n");
        return 0;
    }
    for (int s = 0; s < steps; s++) {
        char name[64];
        if (strcmp(naming, "profiler") == 0)
            snprintf(name, sizeof(name), "ProfilerStep#%d", 100 + s);
        else if (strcmp(naming, "iter") == 0)
            snprintf(name, sizeof(name), "iter %d", s);
        else
            snprintf(name, sizeof(name), "train_step");
        nvtxRangePushA(name);
        if (s == slow)
            load_batch_slow(stall);
        else
            load_batch();
        for (int i = 0; i < 2; i++)
            cudaLaunchKernel(fwd, g, b, NULL, 0, NULL);
        nvtxRangePushA("step");
        cudaLaunchKernel(bwd, g, b, NULL, 0, NULL);
        nvtxRangePop();
        cudaStreamSynchronize(NULL);
        nvtxRangePop();
    }
    printf("steps_work: %d steps\n", steps);
    return 0;
}

/* gate_work: before/after pairs for the gates of tests/test_diff.py, in
 * which the answer is known from the source:
 *   copy:    each step load() copies 8 MiB from pageable memory (about
 *            0.8 ms at the simulated 10 GB/s; it waits for the kernel
 *            before it), step() launches work_kernel (1 ms), host_work()
 *            sleeps 200 us while the kernel runs, wait_for() waits for the
 *            kernel of 63 steps before (the last step: its own)
 *   nocopy:  the same without the copy: a pure improvement (the same
 *            kernels of the same length, a shorter run). The host work is
 *            shorter than the kernel, so the GPU never waits for the host
 *            once the loop runs: however a loaded machine stretches the
 *            sleeps, the GPU's figures stay the same
 *   slow:    nocopy with work_kernel at 1.3 ms: a regression of that
 *            kernel alone
 * The second argument sets the steps (default 300); each step is an NVTX
 * range "train_step" (recorded when NVTX_INJECTION64_PATH names the shim).
 * Prints "gate_work: VARIANT STEPS steps, KERNELS launches" at the end. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>
#include "fakecuda.h"

#define COPY_BYTES (8u << 20)

static const void *kern;
static void *dev;
static char *host;
static dim3 g1 = {1, 1, 1}, b1 = {32, 1, 1};

__attribute__((noinline)) static void load(void) { cudaMemcpy(dev, host, COPY_BYTES, cudaMemcpyHostToDevice); }

__attribute__((noinline)) static void step(void) { cudaLaunchKernel(kern, g1, b1, NULL, 0, NULL); }

/* The host stays at most AHEAD steps ahead of the GPU: each step waits for
 * the kernel of AHEAD - 1 steps before (the last step for its own), so the
 * GPU has work queued through a descheduled host's stall of tens of ms, and
 * no long wait piles up at the end. */
#define AHEAD 64
__attribute__((noinline)) static void wait_for(cudaEvent_t e) { cudaEventSynchronize(e); }

__attribute__((noinline)) static void host_work(void)
{
    struct timespec ts = {0, 200 * 1000};
    nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
    const char *v = argc > 1 ? argv[1] : "nocopy";
    int copy = strcmp(v, "copy") == 0, slow = strcmp(v, "slow") == 0;
    int steps = argc > 2 ? atoi(argv[2]) : 300, launches = 0;
    kern = fakecuda_runtime_kernel("work_kernel", slow ? 1300000 : 1000000);
    host = calloc(1, COPY_BYTES);
    cudaMalloc(&dev, COPY_BYTES);
    cudaEvent_t ev[AHEAD];
    for (int i = 0; i < AHEAD; i++)
        cudaEventCreate(&ev[i]);
    for (int i = 0; i < steps; i++) {
        nvtxRangePushA("train_step");
        if (copy)
            load();
        step();
        cudaEventRecord(ev[i % AHEAD], 0);
        launches++;
        host_work();
        wait_for(ev[i == steps - 1 ? i % AHEAD : (i + 1) % AHEAD]);
        nvtxRangePop();
    }
    for (int i = 0; i < AHEAD; i++)
        cudaEventDestroy(ev[i]);
    cudaFree(dev);
    free(host);
    printf("gate_work: %s %d steps, %d launches\n", v, steps, launches);
    return 0;
}

/* standby_steps: a training loop marked with NVTX steps (NVIDIA's v3
 * headers), for the automatic windows of tests/test_standby.py.
 *   standby_steps STEPS STEP_MS SLOW SLOW_MS LOG [KERNEL_US]
 * Each step: push "train_step", push "forward", launch step_kernel, pop,
 * sleep STEP_MS (SLOW_MS in the steps listed in SLOW, comma-separated, or
 * "-" for none), pop. step_kernel runs KERNEL_US on the GPU (default 10). Logs each step as "i t0 t1 l0 l1" (CLOCK_MONOTONIC
 * ns: the step's push and pop, and around its launch) to LOG at the end.
 * Prints "ready" once its first CUDA call is made. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>
#include "fakecuda.h"

static unsigned long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (unsigned long)ts.tv_sec * 1000000000ul + (unsigned long)ts.tv_nsec;
}

static int is_slow(const char *list, int i)
{
    char buf[256];
    snprintf(buf, sizeof(buf), "%s", list);
    for (char *t = strtok(buf, ","); t; t = strtok(NULL, ","))
        if (atoi(t) == i && strcmp(t, "-") != 0)
            return 1;
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 6)
        return 2;
    int steps = atoi(argv[1]);
    long step_ms = atol(argv[2]), slow_ms = atol(argv[4]);
    unsigned long kernel_ns = argc > 6 ? strtoul(argv[6], NULL, 10) * 1000ul : 10000ul;
    const void *k = fakecuda_runtime_kernel("step_kernel", kernel_ns);
    void *p;
    cudaMalloc(&p, 256); /* the first CUDA call: the channel opens here */
    printf("ready\n");
    fflush(stdout);
    unsigned long (*log)[4] = calloc((size_t)steps, sizeof(*log));
    dim3 g = {1, 1, 1}, b = {32, 1, 1};
    for (int i = 0; i < steps; i++) {
        log[i][0] = now_ns();
        nvtxRangePushA("train_step");
        nvtxRangePushA("forward");
        log[i][2] = now_ns();
        cudaLaunchKernel(k, g, b, NULL, 0, NULL);
        log[i][3] = now_ns();
        nvtxRangePop();
        long ms = is_slow(argv[3], i) ? slow_ms : step_ms;
        struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
        while (nanosleep(&ts, &ts) != 0)
            ;
        nvtxRangePop();
        log[i][1] = now_ns();
    }
    cudaDeviceSynchronize();
    FILE *f = fopen(argv[5], "w");
    for (int i = 0; f && i < steps; i++)
        fprintf(f, "%d %lu %lu %lu %lu\n", i, log[i][0], log[i][1], log[i][2], log[i][3]);
    if (f)
        fclose(f);
    return 0;
}

/* nvtx_phases: phases marked with NVTX (NVIDIA's v3 headers), planted
 * answers for the report's "by phase" section (tests/test_nvtx.py).
 *   nvtx_phases STEPS STALL_US
 * main thread:
 *   start/end range "run" around everything (not a phase: not a push)
 *   push "init": cudaMalloc, cudaMallocHost, cudaStreamCreate; pop
 *   STEPS x:
 *     push "data": usleep(STALL_US), then 2 blocking cudaMemcpy of 1 MiB
 *       host-to-device from pageable memory; pop
 *     push "compute": push "inner" (nested: not a phase) with 3 launches of
 *       k_fwd; pop; 2 launches of k_bwd; cudaStreamWaitEvent (not a sync);
 *       cudaStreamSynchronize(legacy); pop
 *   then a second thread, after the main thread's steps:
 *     push "data": cudaMemcpyAsync of 4096 B host-to-device from pinned
 *       memory on its stream, cudaStreamSynchronize; pop
 *   push "left-open", never popped (not a phase: it did not end)
 * Every kernel runs FAKECUDA_KERNEL_NS; no GPU work of one phase overlaps
 * another's. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>
#include "fakecuda.h"

#define MB (1 << 20)

static void *dev, *pinned;
static char *pageable;
static cudaStream_t side;

static void *loader(void *arg)
{
    (void)arg;
    nvtxRangePushA("data");
    cudaMemcpyAsync(dev, pinned, 4096, cudaMemcpyHostToDevice, side);
    cudaStreamSynchronize(side);
    nvtxRangePop();
    return NULL;
}

int main(int argc, char **argv)
{
    int steps = argc > 1 ? atoi(argv[1]) : 3;
    unsigned stall = argc > 2 ? (unsigned)atoi(argv[2]) : 2000;
    const void *fwd = fakecuda_runtime_kernel("k_fwd", 0);
    const void *bwd = fakecuda_runtime_kernel("k_bwd", 0);
    nvtxRangeId_t run = nvtxRangeStartA("run");
    nvtxRangePushA("init");
    pageable = malloc(MB);
    memset(pageable, 1, MB);
    cudaMalloc(&dev, 2 * MB);
    cudaMallocHost(&pinned, 4096);
    cudaStreamCreate(&side);
    cudaEvent_t ev;
    cudaEventCreate(&ev);
    nvtxRangePop();
    dim3 g = {8, 1, 1}, b = {128, 1, 1};
    for (int s = 0; s < steps; s++) {
        nvtxRangePushA("data");
        usleep(stall);
        cudaMemcpy(dev, pageable, MB, cudaMemcpyHostToDevice);
        cudaMemcpy((char *)dev + MB, pageable, MB, cudaMemcpyHostToDevice);
        nvtxRangePop();
        nvtxRangePushA("compute");
        nvtxRangePushA("inner");
        for (int i = 0; i < 3; i++)
            cudaLaunchKernel(fwd, g, b, NULL, 0, NULL);
        nvtxRangePop();
        for (int i = 0; i < 2; i++)
            cudaLaunchKernel(bwd, g, b, NULL, 0, NULL);
        cudaStreamWaitEvent(side, ev, 0);
        cudaStreamSynchronize(NULL);
        nvtxRangePop();
    }
    pthread_t t;
    pthread_create(&t, NULL, loader, NULL);
    pthread_join(t, NULL);
    nvtxRangeEnd(run);
    nvtxRangePushA("left-open");
    printf("nvtx_phases: done\n");
    return 0;
}

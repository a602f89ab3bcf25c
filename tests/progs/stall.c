/* stall: planted problems with known answers, for the report tests.
 *   first_kernel (1 ms) then a device sync in wait_first()
 *   host_work(): 50 ms outside CUDA (the planted stall)
 *   launch_second(): second_kernel (1 ms), then a device sync
 *   launch_burst(): 200 launches of tiny_kernel; with FAKECUDA_LAUNCH_NS
 *   larger than the kernel's duration every one of them is launch-bound
 *   feed(): 150 small pageable H2D copies of 4 KiB (a storm) */
#include <stdio.h>
#include <time.h>
#include <cuda_runtime_api.h>
#include "fakecuda.h"

static const void *first, *second, *tiny;
static void *dev;
static dim3 g1 = {1, 1, 1}, b1 = {32, 1, 1};

__attribute__((noinline)) static void launch_first(void) { cudaLaunchKernel(first, g1, b1, NULL, 0, NULL); }
__attribute__((noinline)) static void wait_first(void) { cudaDeviceSynchronize(); }

__attribute__((noinline)) static void host_work(void)
{
    struct timespec ts = {0, 50 * 1000 * 1000};
    nanosleep(&ts, NULL);
}

__attribute__((noinline)) static void launch_second(void)
{
    cudaLaunchKernel(second, g1, b1, NULL, 0, NULL);
    cudaDeviceSynchronize();
}

__attribute__((noinline)) static void launch_burst(void)
{
    for (int i = 0; i < 200; i++)
        cudaLaunchKernel(tiny, g1, b1, NULL, 0, NULL);
    cudaDeviceSynchronize();
}

__attribute__((noinline)) static void feed(void)
{
    static char buf[4096];
    for (int i = 0; i < 150; i++)
        cudaMemcpy(dev, buf, sizeof(buf), cudaMemcpyHostToDevice);
}

int main(void)
{
    first = fakecuda_runtime_kernel("first_kernel", 1000000);
    second = fakecuda_runtime_kernel("second_kernel", 1000000);
    tiny = fakecuda_runtime_kernel("tiny_kernel", 1000);
    cudaMalloc(&dev, 4096);
    launch_first();
    wait_first();
    host_work();
    launch_second();
    launch_burst();
    feed();
    cudaFree(dev);
    printf("stall: done\n");
    return 0;
}

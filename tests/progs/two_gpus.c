/* two_gpus: one process, two devices (run with FAKECUDA_DEVICES=2): device
 * 0 runs BUSY_KERNELS back-to-back kernels busy_kernel, device 1 one
 * blip_kernel. With FAKECUDA_KERNEL_NS=busy_kernel=2000000,blip_kernel=5000
 * device 0 is busy 40 ms, device 1 5 us: the GPUs as a whole are nearly
 * always busy, yet half the device time is idle. */
#include <stdio.h>
#include <cuda_runtime_api.h>
#include "fakecuda.h"

#define BUSY_KERNELS 20

int main(void)
{
    const void *busy = fakecuda_runtime_kernel("busy_kernel", 0);
    const void *blip = fakecuda_runtime_kernel("blip_kernel", 0);
    dim3 g = {1, 1, 1}, b = {32, 1, 1};
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n < 2) {
        fprintf(stderr, "two_gpus: %d devices (set FAKECUDA_DEVICES=2)\n", n);
        return 1;
    }
    if (cudaSetDevice(1) != cudaSuccess || cudaLaunchKernel(blip, g, b, NULL, 0, NULL) != cudaSuccess)
        return 1;
    if (cudaSetDevice(0) != cudaSuccess)
        return 1;
    for (int i = 0; i < BUSY_KERNELS; i++)
        if (cudaLaunchKernel(busy, g, b, NULL, 0, NULL) != cudaSuccess)
            return 1;
    if (cudaDeviceSynchronize() != cudaSuccess || cudaSetDevice(1) != cudaSuccess ||
        cudaDeviceSynchronize() != cudaSuccess)
        return 1;
    printf("two_gpus: %d kernels on device 0, 1 on device 1\n", BUSY_KERNELS);
    return 0;
}

/* mapped_mem: mapped (zero-copy) host memory beside pinned and pageable:
 * mapped_mem K C.
 *   map_alloc():    cudaHostAlloc(1 MiB, cudaHostAllocMapped), its device
 *                   pointer; K launches of zc_read read it over the bus
 *   map_register(): a malloc'ed 128 KiB registered with cudaHostRegisterMapped
 *   map_driver():   cuMemHostAlloc(32 KiB, CU_MEMHOSTALLOC_DEVICEMAP)
 *   map_asked():    cudaMallocHost(16 KiB), no flag, then its device pointer
 *                   asked for (zero-copy use of plain pinned memory)
 *   copies():       C copies host to device of 64 KiB from each of: the
 *                   mapped allocation, the registered memory, the driver's
 *                   mapped memory (4 KiB), the asked-for memory (4 KiB), a
 *                   plain pinned buffer, a pageable buffer */
#include <stdio.h>
#include <stdlib.h>
#include <cuda.h>
#include <cuda_runtime_api.h>
#include "fakecuda.h"

#define KB 1024

static void *hm, *hr, *hd, *ha, *hp, *pg, *dev;

__attribute__((noinline)) static void map_alloc(int k, cudaStream_t s)
{
    void *d;
    if (cudaHostAlloc(&hm, 1024 * KB, cudaHostAllocMapped) != cudaSuccess ||
        cudaHostGetDevicePointer(&d, hm, 0) != cudaSuccess)
        exit(10);
    const void *zc = fakecuda_runtime_kernel("zc_read", 0);
    dim3 g = {64, 1, 1}, b = {256, 1, 1};
    void *args[] = {&d};
    for (int i = 0; i < k; i++)
        cudaLaunchKernel(zc, g, b, args, 0, s);
}

__attribute__((noinline)) static void map_register(void)
{
    hr = malloc(128 * KB);
    if (!hr || cudaHostRegister(hr, 128 * KB, cudaHostRegisterMapped) != cudaSuccess)
        exit(11);
}

__attribute__((noinline)) static void map_driver(void)
{
    if (cuMemHostAlloc(&hd, 32 * KB, CU_MEMHOSTALLOC_DEVICEMAP) != CUDA_SUCCESS)
        exit(12);
}

__attribute__((noinline)) static void map_asked(void)
{
    void *d;
    if (cudaMallocHost(&ha, 16 * KB) != cudaSuccess || cudaHostGetDevicePointer(&d, ha, 0) != cudaSuccess)
        exit(13);
}

__attribute__((noinline)) static void copies(int c, cudaStream_t s)
{
    for (int i = 0; i < c; i++) {
        cudaMemcpyAsync(dev, hm, 64 * KB, cudaMemcpyHostToDevice, s);
        cudaMemcpyAsync(dev, hr, 64 * KB, cudaMemcpyHostToDevice, s);
        cuMemcpyHtoD((CUdeviceptr)(uintptr_t)dev, hd, 4 * KB);
        cudaMemcpyAsync(dev, ha, 4 * KB, cudaMemcpyHostToDevice, s);
        cudaMemcpyAsync(dev, hp, 64 * KB, cudaMemcpyHostToDevice, s);
        cudaMemcpy(dev, pg, 64 * KB, cudaMemcpyHostToDevice);
    }
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    int k = atoi(argv[1]), c = atoi(argv[2]);
    cudaStream_t s;
    if (cudaSetDeviceFlags(cudaDeviceMapHost) != cudaSuccess)
        return 3;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    cudaMalloc(&dev, 1024 * KB);
    cudaMallocHost(&hp, 64 * KB);
    pg = calloc(1, 64 * KB);
    map_alloc(k, s);
    map_register();
    map_driver();
    map_asked();
    copies(c, s);
    cudaStreamSynchronize(s);
    cudaHostUnregister(hr);
    cudaFreeHost(hm);
    cuMemFreeHost(hd);
    cudaFreeHost(ha);
    cudaFreeHost(hp);
    free(hr);
    free(pg);
    printf("mapped_mem: ok\n");
    return 0;
}

/* timing: work whose host-side durations the simulated GPU sets.
 *  1. launch "timed_kernel" once on the NULL stream, then cudaDeviceSynchronize
 *     (the sync lasts about the kernel's duration, FAKECUDA_KERNEL_NS)
 *  2. cudaMemcpyAsync HtoD of argv[1] bytes from pageable memory (blocks)
 *  3. cudaMemcpyAsync HtoD of the same size from pinned memory (does not block)
 *  4. cudaDeviceSynchronize */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cuda_runtime_api.h>
#include "fakecuda.h"

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : (64u << 20);
    const void *k = fakecuda_runtime_kernel("timed_kernel", 0);
    void *d, *pinned;
    char *pageable = malloc(n);
    memset(pageable, 1, n);
    cudaMalloc(&d, n);
    cudaMallocHost(&pinned, n);
    dim3 g = {1, 1, 1}, b = {1, 1, 1};
    cudaLaunchKernel(k, g, b, NULL, 0, NULL);
    cudaDeviceSynchronize();
    cudaStream_t s;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    cudaMemcpyAsync(d, pageable, n, cudaMemcpyHostToDevice, s);
    cudaMemcpyAsync(d, pinned, n, cudaMemcpyHostToDevice, s);
    cudaDeviceSynchronize();
    printf("timing: done\n");
    return 0;
}

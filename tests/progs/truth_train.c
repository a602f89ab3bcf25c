/* truth_train: a training loop with planted answers, for tests/test_truth.py.
 *   truth_train STEPS STALL_US BYTES KERNELS
 * init(): one memset and a device sync, so that the GPU has run something
 * before the first step; then STEPS steps, each:
 *   load_batch(): a host stall of STALL_US (usleep: the planted data
 *     loading), then one blocking cudaMemcpy of BYTES host-to-device from
 *     pageable (malloc'd) memory;
 *   forward(): KERNELS launches, alternating fwd_matmul and fwd_relu on
 *     the legacy stream (durations from FAKECUDA_KERNEL_NS);
 *   step_end(): cudaDeviceSynchronize.
 * The GPU sits idle through each stall; the work that ends each such gap
 * is the copy in load_batch, and the host was outside CUDA during it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cuda_runtime_api.h>
#include "fakecuda.h"

static const void *k_matmul, *k_relu;
static void *dev;
static char *host;

__attribute__((noinline)) static void init(size_t bytes)
{
    cudaMemset(dev, 0, bytes);
    cudaDeviceSynchronize();
}

__attribute__((noinline)) static void load_batch(size_t bytes, unsigned stall_us)
{
    usleep(stall_us);
    cudaMemcpy(dev, host, bytes, cudaMemcpyHostToDevice);
}

__attribute__((noinline)) static void forward(int kernels)
{
    dim3 g = {16, 1, 1}, b = {128, 1, 1};
    for (int i = 0; i < kernels; i++)
        cudaLaunchKernel(i % 2 ? k_relu : k_matmul, g, b, NULL, 0, NULL);
}

__attribute__((noinline)) static void step_end(void) { cudaDeviceSynchronize(); }

int main(int argc, char **argv)
{
    int steps = argc > 1 ? atoi(argv[1]) : 10;
    unsigned stall_us = argc > 2 ? (unsigned)atoi(argv[2]) : 5000;
    size_t bytes = argc > 3 ? (size_t)atol(argv[3]) : (1 << 20);
    int kernels = argc > 4 ? atoi(argv[4]) : 4;
    k_matmul = fakecuda_runtime_kernel("fwd_matmul", 0);
    k_relu = fakecuda_runtime_kernel("fwd_relu", 0);
    host = malloc(bytes);
    memset(host, 1, bytes);
    if (cudaMalloc(&dev, bytes) != cudaSuccess)
        return 1;
    init(bytes);
    for (int s = 0; s < steps; s++) {
        load_batch(bytes, stall_us);
        forward(kernels);
        step_end();
    }
    cudaFree(dev);
    free(host);
    printf("truth_train: %d steps\n", steps);
    return 0;
}

/* truth_fail: a process most of whose CUDA calls fail, for
 * tests/test_truth.py. Exactly 25 traced calls: cudaMalloc, one good
 * cudaMemcpy, 22 cudaMemcpy calls with a NULL destination (each fails with
 * cudaErrorInvalidValue, in bad_copies()), cudaFree. */
#include <stdio.h>
#include <cuda_runtime_api.h>

static char host[4096];

__attribute__((noinline)) static int bad_copies(int n)
{
    int failed = 0;
    for (int i = 0; i < n; i++)
        failed += cudaMemcpy(NULL, host, sizeof(host), cudaMemcpyHostToDevice) == cudaErrorInvalidValue;
    return failed;
}

int main(void)
{
    void *dev;
    if (cudaMalloc(&dev, sizeof(host)) != cudaSuccess)
        return 1;
    cudaMemcpy(dev, host, sizeof(host), cudaMemcpyHostToDevice);
    int failed = bad_copies(22);
    cudaFree(dev);
    printf("truth_fail: %d failed\n", failed);
    return failed == 22 ? 0 : 1;
}

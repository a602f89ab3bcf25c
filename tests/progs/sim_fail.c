/* sim_fail: a kernel that fails on the GPU (FAKECUDA_KERNEL_FAIL names it).
 * Prints "name value" lines: what each call returned, in order; the test
 * checks them, and the trace's times, against a real device error's rules. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cuda_runtime_api.h>
#include "fakecuda.h"

static void out(const char *name, long long v)
{
    printf("%s %lld\n", name, v);
}

int main(int argc, char **argv)
{
    int by_copy = argc > 1 && strcmp(argv[1], "copy") == 0;
    const void *ok = fakecuda_runtime_kernel("fine_kernel", 0), *bad = fakecuda_runtime_kernel("bad_kernel", 0);
    dim3 one = {1, 1, 1};
    char *dev, host[64];
    cudaMalloc((void **)&dev, 64);
    out("launch_fine", cudaLaunchKernel(ok, one, one, NULL, 0, NULL));
    out("launch_bad", cudaLaunchKernel(bad, one, one, NULL, 0, NULL));
    out("launch_after_bad", cudaLaunchKernel(ok, one, one, NULL, 0, NULL)); /* queued before it fails */
    if (by_copy)
        out("first_sync", cudaMemcpy(host, dev, 64, cudaMemcpyDeviceToHost));
    else
        out("first_sync", cudaDeviceSynchronize());
    out("last_error", cudaGetLastError());
    out("malloc_after", cudaMalloc((void **)&dev, 64));
    out("last_error_again", cudaGetLastError());
    out("launch_after", cudaLaunchKernel(ok, one, one, NULL, 0, NULL));
    out("memcpy_after", cudaMemcpy(host, dev, 64, cudaMemcpyDeviceToHost));
    out("sync_after", cudaDeviceSynchronize());
    out("reset", cudaDeviceReset());
    out("malloc_after_reset", cudaMalloc((void **)&dev, 64));
    out("launch_after_reset", cudaLaunchKernel(ok, one, one, NULL, 0, NULL));
    out("sync_after_reset", cudaDeviceSynchronize());
    out("last_error_after_reset", cudaGetLastError());
    return 0;
}

/* entry_point: reaches the driver the way PyTorch does, through entry
 * points the runtime hands out (cudaGetDriverEntryPoint[ByVersion]).
 * Ground truth: 3 launches of "ep_kernel" through the default entry point,
 * one 8192-byte HtoD copy through the per-thread one; all must be traced
 * and attributed to their callers. */
#include <stdio.h>
#include <string.h>
#include <cuda.h>
#include <cuda_runtime_api.h>
#include "fakecuda.h"

/* cudaGetDriverEntryPoint is deprecated, and still what many programs call. */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

typedef CUresult (*launch_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                              CUstream, void **, void **);
typedef CUresult (*htod_fn)(CUdeviceptr, const void *, size_t);

__attribute__((noinline)) static int ep_launches(launch_fn launch, CUfunction f)
{
    int ok = 0;
    for (int i = 0; i < 3; i++)
        ok += launch(f, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL) == CUDA_SUCCESS;
    return ok;
}

__attribute__((noinline)) static int ep_copy(htod_fn htod, void *dev)
{
    static char buf[8192];
    return htod((CUdeviceptr)dev, buf, sizeof(buf)) == CUDA_SUCCESS;
}

int main(void)
{
    void *dev = NULL, *launch = NULL, *htod = NULL;
    enum cudaDriverEntryPointQueryResult st;
    if (cudaMalloc(&dev, 8192) != cudaSuccess)
        return 1;
    if (cudaGetDriverEntryPoint("cuLaunchKernel", &launch, cudaEnableDefault, &st) != cudaSuccess || !launch)
        return 2;
    if (cudaGetDriverEntryPointByVersion("cuMemcpyHtoD", &htod, 13000, cudaEnablePerThreadDefaultStream, &st) !=
            cudaSuccess || !htod)
        return 3;
    CUfunction f = fakecuda_driver_kernel("ep_kernel", 0);
    int n = ep_launches((launch_fn)launch, f);
    int c = ep_copy((htod_fn)htod, dev);
    cudaDeviceSynchronize();
    printf("entry_point: %d launches, %d copy\n", n, c);
    return 0;
}

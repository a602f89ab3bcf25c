/* drv_basic: a driver-API program with known work.
 * Ground truth: 5 launches of "drv_kernel" grid (8,1,1) block (256,1,1) on a
 * created stream; HtoD 262144 B sync (pageable); DtoH 262144 B async into
 * pinned memory on the stream; cuMemsetD32 of 1024 elements (4096 B);
 * 1 cuStreamSynchronize, 1 cuCtxSynchronize. Also fetches cuLaunchKernel
 * through cuGetProcAddress and launches once more with it (6 launches in all). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cuda.h>
#include "fakecuda.h"

#define N (256 * 1024)

static void check(CUresult r, const char *what)
{
    if (r != CUDA_SUCCESS) {
        fprintf(stderr, "drv_basic: %s failed: %d\n", what, (int)r);
        exit(1);
    }
}

typedef CUresult (*launch_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                              CUstream, void **, void **);

__attribute__((noinline)) static void drv_launch_loop(CUfunction f, CUstream s, CUdeviceptr d)
{
    void *args[] = {&d};
    for (int i = 0; i < 5; i++)
        check(cuLaunchKernel(f, 8, 1, 1, 256, 1, 1, 0, s, args, NULL), "cuLaunchKernel");
}

__attribute__((noinline)) static void drv_launch_via_proc_address(CUfunction f, CUstream s, CUdeviceptr d)
{
    void *pfn = NULL;
    CUdriverProcAddressQueryResult st;
    check(cuGetProcAddress("cuLaunchKernel", &pfn, 13000, CU_GET_PROC_ADDRESS_DEFAULT, &st), "cuGetProcAddress");
    void *args[] = {&d};
    check(((launch_fn)pfn)(f, 8, 1, 1, 256, 1, 1, 0, s, args, NULL), "cuLaunchKernel via proc address");
}

int main(void)
{
    CUdevice dev;
    CUcontext ctx;
    CUstream s;
    CUdeviceptr d;
    void *pinned;
    char *host = malloc(N);
    memset(host, 5, N);
    check(cuInit(0), "cuInit");
    check(cuDeviceGet(&dev, 0), "cuDeviceGet");
    check(cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
    check(cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
    check(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    check(cuMemAlloc(&d, N), "cuMemAlloc");
    check(cuMemAllocHost(&pinned, N), "cuMemAllocHost");
    CUfunction f = fakecuda_driver_kernel("drv_kernel", 0);
    if (!f) {
        fprintf(stderr, "drv_basic: no kernel\n");
        return 1;
    }
    check(cuMemcpyHtoD(d, host, N), "cuMemcpyHtoD");
    drv_launch_loop(f, s, d);
    drv_launch_via_proc_address(f, s, d);
    check(cuMemsetD32(d, 0, 1024), "cuMemsetD32");
    check(cuMemcpyDtoHAsync(pinned, d, N, s), "cuMemcpyDtoHAsync");
    check(cuStreamSynchronize(s), "cuStreamSynchronize");
    check(cuCtxSynchronize(), "cuCtxSynchronize");
    int ok = ((unsigned char *)pinned)[N - 1] == 5 && ((unsigned char *)pinned)[0] == 0;
    check(cuMemFreeHost(pinned), "cuMemFreeHost");
    check(cuMemFree(d), "cuMemFree");
    check(cuStreamDestroy(s), "cuStreamDestroy");
    printf("drv_basic: %s\n", ok ? "ok" : "MISMATCH");
    free(host);
    return ok ? 0 : 3;
}

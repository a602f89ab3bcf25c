/* unhooked: GPU work through an entry point the shim does not wrap (a
 * driver function outside CUDA's API), beside work it does (a cuMemcpy3D
 * of 8192 bytes, one cuLaunchKernel): the unwrapped kernel's GPU record
 * must still land in the trace, flagged as not linked to a call. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cuda.h>
#include "fakecuda.h"

int main(void)
{
    CUdevice dev;
    CUcontext ctx;
    CUdeviceptr d;
    static char host[8192];
    if (cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) || cuCtxSetCurrent(ctx) ||
        cuMemAlloc(&d, sizeof(host)))
        return 1;
    CUDA_MEMCPY3D c;
    memset(&c, 0, sizeof(c));
    c.srcMemoryType = CU_MEMORYTYPE_HOST;
    c.srcHost = host;
    c.srcPitch = 4096;
    c.srcHeight = 1;
    c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    c.dstDevice = d;
    c.dstPitch = 4096;
    c.dstHeight = 1;
    c.WidthInBytes = 4096;
    c.Height = 2;
    c.Depth = 1;
    CUresult r = cuMemcpy3D(&c);
    CUfunction hidden = fakecuda_driver_kernel("unlisted_kernel", 0);
    if (fakecuda_unlisted_launch(hidden, NULL))
        return 1;
    CUfunction f = fakecuda_driver_kernel("linked_kernel", 0);
    if (cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL) || cuCtxSynchronize())
        return 1;
    printf("unhooked: copy3d %d\n", (int)r);
    return 0;
}

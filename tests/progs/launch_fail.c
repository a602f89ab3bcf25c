/* launch_fail: launches the driver refuses, of a function it holds.
 * Ground truth (the calls' results and what they asked for):
 *   refused_kernel from cuModuleGetFunction, never launched successfully;
 *   cuLaunchKernelEx grid (3,2,1) block (2048,1,1) shared 128: refused
 *     (2048 threads a block), CUDA_ERROR_INVALID_VALUE;
 *   cuLaunchKernel grid (5,1,1) block (64,32,1) shared 256: refused
 *     (2048 threads a block), CUDA_ERROR_INVALID_VALUE;
 *   cuLaunchKernelEx grid (4,1,1) block (128,1,1) shared 0: runs. */
#include <stdio.h>
#include <string.h>
#include <cuda.h>

static int expect(CUresult got, CUresult want, const char *what)
{
    if (got != want) {
        fprintf(stderr, "launch_fail: %s returned %d, want %d\n", what, (int)got, (int)want);
        return 1;
    }
    return 0;
}

int main(void)
{
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUfunction f;
    static const char image[] = ".version 8.0\n.target sm_90\n.address_size 64\n"
                                ".visible .entry refused_kernel()\n{\n\tret;\n}\n";
    if (cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) || cuCtxSetCurrent(ctx) ||
        cuModuleLoadData(&mod, image) || cuModuleGetFunction(&f, mod, "refused_kernel")) {
        fprintf(stderr, "launch_fail: set-up failed\n");
        return 1;
    }
    CUlaunchConfig c;
    memset(&c, 0, sizeof(c));
    c.gridDimX = 3, c.gridDimY = 2, c.gridDimZ = 1;
    c.blockDimX = 2048, c.blockDimY = 1, c.blockDimZ = 1;
    c.sharedMemBytes = 128;
    int bad = expect(cuLaunchKernelEx(&c, f, NULL, NULL), CUDA_ERROR_INVALID_VALUE, "cuLaunchKernelEx (refused)");
    bad |= expect(cuLaunchKernel(f, 5, 1, 1, 64, 32, 1, 256, NULL, NULL, NULL), CUDA_ERROR_INVALID_VALUE,
                  "cuLaunchKernel (refused)");
    c.gridDimX = 4, c.gridDimY = 1, c.blockDimX = 128, c.sharedMemBytes = 0;
    bad |= expect(cuLaunchKernelEx(&c, f, NULL, NULL), CUDA_SUCCESS, "cuLaunchKernelEx");
    bad |= expect(cuCtxSynchronize(), CUDA_SUCCESS, "cuCtxSynchronize");
    if (bad)
        return 1;
    printf("launch_fail: done\n");
    return 0;
}

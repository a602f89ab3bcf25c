/* dl_launcher: launches kernels the way Triton's launcher does: the driver
 * is dlopen'ed, never linked, and every entry point is found with dlsym on
 * that handle. Ground truth: 7 launches of "triton_kernel" (grid 3, block
 * 128) from triton_launch(), then a context sync. */
#include <dlfcn.h>
#include <stdio.h>
#include <cuda.h>

#define LOOKUP(h, name) ((__typeof__(&name))dlsym(h, #name))

__attribute__((noinline)) static int triton_launch(__typeof__(&cuLaunchKernel) launch, CUfunction f)
{
    int ok = 0;
    for (int i = 0; i < 7; i++)
        ok += launch(f, 3, 1, 1, 128, 1, 1, 0, NULL, NULL, NULL) == CUDA_SUCCESS;
    return ok;
}

int main(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return 1;
    __typeof__(&cuInit) init = LOOKUP(h, cuInit);
    __typeof__(&cuDeviceGet) device_get = LOOKUP(h, cuDeviceGet);
    __typeof__(&cuDevicePrimaryCtxRetain) retain = LOOKUP(h, cuDevicePrimaryCtxRetain);
    __typeof__(&cuCtxSetCurrent) set_current = LOOKUP(h, cuCtxSetCurrent);
    __typeof__(&cuModuleLoadData) load = LOOKUP(h, cuModuleLoadData);
    __typeof__(&cuModuleGetFunction) get_function = LOOKUP(h, cuModuleGetFunction);
    __typeof__(&cuLaunchKernel) launch = LOOKUP(h, cuLaunchKernel);
    __typeof__(&cuCtxSynchronize) sync = LOOKUP(h, cuCtxSynchronize);
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUfunction f;
    /* what Triton hands the driver when ptxas is not run: PTX text */
    static const char ptx[] = ".version 8.0\n.target sm_90\n.address_size 64\n"
                              ".visible .entry triton_kernel()\n{\n\tret;\n}\n";
    if (!init || !launch || init(0) || device_get(&dev, 0) || retain(&ctx, dev) || set_current(ctx) ||
        load(&mod, ptx) || get_function(&f, mod, "triton_kernel"))
        return 2;
    int n = triton_launch(launch, f);
    sync();
    printf("dl_launcher: %d launches\n", n);
    return 0;
}

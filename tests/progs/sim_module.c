/* sim_module: modules as the driver loads them (tests/fakecuda/driver/fk_module.c).
 * Ground truth: PTX with the kernels "alpha" and "beta_kernel" and a device
 * function "helper": cuModuleGetFunction finds the two kernels, not the
 * function and not a name the image lacks (CUDA_ERROR_NOT_FOUND = 500);
 * bytes that are no image are refused (CUDA_ERROR_INVALID_IMAGE = 200); a
 * kernel found is launched once; the module unloads. */
#include <stdio.h>
#include <cuda.h>

static const char ptx[] =
    "//\n// made by hand, as NVRTC writes it\n//\n.version 8.0\n.target sm_90\n.address_size 64\n\n"
    ".func helper(.param .b32 x)\n{\n\tret;\n}\n\n"
    ".visible .entry alpha(\n\t.param .u64 alpha_param_0\n)\n{\n\tret;\n}\n\n"
    ".visible .entry beta_kernel()\n{\n\tret;\n}\n";

int main(void)
{
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod, junk;
    CUfunction alpha, beta, f;
    if (cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) || cuCtxSetCurrent(ctx))
        return 1;
    int load = cuModuleLoadData(&mod, ptx);
    int a = cuModuleGetFunction(&alpha, mod, "alpha");
    int b = cuModuleGetFunction(&beta, mod, "beta_kernel");
    int h = cuModuleGetFunction(&f, mod, "helper");
    int g = cuModuleGetFunction(&f, mod, "gamma");
    int j = cuModuleLoadData(&junk, "not an image");
    int launch = cuLaunchKernel(alpha, 4, 1, 1, 64, 1, 1, 0, NULL, NULL, NULL);
    int sync = cuCtxSynchronize();
    int unload = cuModuleUnload(mod);
    printf("sim_module: load %d alpha %d beta_kernel %d helper %d gamma %d junk %d launch %d sync %d unload %d\n",
           load, a, b, h, g, j, launch, sync, unload);
    return 0;
}

/* module_jit: modules the way JIT users load them, through every driver
 * entry point, on the simulated GPU. Ground truth:
 *   NVRTC (the real one, on the CPU) compiles SOURCE to PTX: kernel
 *     jit_kernel, global jit_counter (an int, 4 bytes);
 *   argv[1] is a cubin nvcc built (module_cubin.cu): kernel cubin_kernel,
 *     global cubin_table (64 floats, 256 bytes); argv[2] the same as a
 *     fatbinary (nvcc -fatbin);
 *   loads: cuModuleLoad (the cubin's file), cuModuleLoadDataEx (its bytes),
 *     then cubin_kernel runs and the host waits for it, then
 *     cuModuleLoadData (the PTX, compiled: JIT; marked JIT_LOAD), then
 *     jit_kernel runs; cuLinkCreate/AddData (PTX, compiled)/AddFile
 *     (cubin)/Complete, cuModuleLoadData of the linked cubin,
 *     cuLinkDestroy; cuLibraryLoadData (the PTX, compiled),
 *     cuLibraryGetKernel, cuLibraryGetModule; cuModuleLoadFatBinary (the
 *     fatbinary's bytes), cuLibraryLoadFromFile (the cubin's file), each
 *     asked for cubin_kernel;
 *   globals: jit_counter 4 bytes, cubin_table 256 bytes (checked here);
 *   each PTX compile (marked JIT_LOAD, JIT_LINK, JIT_LIBRARY) comes while
 *     the GPU has nothing to do: three GPU idle gaps spent in them;
 *   then cuModuleGetGlobal of "no_such_global" fails with
 *     CUDA_ERROR_NOT_FOUND and the program exits with status 3 (the one
 *     failed call). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cuda.h>
#include <nvrtc.h>

static const char SOURCE[] = "__device__ int jit_counter;\n"
                             "extern \"C\" __global__ void jit_kernel(int *out) { out[0] = ++jit_counter; }\n";

static int fail(const char *what, CUresult r)
{
    const char *name = NULL;
    cuGetErrorName(r, &name);
    fprintf(stderr, "module_jit: %s: %s\n", what, name ? name : "?");
    return 1;
}

#define CK(call)                          \
    do {                                  \
        CUresult r_ = (call);             \
        if (r_ != CUDA_SUCCESS)           \
            return fail(#call, r_);       \
    } while (0)

static char *compile_ptx(void)
{
    nvrtcProgram prog;
    const char *opts[] = {"--gpu-architecture=compute_90"};
    size_t n = 0;
    if (nvrtcCreateProgram(&prog, SOURCE, "jit.cu", 0, NULL, NULL) != NVRTC_SUCCESS)
        return NULL;
    char *ptx = NULL;
    if (nvrtcCompileProgram(prog, 1, opts) == NVRTC_SUCCESS && nvrtcGetPTXSize(prog, &n) == NVRTC_SUCCESS &&
        (ptx = malloc(n)) && nvrtcGetPTX(prog, ptx) != NVRTC_SUCCESS) {
        free(ptx);
        ptx = NULL;
    }
    nvrtcDestroyProgram(&prog);
    return ptx;
}

static void *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    void *b = n > 0 ? malloc((size_t)n) : NULL;
    if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
        free(b);
        b = NULL;
    }
    fclose(f);
    *len = (size_t)n;
    return b;
}

__attribute__((noinline)) static CUresult load_ptx(CUmodule *m, const char *ptx)
{
    return cuModuleLoadData(m, ptx); /* JIT_LOAD */
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: module_jit CUBIN FATBIN\n");
        return 2;
    }
    char *ptx = compile_ptx();
    size_t cubin_len = 0, fatbin_len = 0;
    void *cubin = read_file(argv[1], &cubin_len), *fatbin = read_file(argv[2], &fatbin_len);
    if (!ptx || !cubin || !fatbin) {
        fprintf(stderr, "module_jit: no PTX from NVRTC or no cubin at %s\n", argv[1]);
        return 2;
    }
    CUdevice dev;
    CUcontext ctx;
    CUmodule from_file, from_bytes, jit, linked, lib_mod;
    CUfunction fc, fj, flc, flj;
    CUkernel kj;
    CUlibrary lib;
    CUdeviceptr out, g;
    size_t gbytes = 0;
    CK(cuInit(0));
    CK(cuDeviceGet(&dev, 0));
    CK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CK(cuCtxSetCurrent(ctx));
    CK(cuMemAlloc(&out, 1024));
    CK(cuModuleLoad(&from_file, argv[1]));
    CK(cuModuleLoadDataEx(&from_bytes, cubin, 0, NULL, NULL));
    CK(cuModuleGetFunction(&fc, from_bytes, "cubin_kernel"));
    void *args[] = {&out};
    CK(cuLaunchKernel(fc, 1, 1, 1, 64, 1, 1, 0, NULL, args, NULL));
    CK(cuCtxSynchronize());
    CK(load_ptx(&jit, ptx));
    CK(cuModuleGetFunction(&fj, jit, "jit_kernel"));
    CK(cuLaunchKernel(fj, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL));
    CK(cuModuleGetGlobal(&g, &gbytes, jit, "jit_counter"));
    if (gbytes != 4)
        return fail("jit_counter's size", CUDA_ERROR_INVALID_VALUE);
    CK(cuModuleGetGlobal(&g, &gbytes, from_file, "cubin_table"));
    if (gbytes != 256)
        return fail("cubin_table's size", CUDA_ERROR_INVALID_VALUE);

    CUlinkState link;
    void *image = NULL;
    size_t image_len = 0;
    CK(cuLinkCreate(0, NULL, NULL, &link));
    CK(cuLinkAddData(link, CU_JIT_INPUT_PTX, ptx, strlen(ptx) + 1, "jit.ptx", 0, NULL, NULL)); /* JIT_LINK */
    CK(cuLinkAddFile(link, CU_JIT_INPUT_CUBIN, argv[1], 0, NULL, NULL));
    CK(cuLinkComplete(link, &image, &image_len));
    CK(cuModuleLoadData(&linked, image));
    CK(cuLinkDestroy(link));
    CK(cuModuleGetFunction(&flc, linked, "cubin_kernel"));
    CK(cuModuleGetFunction(&flj, linked, "jit_kernel"));
    CK(cuLaunchKernel(flc, 1, 1, 1, 64, 1, 1, 0, NULL, args, NULL));

    CK(cuLibraryLoadData(&lib, ptx, NULL, NULL, 0, NULL, NULL, 0)); /* JIT_LIBRARY */
    CK(cuLibraryGetKernel(&kj, lib, "jit_kernel"));
    CK(cuLibraryGetModule(&lib_mod, lib));
    CK(cuLaunchKernel((CUfunction)kj, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL));
    CUmodule from_fatbin;
    CUlibrary lib_file;
    CUfunction ff;
    CUkernel kf;
    CK(cuModuleLoadFatBinary(&from_fatbin, fatbin));
    CK(cuModuleGetFunction(&ff, from_fatbin, "cubin_kernel"));
    CK(cuLibraryLoadFromFile(&lib_file, argv[1], NULL, NULL, 0, NULL, NULL, 0));
    CK(cuLibraryGetKernel(&kf, lib_file, "cubin_kernel"));
    CK(cuCtxSynchronize());
    printf("module_jit: 5 modules, 2 libraries, 4 launches\n");
    fflush(stdout);
    CUresult r = cuModuleGetGlobal(&g, &gbytes, linked, "no_such_global");
    if (r != CUDA_SUCCESS) {
        fail("cuModuleGetGlobal(no_such_global)", r);
        return 3;
    }
    return 0;
}

/* fr_kernels.c: what nvcc-generated code registers (fat binaries, host
 * stubs -> kernel names) and how launches reach the driver. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fakecuda.h"
#include "fr_runtime.h"

/* Registered kernels by host stub, in a hash table: PyTorch's libraries
 * register some 24,000 at load time and look one up at every launch. */
struct fr_kernel {
    const void *host_fun;
    char *name;
    CUkernel kernel; /* resolved on first use, once the driver is up */
    struct fr_kernel *next;
};

#define FR_KBUCKETS 65536u /* power of two */
static struct fr_kernel *fr_kbuckets[FR_KBUCKETS];
static pthread_mutex_t fr_klock = PTHREAD_MUTEX_INITIALIZER;
static CUlibrary fr_library;

static unsigned fr_khash(const void *p)
{
    uint64_t x = (uint64_t)(uintptr_t)p * 0x9E3779B97F4A7C15ull;
    return (unsigned)(x >> 40) & (FR_KBUCKETS - 1);
}

/* A stub registered again (a library loaded anew at the same address)
 * names the newer kernel: it goes first in its bucket. */
static void fr_register(const void *host_fun, const char *name)
{
    struct fr_kernel *k = malloc(sizeof(*k));
    char *copy = strdup(name);
    if (!k || !copy) {
        free(k);
        free(copy);
        return;
    }
    *k = (struct fr_kernel){host_fun, copy, NULL, NULL};
    unsigned b = fr_khash(host_fun);
    pthread_mutex_lock(&fr_klock);
    k->next = fr_kbuckets[b];
    fr_kbuckets[b] = k;
    pthread_mutex_unlock(&fr_klock);
}

static struct fr_kernel *fr_find(const void *host_fun)
{
    for (struct fr_kernel *k = fr_kbuckets[fr_khash(host_fun)]; k; k = k->next)
        if (k->host_fun == host_fun)
            return k;
    return NULL;
}

const char *fr_kernel_name(const void *host_fun)
{
    pthread_mutex_lock(&fr_klock);
    struct fr_kernel *k = fr_find(host_fun);
    const char *n = k ? k->name : NULL;
    pthread_mutex_unlock(&fr_klock);
    return n;
}

CUkernel fr_kernel_for(const void *host_fun)
{
    if (fr_ready() != cudaSuccess)
        return NULL;
    pthread_mutex_lock(&fr_klock);
    struct fr_kernel *k = fr_find(host_fun);
    CUkernel out = NULL;
    if (k) {
        static const char image[] = "fakecuda fatbin";
        if (!fr_library)
            fr_drv(0)->libraryLoadData(&fr_library, image, NULL, NULL, 0, NULL, NULL, 0);
        if (!k->kernel && fr_library)
            fr_drv(0)->libraryGetKernel(&k->kernel, fr_library, k->name);
        out = k->kernel;
    }
    pthread_mutex_unlock(&fr_klock);
    return out;
}

FR_API void **__cudaRegisterFatBinary(void *fat_cubin)
{
    void **h = malloc(sizeof(void *));
    if (h)
        *h = fat_cubin;
    return h;
}

FR_API void __cudaRegisterFatBinaryEnd(void **handle)
{
    (void)handle;
}

FR_API void __cudaUnregisterFatBinary(void **handle)
{
    free(handle);
}

FR_API char __cudaInitModule(void **handle)
{
    (void)handle;
    return 1;
}

FR_API void __cudaRegisterFunction(void **handle, const char *host_fun, char *device_fun, const char *device_name,
                                   int thread_limit, uint3 *tid, uint3 *bid, dim3 *bdim, dim3 *gdim, int *wsize)
{
    (void)handle; (void)device_fun; (void)thread_limit; (void)tid; (void)bid; (void)bdim; (void)gdim;
    (void)wsize;
    if (host_fun && device_name)
        fr_register(host_fun, device_name);
}

FR_API void __cudaRegisterVar(void **handle, char *host_var, char *device_address, const char *device_name,
                              int ext, size_t size, int constant, int global)
{
    (void)handle; (void)host_var; (void)device_address; (void)device_name; (void)ext; (void)size;
    (void)constant; (void)global;
}

FR_API void __cudaRegisterManagedVar(void **handle, void **host_var_ptr, char *device_address,
                                     const char *device_name, int ext, size_t size, int constant, int global)
{
    (void)handle; (void)host_var_ptr; (void)device_address; (void)device_name; (void)ext; (void)size;
    (void)constant; (void)global;
}

/* <<<grid, block, shm, stream>>> pushes a configuration; the stub pops it. */
struct fr_config {
    dim3 grid, block;
    size_t shm;
    void *stream;
};
static __thread struct fr_config fr_cfg_stack[16];
static __thread int fr_cfg_depth;

FR_API unsigned __cudaPushCallConfiguration(dim3 grid, dim3 block, size_t shm, void *stream)
{
    if (fr_cfg_depth >= 16)
        return 1;
    fr_cfg_stack[fr_cfg_depth++] = (struct fr_config){grid, block, shm, stream};
    return 0;
}

FR_API cudaError_t __cudaPopCallConfiguration(dim3 *grid, dim3 *block, size_t *shm, void *stream)
{
    if (fr_cfg_depth <= 0)
        return cudaErrorMissingConfiguration;
    struct fr_config c = fr_cfg_stack[--fr_cfg_depth];
    *grid = c.grid;
    *block = c.block;
    *shm = c.shm;
    *(void **)stream = c.stream;
    return cudaSuccess;
}

FR_API cudaError_t __cudaGetKernel(cudaKernel_t *kernel, const void *host_fun)
{
    if (!kernel)
        return fr_set_error(cudaErrorInvalidValue);
    CUkernel k = fr_kernel_for(host_fun);
    if (!k)
        return fr_set_error(cudaErrorInvalidDeviceFunction);
    *kernel = (cudaKernel_t)k;
    return cudaSuccess;
}

static cudaError_t fr_launch_k_in(CUkernel k, dim3 g, dim3 b, void **args, size_t shm, cudaStream_t s, int pt,
                                  int cooperative)
{
    cudaError_t e = fr_ready();
    if (e)
        return e;
    if (!k)
        return fr_set_error(cudaErrorInvalidDeviceFunction);
    const struct fr_driver *d = fr_drv(pt);
    CUresult r = cooperative ? d->launchCooperativeKernel((CUfunction)k, g.x, g.y, g.z, b.x, b.y, b.z,
                                                          (unsigned)shm, s, args)
                             : d->launchKernel((CUfunction)k, g.x, g.y, g.z, b.x, b.y, b.z, (unsigned)shm, s,
                                               args, NULL);
    return fr_set_error(r == CUDA_ERROR_INVALID_VALUE ? cudaErrorInvalidConfiguration : fr_error(r));
}

static cudaError_t fr_launch_k(CUkernel k, dim3 g, dim3 b, void **args, size_t shm, cudaStream_t s, int pt,
                               int cooperative)
{
    fr_rt_enter(cooperative ? "cudaLaunchCooperativeKernel_v9000" : "cudaLaunchKernel_v7000");
    cudaError_t e = fr_launch_k_in(k, g, b, args, shm, s, pt, cooperative);
    fr_rt_leave();
    return e;
}

FR_API cudaError_t __cudaLaunchKernel(cudaKernel_t k, dim3 g, dim3 b, void **args, size_t shm, cudaStream_t s)
{
    return fr_launch_k((CUkernel)k, g, b, args, shm, s, 0, 0);
}

FR_API cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t k, dim3 g, dim3 b, void **args, size_t shm,
                                           cudaStream_t s)
{
    return fr_launch_k((CUkernel)k, g, b, args, shm, s, 1, 0);
}

FR_API cudaError_t cudaLaunchKernel(const void *f, dim3 g, dim3 b, void **args, size_t shm, cudaStream_t s)
{
    return fr_launch_k(fr_kernel_for(f), g, b, args, shm, s, 0, 0);
}

FR_API cudaError_t cudaLaunchKernel_ptsz(const void *f, dim3 g, dim3 b, void **args, size_t shm, cudaStream_t s)
{
    return fr_launch_k(fr_kernel_for(f), g, b, args, shm, s, 1, 0);
}

FR_API cudaError_t cudaLaunchCooperativeKernel(const void *f, dim3 g, dim3 b, void **args, size_t shm,
                                               cudaStream_t s)
{
    return fr_launch_k(fr_kernel_for(f), g, b, args, shm, s, 0, 1);
}

FR_API cudaError_t cudaLaunchCooperativeKernel_ptsz(const void *f, dim3 g, dim3 b, void **args, size_t shm,
                                                    cudaStream_t s)
{
    return fr_launch_k(fr_kernel_for(f), g, b, args, shm, s, 1, 1);
}

static cudaError_t fr_launch_ex(const cudaLaunchConfig_t *c, const void *f, void **args, int pt)
{
    if (!c)
        return fr_set_error(cudaErrorInvalidValue);
    return fr_launch_k(fr_kernel_for(f), c->gridDim, c->blockDim, args, c->dynamicSmemBytes, c->stream, pt, 0);
}

FR_API cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t *c, const void *f, void **args)
{
    return fr_launch_ex(c, f, args, 0);
}

FR_API cudaError_t cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t *c, const void *f, void **args)
{
    return fr_launch_ex(c, f, args, 1);
}

FR_API cudaError_t cudaFuncGetName(const char **name, const void *f)
{
    if (!name)
        return fr_set_error(cudaErrorInvalidValue);
    const char *n = fr_kernel_name(f);
    if (!n)
        return fr_set_error(cudaErrorInvalidDeviceFunction);
    *name = n;
    return cudaSuccess;
}

FR_API cudaError_t cudaFuncGetAttributes(struct cudaFuncAttributes *a, const void *f)
{
    if (!a)
        return fr_set_error(cudaErrorInvalidValue);
    if (!fr_kernel_name(f))
        return fr_set_error(cudaErrorInvalidDeviceFunction);
    memset(a, 0, sizeof(*a));
    a->maxThreadsPerBlock = 1024;
    a->numRegs = 32; /* the simulated driver's CU_FUNC_ATTRIBUTE_NUM_REGS */
    a->maxDynamicSharedSizeBytes = 48 << 10;
    a->ptxVersion = a->binaryVersion = 90;
    return cudaSuccess;
}

FR_API cudaError_t cudaFuncSetAttribute(const void *f, enum cudaFuncAttribute attr, int v)
{
    (void)attr;
    (void)v;
    return fr_kernel_name(f) ? cudaSuccess : fr_set_error(cudaErrorInvalidDeviceFunction);
}

FR_API cudaError_t cudaGetFuncBySymbol(cudaFunction_t *fn, const void *symbol)
{
    if (!fn)
        return fr_set_error(cudaErrorInvalidValue);
    CUkernel k = fr_kernel_for(symbol);
    if (!k)
        return fr_set_error(cudaErrorInvalidDeviceFunction);
    *fn = (cudaFunction_t)k;
    return cudaSuccess;
}

/* For C tests without nvcc: a kernel registered as a .cu file would. */
FR_API const void *fakecuda_runtime_kernel(const char *name, uint64_t ns)
{
    if (!name)
        return NULL;
    char *stub = calloc(1, 1); /* a unique address, never read */
    if (!stub)
        return NULL;
    fr_register(stub, name);
    if (ns) {
        void (*set)(const char *, uint64_t) = (void (*)(const char *, uint64_t))fr_driver_symbol(
            "fakecuda_set_kernel_ns");
        if (set)
            set(name, ns);
    }
    return stub;
}

/* fk_api.c: the driver API entry points, as cuda.h names them in CUDA 13,
 * with their per-thread default stream variants. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fk_driver.h"

CUcontext fk_current_ctx(void);
void fk_set_current_ctx(CUcontext c);
void fk_event_record(struct CUevent_st *e, struct CUstream_st *s);
void fk_stream_wait_event(struct CUstream_st *s, struct CUevent_st *e);

#define CHECK_CTX()                           \
    do {                                      \
        CUresult r_ = fk_check_ctx();         \
        if (r_ != CUDA_SUCCESS)               \
            return r_;                        \
    } while (0)

/* ---- init, device, context ---- */

FK_API CUresult cuInit(unsigned int flags)
{
    if (flags)
        return CUDA_ERROR_INVALID_VALUE;
    fk_init_once();
    if (fk_is_forked_child())
        return CUDA_ERROR_NOT_INITIALIZED;
    fk_initialized = 1;
    return CUDA_SUCCESS;
}

FK_API CUresult cuDriverGetVersion(int *v)
{
    if (!v)
        return CUDA_ERROR_INVALID_VALUE;
    *v = 13000;
    return CUDA_SUCCESS;
}

FK_API CUresult cuDeviceGetCount(int *n)
{
    if (!fk_initialized)
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!n)
        return CUDA_ERROR_INVALID_VALUE;
    *n = fk_cfg.devices;
    return CUDA_SUCCESS;
}

FK_API CUresult cuDeviceGet(CUdevice *d, int ordinal)
{
    if (!fk_initialized)
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!d)
        return CUDA_ERROR_INVALID_VALUE;
    if (ordinal < 0 || ordinal >= fk_cfg.devices)
        return CUDA_ERROR_INVALID_DEVICE;
    *d = ordinal;
    return CUDA_SUCCESS;
}

FK_API CUresult cuDeviceGetName(char *name, int len, CUdevice d)
{
    if (!name || len <= 0)
        return CUDA_ERROR_INVALID_VALUE;
    if (d < 0 || d >= fk_cfg.devices)
        return CUDA_ERROR_INVALID_DEVICE;
    snprintf(name, (size_t)len, "Fake GPU (simulated H100)");
    return CUDA_SUCCESS;
}

FK_API CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice d)
{
    if (!bytes)
        return CUDA_ERROR_INVALID_VALUE;
    if (d < 0 || d >= fk_cfg.devices)
        return CUDA_ERROR_INVALID_DEVICE;
    *bytes = 80ull << 30;
    return CUDA_SUCCESS;
}

FK_API CUresult cuDeviceGetAttribute(int *v, CUdevice_attribute a, CUdevice d)
{
    if (!v)
        return CUDA_ERROR_INVALID_VALUE;
    if (d < 0 || d >= fk_cfg.devices)
        return CUDA_ERROR_INVALID_DEVICE;
    switch (a) {
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *v = 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X: case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y: *v = 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z: *v = 64; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X: *v = 2147483647; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y: case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z: *v = 65535; break;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE: *v = 32; break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *v = 132; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *v = 9; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *v = 0; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: *v = 49152; break;
    case CU_DEVICE_ATTRIBUTE_CLOCK_RATE: *v = 1980000; break;
    case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING: case CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS:
    case CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY: *v = 1; break;
    case CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT: *v = 2; break;
    case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID: *v = 0x10 + d; break;
    default: *v = 0; break;
    }
    return CUDA_SUCCESS;
}

FK_API CUresult cuDeviceGetUuid_v2(CUuuid *u, CUdevice d)
{
    if (!u)
        return CUDA_ERROR_INVALID_VALUE;
    memset(u, 0, sizeof(*u));
    u->bytes[0] = (char)(0xfa + d);
    return CUDA_SUCCESS;
}

FK_API CUresult cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d)
{
    if (!fk_initialized || fk_is_forked_child())
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!c)
        return CUDA_ERROR_INVALID_VALUE;
    if (d < 0 || d >= fk_cfg.devices)
        return CUDA_ERROR_INVALID_DEVICE;
    *c = &fk_primary_ctx;
    return CUDA_SUCCESS;
}

FK_API CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d)
{
    (void)d;
    return CUDA_SUCCESS;
}

FK_API CUresult cuDevicePrimaryCtxReset_v2(CUdevice d)
{
    (void)d;
    return CUDA_SUCCESS;
}

FK_API CUresult cuDevicePrimaryCtxGetState(CUdevice d, unsigned int *flags, int *active)
{
    (void)d;
    if (flags)
        *flags = 0;
    if (active)
        *active = 1;
    return CUDA_SUCCESS;
}

FK_API CUresult cuCtxCreate_v4(CUcontext *c, CUctxCreateParams *p, unsigned int flags, CUdevice d)
{
    (void)p;
    (void)flags;
    CUresult r = cuDevicePrimaryCtxRetain(c, d);
    if (r == CUDA_SUCCESS)
        fk_set_current_ctx(*c);
    return r;
}

FK_API CUresult cuCtxDestroy_v2(CUcontext c)
{
    if (!c || c->magic != FK_MAGIC_CTX)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (fk_current_ctx() == c)
        fk_set_current_ctx(NULL);
    return CUDA_SUCCESS;
}

FK_API CUresult cuCtxSetCurrent(CUcontext c)
{
    if (!fk_initialized)
        return CUDA_ERROR_NOT_INITIALIZED;
    if (c && c->magic != FK_MAGIC_CTX)
        return CUDA_ERROR_INVALID_CONTEXT;
    fk_set_current_ctx(c);
    return CUDA_SUCCESS;
}

FK_API CUresult cuCtxGetCurrent(CUcontext *c)
{
    if (!fk_initialized)
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!c)
        return CUDA_ERROR_INVALID_VALUE;
    *c = fk_current_ctx();
    return CUDA_SUCCESS;
}

FK_API CUresult cuCtxPushCurrent_v2(CUcontext c)
{
    return cuCtxSetCurrent(c);
}

FK_API CUresult cuCtxPopCurrent_v2(CUcontext *c)
{
    if (c)
        *c = fk_current_ctx();
    fk_set_current_ctx(NULL);
    return CUDA_SUCCESS;
}

FK_API CUresult cuCtxGetDevice(CUdevice *d)
{
    CHECK_CTX();
    if (!d)
        return CUDA_ERROR_INVALID_VALUE;
    *d = fk_current_ctx()->device;
    return CUDA_SUCCESS;
}

/* ---- modules, libraries, functions ---- */

static struct CUmod_st fk_module = {FK_MAGIC_MOD};

FK_API CUresult cuModuleLoadData(CUmodule *m, const void *image)
{
    CHECK_CTX();
    if (!m || !image)
        return CUDA_ERROR_INVALID_VALUE;
    *m = &fk_module;
    return CUDA_SUCCESS;
}

FK_API CUresult cuModuleUnload(CUmodule m)
{
    return m == &fk_module ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

FK_API CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name)
{
    CHECK_CTX();
    if (!f || !name)
        return CUDA_ERROR_INVALID_VALUE;
    if (m != &fk_module)
        return CUDA_ERROR_INVALID_HANDLE;
    *f = fk_function(name);
    return *f ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

FK_API CUresult cuLibraryLoadData(CUlibrary *lib, const void *code, CUjit_option *jo, void **jv, unsigned int njo,
                                  CUlibraryOption *lo, void **lv, unsigned int nlo)
{
    (void)jo; (void)jv; (void)njo; (void)lo; (void)lv; (void)nlo;
    if (!fk_initialized)
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!lib || !code)
        return CUDA_ERROR_INVALID_VALUE;
    *lib = (CUlibrary)&fk_module;
    return CUDA_SUCCESS;
}

FK_API CUresult cuLibraryUnload(CUlibrary lib)
{
    return (void *)lib == &fk_module ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

/* A CUkernel is the same object as its CUfunction here, as the real driver
 * lets either be passed to cuLaunchKernel. */
FK_API CUresult cuLibraryGetKernel(CUkernel *k, CUlibrary lib, const char *name)
{
    if (!k || !name)
        return CUDA_ERROR_INVALID_VALUE;
    if ((void *)lib != &fk_module)
        return CUDA_ERROR_INVALID_HANDLE;
    *k = (CUkernel)fk_function(name);
    return *k ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

FK_API CUresult cuKernelGetFunction(CUfunction *f, CUkernel k)
{
    if (!f || !k || ((struct CUfunc_st *)k)->magic != FK_MAGIC_FUNC)
        return CUDA_ERROR_INVALID_HANDLE;
    *f = (CUfunction)k;
    return CUDA_SUCCESS;
}

static CUresult fk_func_name(const char **name, const void *f)
{
    if (!name)
        return CUDA_ERROR_INVALID_VALUE;
    if (!f || ((const struct CUfunc_st *)f)->magic != FK_MAGIC_FUNC)
        return CUDA_ERROR_INVALID_HANDLE;
    *name = ((const struct CUfunc_st *)f)->name;
    return CUDA_SUCCESS;
}

FK_API CUresult cuFuncGetName(const char **name, CUfunction f)
{
    return fk_func_name(name, f);
}

FK_API CUresult cuKernelGetName(const char **name, CUkernel k)
{
    return fk_func_name(name, k);
}

FK_API CUresult cuFuncGetAttribute(int *v, CUfunction_attribute a, CUfunction f)
{
    if (!v || !f)
        return CUDA_ERROR_INVALID_VALUE;
    *v = a == CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK ? 1024 : 0;
    return CUDA_SUCCESS;
}

FK_API CUresult cuFuncSetAttribute(CUfunction f, CUfunction_attribute a, int v)
{
    (void)a;
    (void)v;
    return f ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

/* ---- memory ---- */

static CUresult fk_alloc(void **p, size_t n, int kind)
{
    CHECK_CTX();
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    if (n == 0 || n > (1ull << 40))
        return n ? CUDA_ERROR_OUT_OF_MEMORY : CUDA_ERROR_INVALID_VALUE;
    /* Device memory is host memory here, so copies move real bytes. */
    void *m = calloc(1, n);
    if (!m)
        return CUDA_ERROR_OUT_OF_MEMORY;
    fk_mem_add((uintptr_t)m, n, kind, 1);
    *p = m;
    return CUDA_SUCCESS;
}

static CUresult fk_free(void *p, int want)
{
    CHECK_CTX();
    if (!p)
        return CUDA_SUCCESS;
    int kind = 0;
    int r = fk_mem_remove((uintptr_t)p, &kind);
    if (!r || (want >= 0 && kind != want && !(want == FK_MEM_DEVICE && kind == FK_MEM_MANAGED))) {
        if (r)
            fk_mem_add((uintptr_t)p, 1, kind, r == 2);
        return CUDA_ERROR_INVALID_VALUE;
    }
    if (r == 2)
        free(p);
    return CUDA_SUCCESS;
}

FK_API CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n)
{
    return fk_alloc((void **)p, n, FK_MEM_DEVICE);
}

FK_API CUresult cuMemAllocPitch_v2(CUdeviceptr *p, size_t *pitch, size_t w, size_t h, unsigned int esz)
{
    (void)esz;
    if (!pitch)
        return CUDA_ERROR_INVALID_VALUE;
    size_t pw = (w + 511) & ~(size_t)511;
    CUresult r = fk_alloc((void **)p, pw * h, FK_MEM_DEVICE);
    if (r == CUDA_SUCCESS)
        *pitch = pw;
    return r;
}

FK_API CUresult cuMemAllocManaged(CUdeviceptr *p, size_t n, unsigned int flags)
{
    (void)flags;
    return fk_alloc((void **)p, n, FK_MEM_MANAGED);
}

FK_API CUresult cuMemFree_v2(CUdeviceptr p)
{
    return fk_free((void *)p, FK_MEM_DEVICE);
}

FK_API CUresult cuMemAllocHost_v2(void **p, size_t n)
{
    return fk_alloc(p, n, FK_MEM_PINNED);
}

FK_API CUresult cuMemHostAlloc(void **p, size_t n, unsigned int flags)
{
    (void)flags;
    return fk_alloc(p, n, FK_MEM_PINNED);
}

FK_API CUresult cuMemFreeHost(void *p)
{
    return fk_free(p, FK_MEM_PINNED);
}

FK_API CUresult cuMemHostRegister_v2(void *p, size_t n, unsigned int flags)
{
    (void)flags;
    CHECK_CTX();
    if (!p || !n)
        return CUDA_ERROR_INVALID_VALUE;
    if (fk_mem_kind((uintptr_t)p) != FK_MEM_PAGEABLE)
        return CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
    fk_mem_add((uintptr_t)p, n, FK_MEM_PINNED, 0);
    return CUDA_SUCCESS;
}

FK_API CUresult cuMemHostUnregister(void *p)
{
    CHECK_CTX();
    int kind;
    int r = fk_mem_remove((uintptr_t)p, &kind);
    if (r != 1) {
        if (r == 2)
            fk_mem_add((uintptr_t)p, 1, kind, 1);
        return CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
    }
    return CUDA_SUCCESS;
}

FK_API CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr *d, void *p, unsigned int flags)
{
    (void)flags;
    if (!d || fk_mem_kind((uintptr_t)p) != FK_MEM_PINNED)
        return CUDA_ERROR_INVALID_VALUE;
    *d = (CUdeviceptr)p;
    return CUDA_SUCCESS;
}

FK_API CUresult cuMemGetInfo_v2(size_t *free_b, size_t *total)
{
    CHECK_CTX();
    if (free_b)
        *free_b = 79ull << 30;
    if (total)
        *total = 80ull << 30;
    return CUDA_SUCCESS;
}

FK_API CUresult cuPointerGetAttribute(void *data, CUpointer_attribute a, CUdeviceptr p)
{
    if (!data)
        return CUDA_ERROR_INVALID_VALUE;
    int kind = fk_mem_kind((uintptr_t)p);
    if (a == CU_POINTER_ATTRIBUTE_MEMORY_TYPE) {
        if (kind == FK_MEM_PAGEABLE)
            return CUDA_ERROR_INVALID_VALUE;
        *(unsigned int *)data = kind == FK_MEM_PINNED ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE;
        return CUDA_SUCCESS;
    }
    if (a == CU_POINTER_ATTRIBUTE_IS_MANAGED) {
        *(unsigned int *)data = kind == FK_MEM_MANAGED;
        return CUDA_SUCCESS;
    }
    return CUDA_ERROR_NOT_SUPPORTED;
}

/* ---- copies and memsets ---- */

static int fk_side_kind(uintptr_t p)
{
    return fk_mem_kind(p);
}

static int fk_copy_kind(int src, int dst)
{
    int sd = src == FK_MEM_DEVICE || src == FK_MEM_MANAGED, dd = dst == FK_MEM_DEVICE || dst == FK_MEM_MANAGED;
    if (sd && dd)
        return 8;
    if (dd)
        return 1;
    if (sd)
        return 2;
    return 11;
}

static uint64_t fk_copy_ns(uint64_t bytes, double bw)
{
    double t = (double)bytes / bw;
    uint64_t ns = (uint64_t)t;
    if ((double)ns < t)
        ns++;
    return ns + fk_cfg.copy_latency_ns;
}

/* One copy of `bytes` from src to dst on stream `hs`; `sync`: the API is
 * synchronous. Blocks where the real driver does. */
static CUresult fk_copy(const char *api, void *dst, const void *src, size_t bytes, CUstream hs, int pt, int sync)
{
    CHECK_CTX();
    if (!fk_stream_valid(hs))
        return CUDA_ERROR_INVALID_HANDLE;
    if ((!dst || !src) && bytes)
        return CUDA_ERROR_INVALID_VALUE;
    uint32_t corr = fk_api_enter(api);
    int sk = fk_side_kind((uintptr_t)src), dk = fk_side_kind((uintptr_t)dst);
    int ck = fk_copy_kind(sk, dk);
    int host = ck == 1 ? sk : ck == 2 ? dk : ck == 11 ? sk : 0;
    double bw = ck == 8 ? fk_cfg.dtod_bw : host == FK_MEM_PINNED ? fk_cfg.pinned_bw : fk_cfg.pageable_bw;
    struct CUstream_st *s = fk_stream(hs, pt);
    uint64_t start, end = fk_submit(s, fk_copy_ns(bytes, bw), &start);
    if (bytes)
        memmove(dst, src, bytes);
    struct fakecuda_activity a = {.kind = FAKECUDA_ACT_MEMCPY, .correlation_id = corr, .context_id = 1,
                                  .stream_id = s->id, .start_ns = start, .end_ns = end, .bytes = bytes,
                                  .copy_kind = ck, .src_kind = sk, .dst_kind = dk};
    fk_activity_emit(&a);
    /* Synchronous copies, and "async" ones through pageable memory (staged
     * by the host), return when the copy is done. */
    if (sync || host == FK_MEM_PAGEABLE)
        fk_wait_until(end);
    return CUDA_SUCCESS;
}

#define FK_COPY_PAIR(name, params, dst, src, n, stream, sync)                 \
    FK_API CUresult name params { return fk_copy(#name, dst, src, n, stream, 0, sync); } \
    FK_API CUresult name##_PT params { return fk_copy(#name, dst, src, n, stream, 1, sync); }

#define cuMemcpyHtoD_v2_PT cuMemcpyHtoD_v2_ptds
#define cuMemcpyDtoH_v2_PT cuMemcpyDtoH_v2_ptds
#define cuMemcpyDtoD_v2_PT cuMemcpyDtoD_v2_ptds
#define cuMemcpy_PT cuMemcpy_ptds
#define cuMemcpyHtoDAsync_v2_PT cuMemcpyHtoDAsync_v2_ptsz
#define cuMemcpyDtoHAsync_v2_PT cuMemcpyDtoHAsync_v2_ptsz
#define cuMemcpyDtoDAsync_v2_PT cuMemcpyDtoDAsync_v2_ptsz
#define cuMemcpyAsync_PT cuMemcpyAsync_ptsz

FK_COPY_PAIR(cuMemcpyHtoD_v2, (CUdeviceptr d, const void *h, size_t n), (void *)d, h, n, NULL, 1)
FK_COPY_PAIR(cuMemcpyDtoH_v2, (void *h, CUdeviceptr d, size_t n), h, (const void *)d, n, NULL, 1)
FK_COPY_PAIR(cuMemcpyDtoD_v2, (CUdeviceptr d, CUdeviceptr s, size_t n), (void *)d, (const void *)s, n, NULL, 1)
FK_COPY_PAIR(cuMemcpy, (CUdeviceptr d, CUdeviceptr s, size_t n), (void *)d, (const void *)s, n, NULL, 1)
FK_COPY_PAIR(cuMemcpyHtoDAsync_v2, (CUdeviceptr d, const void *h, size_t n, CUstream st), (void *)d, h, n, st, 0)
FK_COPY_PAIR(cuMemcpyDtoHAsync_v2, (void *h, CUdeviceptr d, size_t n, CUstream st), h, (const void *)d, n, st, 0)
FK_COPY_PAIR(cuMemcpyDtoDAsync_v2, (CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st), (void *)d,
             (const void *)s, n, st, 0)
FK_COPY_PAIR(cuMemcpyAsync, (CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st), (void *)d, (const void *)s, n,
             st, 0)

FK_API CUresult cuMemcpyPeer(CUdeviceptr d, CUcontext dc, CUdeviceptr s, CUcontext sc, size_t n)
{
    (void)dc;
    (void)sc;
    return fk_copy("cuMemcpyPeer", (void *)d, (const void *)s, n, NULL, 0, 1);
}

FK_API CUresult cuMemcpyPeerAsync(CUdeviceptr d, CUcontext dc, CUdeviceptr s, CUcontext sc, size_t n, CUstream st)
{
    (void)dc;
    (void)sc;
    return fk_copy("cuMemcpyPeerAsync", (void *)d, (const void *)s, n, st, 0, 0);
}

/* 2D/3D: rows copied for real, timed as one transfer. */
static CUresult fk_copy_3d(const char *api, const CUDA_MEMCPY3D *p, CUstream st, int pt, int sync)
{
    CHECK_CTX();
    if (!p || !fk_stream_valid(st))
        return CUDA_ERROR_INVALID_VALUE;
    const char *src = p->srcMemoryType == CU_MEMORYTYPE_HOST ? p->srcHost : (const char *)p->srcDevice;
    char *dst = p->dstMemoryType == CU_MEMORYTYPE_HOST ? p->dstHost : (char *)p->dstDevice;
    if (!src || !dst)
        return CUDA_ERROR_INVALID_VALUE;
    size_t depth = p->Depth ? p->Depth : 1, total = p->WidthInBytes * p->Height * depth;
    uint32_t corr = fk_api_enter(api);
    int sk = fk_side_kind((uintptr_t)src), dk = fk_side_kind((uintptr_t)dst), ck = fk_copy_kind(sk, dk);
    int host = ck == 1 ? sk : ck == 2 ? dk : 0;
    double bw = ck == 8 ? fk_cfg.dtod_bw : host == FK_MEM_PINNED ? fk_cfg.pinned_bw : fk_cfg.pageable_bw;
    for (size_t z = 0; z < depth; z++)
        for (size_t y = 0; y < p->Height; y++)
            memmove(dst + (z * (p->dstHeight ? p->dstHeight : p->Height) + y) * p->dstPitch + p->dstXInBytes,
                    src + (z * (p->srcHeight ? p->srcHeight : p->Height) + y) * p->srcPitch + p->srcXInBytes,
                    p->WidthInBytes);
    struct CUstream_st *s = fk_stream(st, pt);
    uint64_t start, end = fk_submit(s, fk_copy_ns(total, bw), &start);
    struct fakecuda_activity a = {.kind = FAKECUDA_ACT_MEMCPY, .correlation_id = corr, .context_id = 1,
                                  .stream_id = s->id, .start_ns = start, .end_ns = end, .bytes = total,
                                  .copy_kind = ck, .src_kind = sk, .dst_kind = dk};
    fk_activity_emit(&a);
    if (sync || host == FK_MEM_PAGEABLE)
        fk_wait_until(end);
    return CUDA_SUCCESS;
}

static CUresult fk_copy_2d(const char *api, const CUDA_MEMCPY2D *p, CUstream st, int pt, int sync)
{
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    CUDA_MEMCPY3D c;
    memset(&c, 0, sizeof(c));
    c.srcXInBytes = p->srcXInBytes;
    c.srcMemoryType = p->srcMemoryType;
    c.srcHost = p->srcHost;
    c.srcDevice = p->srcDevice;
    c.srcPitch = p->srcPitch;
    c.dstXInBytes = p->dstXInBytes;
    c.dstMemoryType = p->dstMemoryType;
    c.dstHost = p->dstHost;
    c.dstDevice = p->dstDevice;
    c.dstPitch = p->dstPitch;
    c.WidthInBytes = p->WidthInBytes;
    c.Height = p->Height;
    c.Depth = 1;
    return fk_copy_3d(api, &c, st, pt, sync);
}

FK_API CUresult cuMemcpy2D_v2(const CUDA_MEMCPY2D *p) { return fk_copy_2d("cuMemcpy2D_v2", p, NULL, 0, 1); }
FK_API CUresult cuMemcpy2D_v2_ptds(const CUDA_MEMCPY2D *p) { return fk_copy_2d("cuMemcpy2D_v2", p, NULL, 1, 1); }
FK_API CUresult cuMemcpy2DUnaligned_v2(const CUDA_MEMCPY2D *p) { return fk_copy_2d("cuMemcpy2DUnaligned_v2", p, NULL, 0, 1); }
FK_API CUresult cuMemcpy2DUnaligned_v2_ptds(const CUDA_MEMCPY2D *p) { return fk_copy_2d("cuMemcpy2DUnaligned_v2", p, NULL, 1, 1); }
FK_API CUresult cuMemcpy2DAsync_v2(const CUDA_MEMCPY2D *p, CUstream s) { return fk_copy_2d("cuMemcpy2DAsync_v2", p, s, 0, 0); }
FK_API CUresult cuMemcpy2DAsync_v2_ptsz(const CUDA_MEMCPY2D *p, CUstream s) { return fk_copy_2d("cuMemcpy2DAsync_v2", p, s, 1, 0); }
FK_API CUresult cuMemcpy3D_v2(const CUDA_MEMCPY3D *p) { return fk_copy_3d("cuMemcpy3D_v2", p, NULL, 0, 1); }
FK_API CUresult cuMemcpy3D_v2_ptds(const CUDA_MEMCPY3D *p) { return fk_copy_3d("cuMemcpy3D_v2", p, NULL, 1, 1); }
FK_API CUresult cuMemcpy3DAsync_v2(const CUDA_MEMCPY3D *p, CUstream s) { return fk_copy_3d("cuMemcpy3DAsync_v2", p, s, 0, 0); }
FK_API CUresult cuMemcpy3DAsync_v2_ptsz(const CUDA_MEMCPY3D *p, CUstream s) { return fk_copy_3d("cuMemcpy3DAsync_v2", p, s, 1, 0); }

static CUresult fk_memset(const char *api, CUdeviceptr d, unsigned v, size_t esz, size_t n, size_t pitch,
                          size_t h, CUstream hs, int pt)
{
    CHECK_CTX();
    if (!fk_stream_valid(hs))
        return CUDA_ERROR_INVALID_HANDLE;
    if (!d)
        return CUDA_ERROR_INVALID_VALUE;
    uint32_t corr = fk_api_enter(api);
    size_t rows = h ? h : 1, stride = h ? pitch : n * esz;
    for (size_t y = 0; y < rows; y++) {
        char *row = (char *)d + y * stride;
        for (size_t i = 0; i < n; i++) {
            if (esz == 1)
                row[i] = (char)v;
            else if (esz == 2)
                memcpy(row + 2 * i, &(uint16_t){(uint16_t)v}, 2);
            else
                memcpy(row + 4 * i, &(uint32_t){v}, 4);
        }
    }
    uint64_t bytes = (uint64_t)n * esz * rows;
    struct CUstream_st *s = fk_stream(hs, pt);
    uint64_t start, end = fk_submit(s, fk_copy_ns(bytes, fk_cfg.dtod_bw), &start);
    struct fakecuda_activity a = {.kind = FAKECUDA_ACT_MEMSET, .correlation_id = corr, .context_id = 1,
                                  .stream_id = s->id, .start_ns = start, .end_ns = end, .bytes = bytes,
                                  .memset_value = (int)v, .dst_kind = fk_side_kind(d)};
    fk_activity_emit(&a);
    return CUDA_SUCCESS;
}

#define FK_MEMSET(name, T, esz, pt) \
    FK_API CUresult name(CUdeviceptr d, T v, size_t n) { return fk_memset(#name, d, v, esz, n, 0, 0, NULL, pt); }
#define FK_MEMSET_ASYNC(name, T, esz, pt) \
    FK_API CUresult name(CUdeviceptr d, T v, size_t n, CUstream s) { return fk_memset(#name, d, v, esz, n, 0, 0, s, pt); }
#define FK_MEMSET2D(name, T, esz, pt) \
    FK_API CUresult name(CUdeviceptr d, size_t p, T v, size_t w, size_t h) { return fk_memset(#name, d, v, esz, w, p, h, NULL, pt); }
#define FK_MEMSET2D_ASYNC(name, T, esz, pt) \
    FK_API CUresult name(CUdeviceptr d, size_t p, T v, size_t w, size_t h, CUstream s) { return fk_memset(#name, d, v, esz, w, p, h, s, pt); }
FK_MEMSET(cuMemsetD8_v2, unsigned char, 1, 0)
FK_MEMSET(cuMemsetD8_v2_ptds, unsigned char, 1, 1)
FK_MEMSET(cuMemsetD16_v2, unsigned short, 2, 0)
FK_MEMSET(cuMemsetD16_v2_ptds, unsigned short, 2, 1)
FK_MEMSET(cuMemsetD32_v2, unsigned int, 4, 0)
FK_MEMSET(cuMemsetD32_v2_ptds, unsigned int, 4, 1)
FK_MEMSET_ASYNC(cuMemsetD8Async, unsigned char, 1, 0)
FK_MEMSET_ASYNC(cuMemsetD8Async_ptsz, unsigned char, 1, 1)
FK_MEMSET_ASYNC(cuMemsetD16Async, unsigned short, 2, 0)
FK_MEMSET_ASYNC(cuMemsetD16Async_ptsz, unsigned short, 2, 1)
FK_MEMSET_ASYNC(cuMemsetD32Async, unsigned int, 4, 0)
FK_MEMSET_ASYNC(cuMemsetD32Async_ptsz, unsigned int, 4, 1)
FK_MEMSET2D(cuMemsetD2D8_v2, unsigned char, 1, 0)
FK_MEMSET2D(cuMemsetD2D8_v2_ptds, unsigned char, 1, 1)
FK_MEMSET2D(cuMemsetD2D32_v2, unsigned int, 4, 0)
FK_MEMSET2D(cuMemsetD2D32_v2_ptds, unsigned int, 4, 1)
FK_MEMSET2D_ASYNC(cuMemsetD2D8Async, unsigned char, 1, 0)
FK_MEMSET2D_ASYNC(cuMemsetD2D8Async_ptsz, unsigned char, 1, 1)
FK_MEMSET2D_ASYNC(cuMemsetD2D32Async, unsigned int, 4, 0)
FK_MEMSET2D_ASYNC(cuMemsetD2D32Async_ptsz, unsigned int, 4, 1)

/* ---- launches ---- */

static CUresult fk_launch(const char *api, CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                          unsigned by, unsigned bz, unsigned shm, CUstream hs, int pt)
{
    uint64_t t0 = fakecuda_now_ns();
    CHECK_CTX();
    if (!f || f->magic != FK_MAGIC_FUNC)
        return CUDA_ERROR_INVALID_HANDLE;
    if (!fk_stream_valid(hs))
        return CUDA_ERROR_INVALID_HANDLE;
    if (!gx || !gy || !gz || !bx || !by || !bz || (uint64_t)bx * by * bz > 1024)
        return CUDA_ERROR_INVALID_VALUE;
    uint32_t corr = fk_api_enter(api);
    struct CUstream_st *s = fk_stream(hs, pt);
    uint64_t start, end = fk_submit(s, fk_kernel_duration(f), &start);
    struct fakecuda_activity a = {.kind = FAKECUDA_ACT_KERNEL, .correlation_id = corr, .context_id = 1,
                                  .stream_id = s->id, .start_ns = start, .end_ns = end, .name = f->name,
                                  .grid = {gx, gy, gz}, .block = {bx, by, bz}, .shared_mem = shm};
    fk_activity_emit(&a);
    /* What a launch costs the host on a real driver, set from outside. */
    if (fk_cfg.launch_ns)
        while (fakecuda_now_ns() - t0 < fk_cfg.launch_ns)
            ;
    return CUDA_SUCCESS;
}

FK_API CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                               unsigned bz, unsigned shm, CUstream s, void **params, void **extra)
{
    (void)params;
    (void)extra;
    return fk_launch("cuLaunchKernel", f, gx, gy, gz, bx, by, bz, shm, s, 0);
}

FK_API CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                    unsigned bz, unsigned shm, CUstream s, void **params, void **extra)
{
    (void)params;
    (void)extra;
    return fk_launch("cuLaunchKernel", f, gx, gy, gz, bx, by, bz, shm, s, 1);
}

FK_API CUresult cuLaunchCooperativeKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                          unsigned by, unsigned bz, unsigned shm, CUstream s, void **params)
{
    (void)params;
    return fk_launch("cuLaunchCooperativeKernel", f, gx, gy, gz, bx, by, bz, shm, s, 0);
}

FK_API CUresult cuLaunchCooperativeKernel_ptsz(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                               unsigned by, unsigned bz, unsigned shm, CUstream s, void **params)
{
    (void)params;
    return fk_launch("cuLaunchCooperativeKernel", f, gx, gy, gz, bx, by, bz, shm, s, 1);
}

static CUresult fk_launch_ex(const CUlaunchConfig *c, CUfunction f, int pt)
{
    if (!c)
        return CUDA_ERROR_INVALID_VALUE;
    return fk_launch("cuLaunchKernelEx", f, c->gridDimX, c->gridDimY, c->gridDimZ, c->blockDimX, c->blockDimY,
                     c->blockDimZ, c->sharedMemBytes, c->hStream, pt);
}

FK_API CUresult cuLaunchKernelEx(const CUlaunchConfig *c, CUfunction f, void **params, void **extra)
{
    (void)params;
    (void)extra;
    return fk_launch_ex(c, f, 0);
}

FK_API CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *c, CUfunction f, void **params, void **extra)
{
    (void)params;
    (void)extra;
    return fk_launch_ex(c, f, 1);
}

/* ---- streams, events, synchronization ---- */

static void fk_emit_sync(uint32_t corr, int type, uint32_t stream_id, uint64_t t0)
{
    struct fakecuda_activity a = {.kind = FAKECUDA_ACT_SYNC, .correlation_id = corr, .context_id = 1,
                                  .stream_id = stream_id, .start_ns = t0, .end_ns = fakecuda_now_ns(),
                                  .sync_type = type};
    fk_activity_emit(&a);
}

FK_API CUresult cuCtxSynchronize(void)
{
    CHECK_CTX();
    uint64_t t0 = fakecuda_now_ns();
    uint32_t corr = fk_api_enter("cuCtxSynchronize");
    fk_wait_until(fk_all_done_time());
    fk_emit_sync(corr, 4, 0, t0);
    return CUDA_SUCCESS;
}

static CUresult fk_stream_sync(CUstream hs, int pt)
{
    CHECK_CTX();
    if (!fk_stream_valid(hs))
        return CUDA_ERROR_INVALID_HANDLE;
    uint64_t t0 = fakecuda_now_ns();
    uint32_t corr = fk_api_enter("cuStreamSynchronize");
    struct CUstream_st *s = fk_stream(hs, pt);
    fk_wait_until(fk_stream_done_time(s));
    fk_emit_sync(corr, 3, s->id, t0);
    return CUDA_SUCCESS;
}

FK_API CUresult cuStreamSynchronize(CUstream s) { return fk_stream_sync(s, 0); }
FK_API CUresult cuStreamSynchronize_ptsz(CUstream s) { return fk_stream_sync(s, 1); }

static CUresult fk_stream_query(CUstream hs, int pt)
{
    CHECK_CTX();
    if (!fk_stream_valid(hs))
        return CUDA_ERROR_INVALID_HANDLE;
    return fakecuda_now_ns() >= fk_stream_done_time(fk_stream(hs, pt)) ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

FK_API CUresult cuStreamQuery(CUstream s) { return fk_stream_query(s, 0); }
FK_API CUresult cuStreamQuery_ptsz(CUstream s) { return fk_stream_query(s, 1); }

FK_API CUresult cuStreamCreate(CUstream *s, unsigned int flags)
{
    CHECK_CTX();
    if (!s || (flags & ~(unsigned)CU_STREAM_NON_BLOCKING))
        return CUDA_ERROR_INVALID_VALUE;
    *s = fk_stream_create(flags);
    return *s ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

FK_API CUresult cuStreamCreateWithPriority(CUstream *s, unsigned int flags, int prio)
{
    (void)prio;
    return cuStreamCreate(s, flags);
}

FK_API CUresult cuStreamDestroy_v2(CUstream s)
{
    CHECK_CTX();
    if ((uintptr_t)s <= 2 || s->magic != FK_MAGIC_STREAM)
        return CUDA_ERROR_INVALID_HANDLE;
    fk_stream_destroy(s);
    return CUDA_SUCCESS;
}

FK_API CUresult cuStreamGetFlags(CUstream s, unsigned int *flags)
{
    if (!flags || !fk_stream_valid(s))
        return CUDA_ERROR_INVALID_VALUE;
    *flags = fk_stream(s, 0)->flags;
    return CUDA_SUCCESS;
}

FK_API CUresult cuStreamGetId(CUstream s, unsigned long long *id)
{
    if (!id || !fk_stream_valid(s))
        return CUDA_ERROR_INVALID_VALUE;
    *id = fk_stream(s, 0)->id;
    return CUDA_SUCCESS;
}

static CUresult fk_wait_event(CUstream hs, CUevent e, int pt)
{
    CHECK_CTX();
    if (!fk_stream_valid(hs) || !e || e->magic != FK_MAGIC_EVENT)
        return CUDA_ERROR_INVALID_HANDLE;
    uint64_t t0 = fakecuda_now_ns();
    uint32_t corr = fk_api_enter("cuStreamWaitEvent");
    struct CUstream_st *s = fk_stream(hs, pt);
    fk_stream_wait_event(s, e);
    fk_emit_sync(corr, 2, s->id, t0);
    return CUDA_SUCCESS;
}

FK_API CUresult cuStreamWaitEvent(CUstream s, CUevent e, unsigned int f) { (void)f; return fk_wait_event(s, e, 0); }
FK_API CUresult cuStreamWaitEvent_ptsz(CUstream s, CUevent e, unsigned int f) { (void)f; return fk_wait_event(s, e, 1); }

FK_API CUresult cuEventCreate(CUevent *e, unsigned int flags)
{
    (void)flags;
    CHECK_CTX();
    if (!e)
        return CUDA_ERROR_INVALID_VALUE;
    struct CUevent_st *ev = calloc(1, sizeof(*ev));
    if (!ev)
        return CUDA_ERROR_OUT_OF_MEMORY;
    ev->magic = FK_MAGIC_EVENT;
    *e = ev;
    return CUDA_SUCCESS;
}

FK_API CUresult cuEventDestroy_v2(CUevent e)
{
    if (!e || e->magic != FK_MAGIC_EVENT)
        return CUDA_ERROR_INVALID_HANDLE;
    e->magic = 0;
    return CUDA_SUCCESS;
}

static CUresult fk_event_rec(CUevent e, CUstream s, int pt)
{
    CHECK_CTX();
    if (!e || e->magic != FK_MAGIC_EVENT || !fk_stream_valid(s))
        return CUDA_ERROR_INVALID_HANDLE;
    fk_event_record(e, fk_stream(s, pt));
    return CUDA_SUCCESS;
}

FK_API CUresult cuEventRecord(CUevent e, CUstream s) { return fk_event_rec(e, s, 0); }
FK_API CUresult cuEventRecord_ptsz(CUevent e, CUstream s) { return fk_event_rec(e, s, 1); }
FK_API CUresult cuEventRecordWithFlags(CUevent e, CUstream s, unsigned f) { (void)f; return fk_event_rec(e, s, 0); }
FK_API CUresult cuEventRecordWithFlags_ptsz(CUevent e, CUstream s, unsigned f) { (void)f; return fk_event_rec(e, s, 1); }

FK_API CUresult cuEventSynchronize(CUevent e)
{
    CHECK_CTX();
    if (!e || e->magic != FK_MAGIC_EVENT)
        return CUDA_ERROR_INVALID_HANDLE;
    uint64_t t0 = fakecuda_now_ns();
    uint32_t corr = fk_api_enter("cuEventSynchronize");
    if (e->recorded)
        fk_wait_until(e->time);
    fk_emit_sync(corr, 1, 0, t0);
    return CUDA_SUCCESS;
}

FK_API CUresult cuEventQuery(CUevent e)
{
    if (!e || e->magic != FK_MAGIC_EVENT)
        return CUDA_ERROR_INVALID_HANDLE;
    return !e->recorded || fakecuda_now_ns() >= e->time ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

FK_API CUresult cuEventElapsedTime_v2(float *ms, CUevent a, CUevent b)
{
    if (!ms || !a || !b || a->magic != FK_MAGIC_EVENT || b->magic != FK_MAGIC_EVENT)
        return CUDA_ERROR_INVALID_HANDLE;
    if (!a->recorded || !b->recorded)
        return CUDA_ERROR_INVALID_HANDLE;
    uint64_t now = fakecuda_now_ns();
    if (now < a->time || now < b->time)
        return CUDA_ERROR_NOT_READY;
    *ms = (float)((double)((int64_t)b->time - (int64_t)a->time) / 1e6);
    return CUDA_SUCCESS;
}

struct fk_host_fn {
    CUhostFn fn;
    void *data;
    uint64_t at;
};

static void *fk_host_fn_thread(void *arg)
{
    struct fk_host_fn *h = arg;
    fk_wait_until(h->at);
    h->fn(h->data);
    free(h);
    return NULL;
}

static CUresult fk_host_func(CUstream hs, CUhostFn fn, void *data, int pt)
{
    CHECK_CTX();
    if (!fn || !fk_stream_valid(hs))
        return CUDA_ERROR_INVALID_VALUE;
    struct fk_host_fn *h = malloc(sizeof(*h));
    if (!h)
        return CUDA_ERROR_OUT_OF_MEMORY;
    uint64_t start;
    h->fn = fn;
    h->data = data;
    h->at = fk_submit(fk_stream(hs, pt), 0, &start);
    pthread_t t;
    if (pthread_create(&t, NULL, fk_host_fn_thread, h) != 0) {
        free(h);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    pthread_detach(t);
    return CUDA_SUCCESS;
}

FK_API CUresult cuLaunchHostFunc(CUstream s, CUhostFn fn, void *data) { return fk_host_func(s, fn, data, 0); }
FK_API CUresult cuLaunchHostFunc_ptsz(CUstream s, CUhostFn fn, void *data) { return fk_host_func(s, fn, data, 1); }

/* ---- errors, profiler ---- */

FK_API CUresult cuGetErrorName(CUresult e, const char **s)
{
    if (!s)
        return CUDA_ERROR_INVALID_VALUE;
    switch (e) {
    case CUDA_SUCCESS: *s = "CUDA_SUCCESS"; break;
    case CUDA_ERROR_INVALID_VALUE: *s = "CUDA_ERROR_INVALID_VALUE"; break;
    case CUDA_ERROR_OUT_OF_MEMORY: *s = "CUDA_ERROR_OUT_OF_MEMORY"; break;
    case CUDA_ERROR_NOT_INITIALIZED: *s = "CUDA_ERROR_NOT_INITIALIZED"; break;
    case CUDA_ERROR_INVALID_CONTEXT: *s = "CUDA_ERROR_INVALID_CONTEXT"; break;
    case CUDA_ERROR_INVALID_HANDLE: *s = "CUDA_ERROR_INVALID_HANDLE"; break;
    case CUDA_ERROR_NOT_FOUND: *s = "CUDA_ERROR_NOT_FOUND"; break;
    case CUDA_ERROR_NOT_READY: *s = "CUDA_ERROR_NOT_READY"; break;
    default: *s = "CUDA_ERROR_UNKNOWN"; return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}

FK_API CUresult cuGetErrorString(CUresult e, const char **s)
{
    return cuGetErrorName(e, s);
}

FK_API CUresult cuProfilerStart(void) { return CUDA_SUCCESS; }
FK_API CUresult cuProfilerStop(void) { return CUDA_SUCCESS; }

/* fk_api.c: the driver API entry points, as cuda.h names them in CUDA 13,
 * with their per-thread default stream variants: devices, contexts,
 * modules, launches, streams, events (memory and copies: fk_memory.c). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fk_driver.h"
#include "fk_errors.h"



/* ---- init, device, context ---- */

FK_API CUresult cuInit(unsigned int flags)
{
    if (flags)
        return CUDA_ERROR_INVALID_VALUE;
    fk_init_once();
    if (fk_is_forked_child())
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!fk_initialized)
        fk_effects_start();
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
    *bytes = FK_DEVICE_BYTES;
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
    case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID: *v = FAKECUDA_FIRST_BUS + d; break; /* as cuDeviceGetPCIBusId */
    /* an H100 SXM's limits, for occupancy calculators */
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR: *v = FK_SM_THREADS; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR: *v = FK_SM_BLOCKS; break;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR: *v = FK_SM_REGS; break;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK: *v = 65536; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR: *v = FK_SM_SHARED; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: *v = FK_SM_SHARED - FK_SHARED_RESERVED; break;
    case CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK: *v = FK_SHARED_RESERVED; break;
    case CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY: *v = 65536; break;
    case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: *v = 50 << 20; break;
    case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE: *v = 2619000; break;
    case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH: *v = 5120; break;
    case CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY: case CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED:
    case CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS: case CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH:
    case CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED: case CU_DEVICE_ATTRIBUTE_GPU_OVERLAP:
    case CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM: *v = 1; break;
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
    *c = &fk_ctx[d];
    /* The first retain creates the context: a real driver spends hundreds
     * of milliseconds in it, the first CUDA call of a process with it. */
    if (fk_cfg.ctx_create_ns && !__atomic_exchange_n(&fk_ctx[d].created, 1, __ATOMIC_ACQ_REL)) {
        struct timespec ts = {(time_t)(fk_cfg.ctx_create_ns / 1000000000u), (long)(fk_cfg.ctx_create_ns % 1000000000u)};
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
            ;
    }
    __atomic_add_fetch(&fk_ctx[d].retained, 1, __ATOMIC_RELAXED);
    return CUDA_SUCCESS;
}

FK_API CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d)
{
    if (d < 0 || d >= fk_cfg.devices)
        return CUDA_ERROR_INVALID_DEVICE;
    if (__atomic_load_n(&fk_ctx[d].retained, __ATOMIC_RELAXED) > 0)
        __atomic_sub_fetch(&fk_ctx[d].retained, 1, __ATOMIC_RELAXED);
    return CUDA_SUCCESS;
}

/* A bus of its own per device, as NVML names devices by (tests/fakecuda/nvml). */
FK_API CUresult cuDeviceGetPCIBusId(char *bus, int len, CUdevice d)
{
    if (!fk_initialized)
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!bus || len <= 0)
        return CUDA_ERROR_INVALID_VALUE;
    if (d < 0 || d >= fk_cfg.devices)
        return CUDA_ERROR_INVALID_DEVICE;
    snprintf(bus, (size_t)len, "0000:%02X:00.0", FAKECUDA_FIRST_BUS + d);
    return CUDA_SUCCESS;
}

/* Resetting the primary context clears a device-side error. */
FK_API CUresult cuDevicePrimaryCtxReset_v2(CUdevice d)
{
    if (!fk_initialized)
        return CUDA_ERROR_NOT_INITIALIZED;
    if (d < 0 || d >= fk_cfg.devices)
        return CUDA_ERROR_INVALID_DEVICE;
    fk_wait_until(fk_all_done_time(d));
    fk_effect_wait(fk_effect_last());
    fk_fault_clear(d);
    return CUDA_SUCCESS;
}

FK_API CUresult cuDevicePrimaryCtxGetState(CUdevice d, unsigned int *flags, int *active)
{
    if (!flags || !active)
        return CUDA_ERROR_INVALID_VALUE;
    if (d < 0 || d >= fk_cfg.devices)
        return CUDA_ERROR_INVALID_DEVICE;
    *flags = fk_ctx[d].flags;
    *active = __atomic_load_n(&fk_ctx[d].retained, __ATOMIC_RELAXED) > 0;
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

/* modules, libraries and the linker: fk_module.c */

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
    switch (a) {
    case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *v = 1024; break;
    case CU_FUNC_ATTRIBUTE_NUM_REGS: *v = FK_KERNEL_REGS; break;
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: *v = 48 << 10; break;
    case CU_FUNC_ATTRIBUTE_PTX_VERSION: case CU_FUNC_ATTRIBUTE_BINARY_VERSION: *v = 90; break;
    default: *v = 0; break;
    }
    return CUDA_SUCCESS;
}

FK_API CUresult cuFuncSetAttribute(CUfunction f, CUfunction_attribute a, int v)
{
    (void)a;
    (void)v;
    return f ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

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
    struct CUstream_st *s = fk_stream(hs, pt);
    struct fk_node node = {.kind = FAKECUDA_ACT_KERNEL, .f = f, .grid = {gx, gy, gz}, .block = {bx, by, bz},
                           .shm = shm};
    if (!fk_capture(s, &node))
        fk_run_node(s, &node, fk_api_enter(api), NULL);
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

FK_API CUresult fakecuda_unlisted_launch(CUfunction f, CUstream s)
{
    return fk_launch("fakecuda_unlisted_launch", f, 1, 1, 1, 1, 1, 1, 0, s, 0);
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

void fk_emit_sync(uint32_t corr, int type, uint32_t stream_id, uint64_t t0)
{
    int d = fk_current_device();
    struct fakecuda_activity a = {.kind = FAKECUDA_ACT_SYNC, .correlation_id = corr, .device = (uint32_t)d,
                                  .context_id = (uint32_t)d + 1,
                                  .stream_id = stream_id, .start_ns = t0, .end_ns = fakecuda_now_ns(),
                                  .sync_type = type};
    fk_activity_emit(&a);
}

static CUresult fk_ctx_sync(const char *api)
{
    CHECK_CTX();
    uint64_t t0 = fakecuda_now_ns();
    uint32_t corr = fk_api_enter(api);
    CUresult r = fk_wait_gpu(fk_current_device(), fk_all_done_time(fk_current_device()));
    fk_effect_wait(fk_effect_last());
    if (r == CUDA_SUCCESS)
        fk_wait_host_functions(NULL);
    fk_emit_sync(corr, 4, 0, t0);
    return r;
}

FK_API CUresult cuCtxSynchronize(void)
{
    return fk_ctx_sync("cuCtxSynchronize");
}

/* CUDA 13's: cuGetProcAddress("cuCtxSynchronize") at version 13000 or
 * later gives this one, as NVIDIA's static runtime asks for it. A context
 * other than the current (the simulated GPU has one a device) waits the
 * same; NULL is the current. */
FK_API CUresult cuCtxSynchronize_v2(CUcontext ctx)
{
    (void)ctx;
    return fk_ctx_sync("cuCtxSynchronize_v2");
}

static CUresult fk_stream_sync(CUstream hs, int pt)
{
    CHECK_CTX();
    if (!fk_stream_valid(hs))
        return CUDA_ERROR_INVALID_HANDLE;
    uint64_t t0 = fakecuda_now_ns();
    uint32_t corr = fk_api_enter("cuStreamSynchronize");
    struct CUstream_st *s = fk_stream(hs, pt);
    CUresult r = fk_wait_gpu(s->device, fk_stream_done_time(s));
    fk_effect_wait(fk_stream_effect(s));
    if (r == CUDA_SUCCESS)
        fk_wait_host_functions(s->legacy ? NULL : s);
    fk_emit_sync(corr, 3, s->id, t0);
    return r;
}

FK_API CUresult cuStreamSynchronize(CUstream s) { return fk_stream_sync(s, 0); }
FK_API CUresult cuStreamSynchronize_ptsz(CUstream s) { return fk_stream_sync(s, 1); }

static CUresult fk_stream_query(CUstream hs, int pt)
{
    CHECK_CTX();
    if (!fk_stream_valid(hs))
        return CUDA_ERROR_INVALID_HANDLE;
    struct CUstream_st *s = fk_stream(hs, pt);
    return fakecuda_now_ns() >= fk_stream_done_time(s) && fk_effect_done(fk_stream_effect(s)) &&
                   !atomic_load(s->legacy ? &fk_pending_host : &s->pending_host)
               ? CUDA_SUCCESS
               : CUDA_ERROR_NOT_READY;
}

FK_API CUresult cuStreamQuery(CUstream s) { return fk_stream_query(s, 0); }
FK_API CUresult cuStreamQuery_ptsz(CUstream s) { return fk_stream_query(s, 1); }

FK_API CUresult cuStreamCreate(CUstream *s, unsigned int flags)
{
    CHECK_CTX();
    if (!s || (flags & ~(unsigned)CU_STREAM_NON_BLOCKING))
        return CUDA_ERROR_INVALID_VALUE;
    *s = fk_stream_create(flags, 0);
    return *s ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

/* Priorities are kept and reported; streams overlap without limit here, so
 * they change no timing. */
FK_API CUresult cuStreamCreateWithPriority(CUstream *s, unsigned int flags, int prio)
{
    CHECK_CTX();
    if (!s || (flags & ~(unsigned)CU_STREAM_NON_BLOCKING))
        return CUDA_ERROR_INVALID_VALUE;
    *s = fk_stream_create(flags, fk_clamp_priority(prio));
    return *s ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
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
    struct CUstream_st *s = fk_stream(hs, pt);
    if (fk_capture_wait_event(s, e))
        return CUDA_SUCCESS; /* a capture's edge: nothing waits */
    uint64_t t0 = fakecuda_now_ns();
    uint32_t corr = fk_api_enter("cuStreamWaitEvent");
    fk_stream_wait_event(s, e);
    fk_emit_sync(corr, 2, s->id, t0);
    return CUDA_SUCCESS;
}

FK_API CUresult cuStreamWaitEvent(CUstream s, CUevent e, unsigned int f) { (void)f; return fk_wait_event(s, e, 0); }
FK_API CUresult cuStreamWaitEvent_ptsz(CUstream s, CUevent e, unsigned int f) { (void)f; return fk_wait_event(s, e, 1); }

struct fk_host_fn {
    CUhostFn fn;
    CUstreamCallback cb; /* cuStreamAddCallback's kind: (stream, status, data) */
    CUstream handle;     /* the stream as the program named it */
    void *data;
    uint64_t at;
    uint64_t effect; /* the bytes of work before it, made before it runs */
    struct CUstream_st *stream;
};

static void *fk_host_fn_thread(void *arg)
{
    struct fk_host_fn *h = arg;
    fk_wait_until(h->at);
    fk_effect_wait(h->effect);
    if (h->cb)
        h->cb(h->handle, CUDA_SUCCESS, h->data);
    else
        h->fn(h->data);
    atomic_fetch_sub(&h->stream->pending_host, 1);
    atomic_fetch_sub(&fk_pending_host, 1);
    free(h);
    return NULL;
}

CUresult fk_host_call(struct CUstream_st *s, uint64_t at, CUhostFn fn, CUstreamCallback cb, CUstream handle,
                      void *data)
{
    struct fk_host_fn *h = malloc(sizeof(*h));
    if (!h)
        return CUDA_ERROR_OUT_OF_MEMORY;
    h->fn = fn;
    h->cb = cb;
    h->handle = handle;
    h->data = data;
    h->stream = s;
    h->at = at;
    h->effect = fk_stream_effect(s);
    atomic_fetch_add(&s->pending_host, 1);
    atomic_fetch_add(&fk_pending_host, 1);
    pthread_t t;
    if (pthread_create(&t, NULL, fk_host_fn_thread, h) != 0) {
        atomic_fetch_sub(&s->pending_host, 1);
        atomic_fetch_sub(&fk_pending_host, 1);
        free(h);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    pthread_detach(t);
    return CUDA_SUCCESS;
}

static CUresult fk_host_func(CUstream hs, CUhostFn fn, CUstreamCallback cb, void *data, int pt)
{
    CHECK_CTX();
    if ((!fn && !cb) || !fk_stream_valid(hs))
        return CUDA_ERROR_INVALID_VALUE;
    struct CUstream_st *s = fk_stream(hs, pt);
    /* a host function on a capturing stream becomes a host node */
    struct fk_node node = {.kind = FK_NODE_HOST, .fn = fn, .data = data};
    if (fn && fk_capture(s, &node))
        return CUDA_SUCCESS;
    uint64_t start, at = fk_submit(s, 0, &start);
    return fk_host_call(s, at, fn, cb, hs, data);
}

FK_API CUresult cuLaunchHostFunc(CUstream s, CUhostFn fn, void *data) { return fk_host_func(s, fn, NULL, data, 0); }
FK_API CUresult cuLaunchHostFunc_ptsz(CUstream s, CUhostFn fn, void *data) { return fk_host_func(s, fn, NULL, data, 1); }

/* A stream callback runs as a host function does, told the stream's status. */
FK_API CUresult cuStreamAddCallback(CUstream s, CUstreamCallback cb, void *data, unsigned int flags)
{
    return flags ? CUDA_ERROR_INVALID_VALUE : fk_host_func(s, NULL, cb, data, 0);
}

FK_API CUresult cuStreamAddCallback_ptsz(CUstream s, CUstreamCallback cb, void *data, unsigned int flags)
{
    return flags ? CUDA_ERROR_INVALID_VALUE : fk_host_func(s, NULL, cb, data, 1);
}

/* ---- errors, profiler ---- */

/* Every code cuda.h declares, by the table generated from it: the name,
 * and for the string the first sentence cuda.h documents the code with. An
 * unknown code: CUDA_ERROR_INVALID_VALUE and NULL, as the driver does. */
static const struct fk_error *fk_error_of(CUresult e)
{
    size_t lo = 0, hi = sizeof(fk_errors) / sizeof(fk_errors[0]);
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (fk_errors[mid].code == (int)e)
            return &fk_errors[mid];
        if (fk_errors[mid].code < (int)e)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

FK_API CUresult cuGetErrorName(CUresult e, const char **s)
{
    if (!s)
        return CUDA_ERROR_INVALID_VALUE;
    const struct fk_error *x = fk_error_of(e);
    *s = x ? x->name : NULL;
    return x ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

FK_API CUresult cuGetErrorString(CUresult e, const char **s)
{
    if (!s)
        return CUDA_ERROR_INVALID_VALUE;
    const struct fk_error *x = fk_error_of(e);
    *s = x ? x->text : NULL;
    return x ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

FK_API CUresult cuProfilerStart(void) { return CUDA_SUCCESS; }
FK_API CUresult cuProfilerStop(void) { return CUDA_SUCCESS; }

/* gt_readers.c: reads the arguments of each kind of call into its event. */
#include <string.h>

#include "hot/gt_capture.h"
#include "hot/gt_call.h"
#include "cupti/gt_cupti.h"
#include "hot/gt_hooks.h"
#include "hot/gt_names.h"
#include "hot/gt_ranges.h"
#include "hot/gt_readers.h"

/* The device this thread last selected; the runtime's default is 0. */
static GT_TLS int gt_tls_device;

static void gt_set_stream(struct gt_event *ev, const void *stream, int pt)
{
    uint64_t s = (uint64_t)(uintptr_t)stream;
    /* In a per-thread-default-stream entry point NULL is that thread's stream. */
    if (pt && s == 0)
        s = GT_STREAM_PER_THREAD;
    ev->stream = s;
    ev->has_stream = 1;
    ev->captured = (uint8_t)gt_capturing(s);
}

static void gt_set_launch(struct gt_event *ev, uint32_t name_id, unsigned gx, unsigned gy, unsigned gz,
                          unsigned bx, unsigned by, unsigned bz, unsigned shm)
{
    ev->u.launch.name_id = name_id;
    ev->u.launch.device = (uint32_t)gt_tls_device;
    ev->u.launch.grid[0] = gx;
    ev->u.launch.grid[1] = gy;
    ev->u.launch.grid[2] = gz;
    ev->u.launch.block[0] = bx;
    ev->u.launch.block[1] = by;
    ev->u.launch.block[2] = bz;
    ev->u.launch.shared_mem = shm;
}

void gt_rd_launch_rt(struct gt_event *ev, const void *func, dim3 grid, dim3 block, size_t shm,
                     cudaStream_t stream, int pt)
{
    gt_set_stream(ev, stream, pt);
    gt_set_launch(ev, gt_names_lookup(func, GT_NAME_HOSTFUN), grid.x, grid.y, grid.z, block.x, block.y, block.z,
                  (unsigned)shm);
}

void gt_rd_launch_rt_ex(struct gt_event *ev, int res, const cudaLaunchConfig_t *config, const void *func, int pt)
{
    (void)res;  /* a refused launch keeps its configuration, as cudaLaunchKernel's does */
    uint32_t name = gt_names_lookup(func, GT_NAME_HOSTFUN);
    if (!config) {
        gt_set_stream(ev, NULL, pt);
        gt_set_launch(ev, name, 0, 0, 0, 0, 0, 0, 0);
        return;
    }
    gt_set_stream(ev, config->stream, pt);
    gt_set_launch(ev, name, config->gridDim.x, config->gridDim.y, config->gridDim.z, config->blockDim.x,
                  config->blockDim.y, config->blockDim.z, (unsigned)config->dynamicSmemBytes);
}

void gt_rd_launch_rt_kernel(struct gt_event *ev, int res, cudaKernel_t kernel, dim3 grid, dim3 block, size_t shm,
                            cudaStream_t stream, int pt)
{
    gt_set_stream(ev, stream, pt);
    uint32_t name = (res == cudaSuccess || kernel) ? gt_names_lookup(kernel, GT_NAME_RT_KERNEL) : 0;
    gt_set_launch(ev, name, grid.x, grid.y, grid.z, block.x, block.y, block.z, (unsigned)shm);
}

void gt_rd_launch_drv(struct gt_event *ev, int res, CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                      unsigned bx, unsigned by, unsigned bz, unsigned shm, CUstream stream, int pt)
{
    gt_set_stream(ev, stream, pt);
    /* An invalid handle is only asked for its name when the launch took it;
     * a refused launch of a function already named keeps that name. */
    uint32_t name = res == CUDA_SUCCESS ? gt_names_lookup(f, GT_NAME_DRV_FUNC) : gt_names_known(f);
    gt_set_launch(ev, name, gx, gy, gz, bx, by, bz, shm);
}

void gt_rd_launch_drv_ex(struct gt_event *ev, int res, const CUlaunchConfig *config, CUfunction f, int pt)
{
    uint32_t name = res == CUDA_SUCCESS ? gt_names_lookup(f, GT_NAME_DRV_FUNC) : gt_names_known(f);
    if (!config) {
        gt_set_stream(ev, NULL, pt);
        gt_set_launch(ev, name, 0, 0, 0, 0, 0, 0, 0);
        return;
    }
    /* a refused launch keeps its configuration, as cuLaunchKernel's does */
    gt_set_stream(ev, config->hStream, pt);
    gt_set_launch(ev, name, config->gridDimX, config->gridDimY,
                  config->gridDimZ, config->blockDimX, config->blockDimY, config->blockDimZ,
                  config->sharedMemBytes);
}

void gt_rd_register_function(const char *host_fun, const char *device_name)
{
    if (host_fun && device_name)
        gt_names_register(host_fun, device_name);
}

void gt_rd_get_kernel(int res, cudaKernel_t *kernel, const void *host_fun)
{
    if (res == cudaSuccess && kernel && *kernel)
        gt_names_alias(*kernel, host_fun);
}

void gt_rd_get_function(int res, void **handle, const char *name)
{
    if (res == CUDA_SUCCESS && handle && *handle)
        gt_names_register_copy(*handle, name);
}

void gt_rd_kernel_function(int res, CUfunction *f, CUkernel k)
{
    if (res == CUDA_SUCCESS && f && *f)
        gt_names_alias(*f, k);
}

/* ---- copies ---- */

static enum gt_host_mem gt_host_mem_of(const void *p)
{
    switch (gt_ranges_find((uintptr_t)p)) {
    case GT_RANGE_PINNED: return GT_HM_PINNED;
    case GT_RANGE_MAPPED: return GT_HM_MAPPED;
    case GT_RANGE_MANAGED: return GT_HM_MANAGED;
    case GT_RANGE_DEVICE: return GT_HM_UNKNOWN;
    default: return GT_HM_PAGEABLE;
    }
}

static void gt_set_copy(struct gt_event *ev, enum gt_copy_kind kind, enum gt_host_mem hm, size_t bytes, int async)
{
    ev->u.copy.bytes = bytes;
    ev->u.copy.device = (uint32_t)gt_tls_device;
    ev->u.copy.kind = (uint8_t)kind;
    ev->u.copy.host_mem = (uint8_t)hm;
    ev->u.copy.async = (uint8_t)async;
}

/* Unified addressing: where each side lives decides the direction. */
static void gt_copy_by_address(struct gt_event *ev, const void *dst, const void *src, size_t bytes, int async)
{
    int d = gt_ranges_find((uintptr_t)dst), s = gt_ranges_find((uintptr_t)src);
    int d_dev = d == GT_RANGE_DEVICE, s_dev = s == GT_RANGE_DEVICE;
    if (s_dev && d_dev)
        gt_set_copy(ev, GT_COPY_DTOD, GT_HM_NONE, bytes, async);
    else if (d_dev)
        gt_set_copy(ev, GT_COPY_HTOD, gt_host_mem_of(src), bytes, async);
    else if (s_dev)
        gt_set_copy(ev, GT_COPY_DTOH, gt_host_mem_of(dst), bytes, async);
    else if (d == GT_RANGE_MANAGED && s == GT_RANGE_MANAGED)
        gt_set_copy(ev, GT_COPY_DTOD, GT_HM_MANAGED, bytes, async);
    else
        gt_set_copy(ev, GT_COPY_HTOH, gt_host_mem_of(src), bytes, async);
}

void gt_rd_copy_rt(struct gt_event *ev, void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind,
                   int async, cudaStream_t stream, int pt)
{
    gt_set_stream(ev, stream, pt);
    switch (kind) {
    case cudaMemcpyHostToDevice: gt_set_copy(ev, GT_COPY_HTOD, gt_host_mem_of(src), bytes, async); break;
    case cudaMemcpyDeviceToHost: gt_set_copy(ev, GT_COPY_DTOH, gt_host_mem_of(dst), bytes, async); break;
    case cudaMemcpyDeviceToDevice: gt_set_copy(ev, GT_COPY_DTOD, GT_HM_NONE, bytes, async); break;
    case cudaMemcpyHostToHost: gt_set_copy(ev, GT_COPY_HTOH, gt_host_mem_of(src), bytes, async); break;
    default: gt_copy_by_address(ev, dst, src, bytes, async); break;
    }
}

void gt_rd_copy(struct gt_event *ev, enum gt_copy_kind kind, const void *host, size_t bytes, int async,
                CUstream stream, int pt)
{
    gt_set_stream(ev, stream, pt);
    gt_set_copy(ev, kind, host ? gt_host_mem_of(host) : GT_HM_NONE, bytes, async);
}

void gt_rd_copy_unified(struct gt_event *ev, CUdeviceptr dst, CUdeviceptr src, size_t bytes, int async,
                        CUstream stream, int pt)
{
    gt_set_stream(ev, stream, pt);
    gt_copy_by_address(ev, (const void *)dst, (const void *)src, bytes, async);
}

static int gt_is_device_side(CUmemorytype t)
{
    return t == CU_MEMORYTYPE_DEVICE || t == CU_MEMORYTYPE_ARRAY;
}

/* A 2D or 3D copy described by memory types: the driver's word on which
 * side is the device; unified addresses are looked up. */
static void gt_copy_by_types(struct gt_event *ev, CUmemorytype st, const void *sh, CUdeviceptr sdev,
                             CUmemorytype dt, const void *dh, CUdeviceptr ddev, size_t bytes, int async)
{
    const void *src = st == CU_MEMORYTYPE_HOST ? sh : (const void *)sdev;
    const void *dst = dt == CU_MEMORYTYPE_HOST ? dh : (const void *)ddev;
    if (st == CU_MEMORYTYPE_UNIFIED || dt == CU_MEMORYTYPE_UNIFIED) {
        gt_copy_by_address(ev, dst, src, bytes, async);
        return;
    }
    int sd = gt_is_device_side(st), dd = gt_is_device_side(dt);
    if (sd && dd)
        gt_set_copy(ev, GT_COPY_DTOD, GT_HM_NONE, bytes, async);
    else if (dd)
        gt_set_copy(ev, GT_COPY_HTOD, gt_host_mem_of(src), bytes, async);
    else if (sd)
        gt_set_copy(ev, GT_COPY_DTOH, gt_host_mem_of(dst), bytes, async);
    else
        gt_set_copy(ev, GT_COPY_HTOH, gt_host_mem_of(src), bytes, async);
}

void gt_rd_copy_2d(struct gt_event *ev, int res, const CUDA_MEMCPY2D *p, int async, CUstream stream, int pt)
{
    gt_set_stream(ev, stream, pt);
    if (res != CUDA_SUCCESS || !p) {
        gt_set_copy(ev, GT_COPY_HTOD, GT_HM_UNKNOWN, 0, async);
        return;
    }
    gt_copy_by_types(ev, p->srcMemoryType, p->srcHost, p->srcDevice, p->dstMemoryType, p->dstHost, p->dstDevice,
                     gt_mul_sat(p->WidthInBytes, p->Height), async);
}

void gt_rd_copy_3d(struct gt_event *ev, int res, const CUDA_MEMCPY3D *p, int async, CUstream stream, int pt)
{
    gt_set_stream(ev, stream, pt);
    if (res != CUDA_SUCCESS || !p) {
        gt_set_copy(ev, GT_COPY_HTOD, GT_HM_UNKNOWN, 0, async);
        return;
    }
    gt_copy_by_types(ev, p->srcMemoryType, p->srcHost, p->srcDevice, p->dstMemoryType, p->dstHost, p->dstDevice,
                     gt_mul_sat(gt_mul_sat(p->WidthInBytes, p->Height), p->Depth ? p->Depth : 1), async);
}

void gt_rd_copy_rt_3d(struct gt_event *ev, int res, const struct cudaMemcpy3DParms *p, int async, cudaStream_t stream,
                      int pt)
{
    if (res != cudaSuccess || !p) {
        gt_set_stream(ev, stream, pt);
        gt_set_copy(ev, GT_COPY_HTOD, GT_HM_UNKNOWN, 0, async);
        return;
    }
    /* Linear memory: the extent's width is in bytes. Arrays are device side. */
    size_t bytes = gt_mul_sat(gt_mul_sat(p->extent.width, p->extent.height ? p->extent.height : 1),
                              p->extent.depth ? p->extent.depth : 1);
    gt_rd_copy_rt(ev, p->dstPtr.ptr, p->srcPtr.ptr, bytes, p->kind, async, stream, pt);
}

void gt_rd_copy_batch(struct gt_event *ev, int res, void *const *dsts, const void *const *srcs, const size_t *sizes,
                      size_t count, void *stream, int pt)
{
    if (res != 0 || !dsts || !srcs || !sizes || count == 0) {
        gt_set_stream(ev, stream, pt);
        gt_set_copy(ev, GT_COPY_HTOD, GT_HM_UNKNOWN, 0, 1);
        return;
    }
    size_t bytes = 0;
    for (size_t i = 0; i < count; i++)
        bytes = sizes[i] > SIZE_MAX - bytes ? SIZE_MAX : bytes + sizes[i];
    gt_set_stream(ev, stream, pt);
    gt_copy_by_address(ev, dsts[0], srcs[0], bytes, 1);
}

void gt_rd_copy_peer(struct gt_event *ev, size_t bytes, int async, void *stream, int pt)
{
    gt_set_stream(ev, stream, pt);
    gt_set_copy(ev, GT_COPY_PTOP, GT_HM_NONE, bytes, async);
}

void gt_rd_memset(struct gt_event *ev, size_t bytes, int async, void *stream, int pt)
{
    gt_set_stream(ev, stream, pt);
    ev->u.memset.bytes = bytes;
    ev->u.memset.device = (uint32_t)gt_tls_device;
    ev->u.memset.async = (uint8_t)async;
}

/* ---- synchronization ---- */

/* A sync or poll: on_stream, the call names a stream (whose NULL in a
 * _ptsz/_ptds variant is the per-thread stream when it is also the target);
 * polls, 1 for a query (runs of them are folded, gt_ring). */
static void gt_rd_sync_event(struct gt_event *ev, enum gt_sync_kind kind, void *stream, void *target, int pt,
                             int on_stream, int stream_target, uint32_t polls)
{
    if (on_stream)
        gt_set_stream(ev, stream, pt);
    ev->u.sync.kind = (uint8_t)kind;
    ev->u.sync.polls = polls;
    uint64_t t = (uint64_t)(uintptr_t)target;
    if (stream_target && pt && t == 0)
        t = GT_STREAM_PER_THREAD;
    ev->u.sync.target = t;
}

void gt_rd_sync(struct gt_event *ev, enum gt_sync_kind kind, void *stream, void *target, int pt)
{
    gt_rd_sync_event(ev, kind, stream, target, pt, kind == GT_SYNC_STREAM || kind == GT_SYNC_STREAM_WAIT_EVENT,
                     kind == GT_SYNC_STREAM, 0);
}

void gt_rd_query(struct gt_event *ev, enum gt_sync_kind kind, void *stream, void *target, int pt)
{
    int on_stream = kind == GT_SYNC_STREAM_QUERY;
    gt_rd_sync_event(ev, kind, stream, target, pt, on_stream, on_stream, 1);
}

/* ---- allocation ---- */

static int gt_range_kind_of(enum gt_alloc_kind k)
{
    switch (k) {
    case GT_AK_DEVICE: case GT_AK_ASYNC: return GT_RANGE_DEVICE;
    case GT_AK_PINNED: case GT_AK_REGISTERED: return GT_RANGE_PINNED;
    case GT_AK_MANAGED: return GT_RANGE_MANAGED;
    case GT_AK_MAPPED: return GT_RANGE_MAPPED;
    }
    return GT_RANGE_NONE;
}

static void gt_set_alloc(struct gt_event *ev, enum gt_alloc_kind kind, const void *p, size_t bytes)
{
    ev->u.alloc.kind = (uint8_t)kind;
    ev->u.alloc.ptr = (uint64_t)(uintptr_t)p;
    ev->u.alloc.bytes = bytes;
}

void gt_rd_alloc(struct gt_event *ev, int res, enum gt_alloc_kind kind, void *const *out, size_t bytes)
{
    void *p = (res == 0 && out) ? *out : NULL;
    gt_set_alloc(ev, kind, p, bytes);
    if (p)
        gt_ranges_add((uintptr_t)p, bytes, gt_range_kind_of(kind));
}

void gt_rd_alloc_pitch(struct gt_event *ev, int res, void *const *out, const size_t *pitch, size_t height)
{
    size_t bytes = (res == 0 && pitch) ? gt_mul_sat(*pitch, height) : 0;
    gt_rd_alloc(ev, res, GT_AK_DEVICE, out, bytes);
}

void gt_rd_alloc_async(struct gt_event *ev, int res, void *const *out, size_t bytes, void *stream, int pt)
{
    gt_set_stream(ev, stream, pt);
    gt_rd_alloc(ev, res, GT_AK_ASYNC, out, bytes);
}

void gt_rd_register(struct gt_event *ev, int res, void *p, size_t bytes, int mapped)
{
    gt_set_alloc(ev, mapped ? GT_AK_MAPPED : GT_AK_REGISTERED, p, bytes);
    if (res == 0 && p)
        gt_ranges_add((uintptr_t)p, bytes, mapped ? GT_RANGE_MAPPED : GT_RANGE_PINNED);
}

void gt_rd_host_device_pointer(int res, const void *host)
{
    /* Asked for a device pointer to it: the program reads it zero-copy (with
     * unified addressing all page-locked memory is mapped, flag or not). */
    if (res == 0 && host)
        gt_ranges_rekind((uintptr_t)host, GT_RANGE_PINNED, GT_RANGE_MAPPED);
}

void gt_rd_free(struct gt_event *ev, int res, enum gt_alloc_kind kind, void *p)
{
    gt_set_alloc(ev, kind, p, 0);
    if (res == 0 && p)
        gt_ranges_remove((uintptr_t)p);
}

void gt_rd_free_async(struct gt_event *ev, int res, void *p, void *stream, int pt)
{
    gt_set_stream(ev, stream, pt);
    gt_rd_free(ev, res, GT_AK_ASYNC, p);
}

/* ---- streams, events, device, entry points ---- */

void gt_rd_stream(struct gt_event *ev, void *stream, int pt)
{
    gt_set_stream(ev, stream, pt);
}

void gt_rd_stream_out(struct gt_event *ev, int res, void *const *out)
{
    if (res == 0 && out)
        gt_set_stream(ev, *out, 0);
}

void gt_rd_set_device(struct gt_event *ev, int res, int device)
{
    (void)ev;
    if (res == 0)
        gt_tls_device = device;
}

void gt_rd_proc_address(int res, void **pfn)
{
    if (res == 0 && pfn && *pfn)
        *pfn = gt_wrap_driver_pointer(*pfn);
}

/* The reset context's records must not wait for exit, when they may be gone. */
void gt_rd_device_reset(void)
{
    gt_cupti_flush(1);
}

void gt_rd_capture(struct gt_event *ev, int res, void *stream, int begin, int pt)
{
    gt_set_stream(ev, stream, pt);
    ev->captured = 0; /* the capture's own bracket is not a graph node */
    if (res != 0)
        return;
    if (begin)
        gt_capture_begin(ev->stream);
    else
        gt_capture_end(ev->stream);
}

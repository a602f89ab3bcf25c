/* fk_device.c: what programs ask of devices and contexts beyond running
 * work: context flags, peer access between the simulated devices, stream
 * priorities, occupancy (from the simulated device's per-multiprocessor
 * limits), and the driver's private export tables (not simulated). */
#include <string.h>

#include "fk_driver.h"

static int fk_dev_ok(CUdevice d)
{
    return d >= 0 && d < fk_cfg.devices;
}

/* ---- context flags ---- */

static int fk_flags_ok(unsigned flags)
{
    unsigned sched = flags & CU_CTX_SCHED_MASK;
    return !(flags & ~(unsigned)(CU_CTX_SCHED_MASK | CU_CTX_MAP_HOST | CU_CTX_LMEM_RESIZE_TO_MAX |
                                 CU_CTX_SYNC_MEMOPS)) &&
           (sched == CU_CTX_SCHED_AUTO || sched == CU_CTX_SCHED_SPIN || sched == CU_CTX_SCHED_YIELD ||
            sched == CU_CTX_SCHED_BLOCKING_SYNC);
}

FK_API CUresult cuDevicePrimaryCtxSetFlags_v2(CUdevice d, unsigned int flags)
{
    if (!fk_initialized)
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!fk_dev_ok(d))
        return CUDA_ERROR_INVALID_DEVICE;
    if (!fk_flags_ok(flags))
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&fk_lock);
    fk_ctx[d].flags = flags;
    fk_ctx[d].flags_set = 1;
    pthread_mutex_unlock(&fk_lock);
    return CUDA_SUCCESS;
}

FK_API CUresult cuCtxGetFlags(unsigned int *flags)
{
    CHECK_CTX();
    if (!flags)
        return CUDA_ERROR_INVALID_VALUE;
    *flags = fk_current_ctx()->flags;
    return CUDA_SUCCESS;
}

FK_API CUresult cuCtxSetFlags(unsigned int flags)
{
    CHECK_CTX();
    if (!fk_flags_ok(flags))
        return CUDA_ERROR_INVALID_VALUE;
    fk_current_ctx()->flags = flags;
    return CUDA_SUCCESS;
}

/* ---- peer access: every pair of distinct simulated devices can ---- */

FK_API CUresult cuDeviceCanAccessPeer(int *can, CUdevice d, CUdevice peer)
{
    if (!fk_initialized)
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!can)
        return CUDA_ERROR_INVALID_VALUE;
    if (!fk_dev_ok(d) || !fk_dev_ok(peer))
        return CUDA_ERROR_INVALID_DEVICE;
    *can = d != peer;
    return CUDA_SUCCESS;
}

FK_API CUresult cuDeviceGetP2PAttribute(int *v, CUdevice_P2PAttribute a, CUdevice src, CUdevice dst)
{
    if (!fk_initialized)
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!v)
        return CUDA_ERROR_INVALID_VALUE;
    if (!fk_dev_ok(src) || !fk_dev_ok(dst) || src == dst)
        return CUDA_ERROR_INVALID_DEVICE;
    switch (a) {
    case CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK: *v = 0; break;
    case CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED:
    case CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED:
    case CU_DEVICE_P2P_ATTRIBUTE_CUDA_ARRAY_ACCESS_SUPPORTED: *v = 1; break;
    default: return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}

static CUresult fk_peer(CUcontext peer, unsigned flags, int enable)
{
    CHECK_CTX();
    if (flags)
        return CUDA_ERROR_INVALID_VALUE;
    if (!peer || peer->magic != FK_MAGIC_CTX)
        return CUDA_ERROR_INVALID_CONTEXT;
    struct CUctx_st *c = fk_current_ctx();
    if (peer == c)
        return enable ? CUDA_ERROR_INVALID_DEVICE : CUDA_ERROR_PEER_ACCESS_NOT_ENABLED;
    CUresult r = CUDA_SUCCESS;
    pthread_mutex_lock(&fk_lock);
    if (enable && c->peer[peer->device])
        r = CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED;
    else if (!enable && !c->peer[peer->device])
        r = CUDA_ERROR_PEER_ACCESS_NOT_ENABLED;
    else
        c->peer[peer->device] = (uint8_t)enable;
    pthread_mutex_unlock(&fk_lock);
    return r;
}

FK_API CUresult cuCtxEnablePeerAccess(CUcontext peer, unsigned int flags) { return fk_peer(peer, flags, 1); }
FK_API CUresult cuCtxDisablePeerAccess(CUcontext peer) { return fk_peer(peer, 0, 0); }

/* ---- stream priorities: [-5, 0], lower is higher, as on an H100 ---- */

enum { FK_PRIO_LEAST = 0, FK_PRIO_GREATEST = -5 };

int fk_clamp_priority(int p)
{
    return p > FK_PRIO_LEAST ? FK_PRIO_LEAST : p < FK_PRIO_GREATEST ? FK_PRIO_GREATEST : p;
}

FK_API CUresult cuCtxGetStreamPriorityRange(int *least, int *greatest)
{
    CHECK_CTX();
    if (least)
        *least = FK_PRIO_LEAST;
    if (greatest)
        *greatest = FK_PRIO_GREATEST;
    return CUDA_SUCCESS;
}

static CUresult fk_stream_prio(CUstream hs, int *p, int pt)
{
    CHECK_CTX();
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    if (!fk_stream_valid(hs))
        return CUDA_ERROR_INVALID_HANDLE;
    *p = fk_stream(hs, pt)->priority;
    return CUDA_SUCCESS;
}

FK_API CUresult cuStreamGetPriority(CUstream s, int *p) { return fk_stream_prio(s, p, 0); }
FK_API CUresult cuStreamGetPriority_ptsz(CUstream s, int *p) { return fk_stream_prio(s, p, 1); }

static CUresult fk_stream_dev(CUstream hs, CUdevice *d, CUcontext *c, int pt)
{
    CHECK_CTX();
    if (!fk_stream_valid(hs))
        return CUDA_ERROR_INVALID_HANDLE;
    struct CUstream_st *s = fk_stream(hs, pt);
    if (d)
        *d = s->device;
    if (c)
        *c = &fk_ctx[s->device];
    return d || c ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

FK_API CUresult cuStreamGetDevice(CUstream s, CUdevice *d) { return d ? fk_stream_dev(s, d, NULL, 0) : CUDA_ERROR_INVALID_VALUE; }
FK_API CUresult cuStreamGetDevice_ptsz(CUstream s, CUdevice *d) { return d ? fk_stream_dev(s, d, NULL, 1) : CUDA_ERROR_INVALID_VALUE; }
FK_API CUresult cuStreamGetCtx(CUstream s, CUcontext *c) { return c ? fk_stream_dev(s, NULL, c, 0) : CUDA_ERROR_INVALID_VALUE; }
FK_API CUresult cuStreamGetCtx_ptsz(CUstream s, CUcontext *c) { return c ? fk_stream_dev(s, NULL, c, 1) : CUDA_ERROR_INVALID_VALUE; }

/* ---- occupancy: every simulated kernel uses FK_KERNEL_REGS registers a
 * thread and no static shared memory; the limits are the device's ---- */

static int fk_blocks_per_sm(int bs, size_t dyn)
{
    if (bs <= 0 || bs > 1024 || dyn > (size_t)(FK_SM_SHARED - FK_SHARED_RESERVED))
        return 0;
    int warps = (bs + 31) / 32;
    int by_threads = FK_SM_THREADS / (warps * 32);
    int regs_per_warp = (FK_KERNEL_REGS * 32 + 255) / 256 * 256; /* allocated per warp, 256 at a time */
    int by_regs = FK_SM_REGS / regs_per_warp / warps;
    int by_shared = (int)(FK_SM_SHARED / (dyn + FK_SHARED_RESERVED));
    int n = FK_SM_BLOCKS;
    if (by_threads < n)
        n = by_threads;
    if (by_regs < n)
        n = by_regs;
    if (by_shared < n)
        n = by_shared;
    return n;
}

static CUresult fk_occupancy(int *n, CUfunction f, int bs, size_t dyn, unsigned flags)
{
    CHECK_CTX();
    if (!n || (flags & ~(unsigned)CU_OCCUPANCY_DISABLE_CACHING_OVERRIDE))
        return CUDA_ERROR_INVALID_VALUE;
    if (!f || f->magic != FK_MAGIC_FUNC)
        return CUDA_ERROR_INVALID_HANDLE;
    *n = fk_blocks_per_sm(bs, dyn);
    return CUDA_SUCCESS;
}

FK_API CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *n, CUfunction f, int bs, size_t dyn)
{
    return fk_occupancy(n, f, bs, dyn, 0);
}

FK_API CUresult cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *n, CUfunction f, int bs, size_t dyn,
                                                                     unsigned int flags)
{
    return fk_occupancy(n, f, bs, dyn, flags);
}

/* As CUDA's own calculator (cuda_runtime.h) does it: from the largest block
 * size down, a warp at a time, the first that fills a multiprocessor most. */
static CUresult fk_potential(int *min_grid, int *block, CUfunction f, CUoccupancyB2DSize b2d, size_t dyn,
                             int limit, unsigned flags)
{
    CHECK_CTX();
    if (!min_grid || !block || (flags & ~(unsigned)CU_OCCUPANCY_DISABLE_CACHING_OVERRIDE))
        return CUDA_ERROR_INVALID_VALUE;
    if (!f || f->magic != FK_MAGIC_FUNC)
        return CUDA_ERROR_INVALID_HANDLE;
    int max = limit > 0 && limit < 1024 ? limit : 1024;
    int best = 0, best_bs = 0, best_blocks = 0;
    /* the first size tried is the limit itself, then multiples of a warp */
    for (int aligned = (max + 31) / 32 * 32; aligned > 0; aligned -= 32) {
        int bs = aligned < max ? aligned : max;
        int blocks = fk_blocks_per_sm(bs, b2d ? b2d(bs) : dyn);
        if (blocks * bs > best) {
            best = blocks * bs;
            best_bs = bs;
            best_blocks = blocks;
        }
        if (best == FK_SM_THREADS)
            break;
    }
    *block = best_bs;
    *min_grid = best_blocks * FK_SM_COUNT;
    return CUDA_SUCCESS;
}

FK_API CUresult cuOccupancyMaxPotentialBlockSize(int *min_grid, int *block, CUfunction f, CUoccupancyB2DSize b2d,
                                                 size_t dyn, int limit)
{
    return fk_potential(min_grid, block, f, b2d, dyn, limit, 0);
}

FK_API CUresult cuOccupancyMaxPotentialBlockSizeWithFlags(int *min_grid, int *block, CUfunction f,
                                                          CUoccupancyB2DSize b2d, size_t dyn, int limit,
                                                          unsigned int flags)
{
    return fk_potential(min_grid, block, f, b2d, dyn, limit, flags);
}

FK_API CUresult cuOccupancyAvailableDynamicSMemPerBlock(size_t *dyn, CUfunction f, int blocks, int bs)
{
    CHECK_CTX();
    if (!dyn || blocks <= 0 || bs <= 0 || bs > 1024)
        return CUDA_ERROR_INVALID_VALUE;
    if (!f || f->magic != FK_MAGIC_FUNC)
        return CUDA_ERROR_INVALID_HANDLE;
    if (fk_blocks_per_sm(bs, 0) < blocks) {
        *dyn = 0;
        return CUDA_SUCCESS;
    }
    size_t per = (size_t)FK_SM_SHARED / (size_t)blocks;
    per = per > FK_SHARED_RESERVED ? per - FK_SHARED_RESERVED : 0;
    *dyn = per > (size_t)(FK_SM_SHARED - FK_SHARED_RESERVED) ? (size_t)(FK_SM_SHARED - FK_SHARED_RESERVED) : per;
    return CUDA_SUCCESS;
}

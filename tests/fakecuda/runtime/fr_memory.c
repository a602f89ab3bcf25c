/* fr_memory.c: allocation, copies and memsets, each mapped onto the driver
 * call the real runtime would make. */
#include <string.h>

#include "fr_runtime.h"


FR_API cudaError_t cudaMalloc(void **p, size_t n)
{
    READY();
    RET(fr_drv(0)->memAlloc((CUdeviceptr *)p, n));
}

FR_API cudaError_t cudaMallocPitch(void **p, size_t *pitch, size_t w, size_t h)
{
    READY();
    RET(fr_drv(0)->memAllocPitch((CUdeviceptr *)p, pitch, w, h, 4));
}

FR_API cudaError_t cudaMallocManaged(void **p, size_t n, unsigned int flags)
{
    READY();
    RET(fr_drv(0)->memAllocManaged((CUdeviceptr *)p, n, flags ? flags : CU_MEM_ATTACH_GLOBAL));
}

FR_API cudaError_t cudaFree(void *p)
{
    READY();
    RET(fr_drv(0)->memFree((CUdeviceptr)p));
}

FR_API cudaError_t cudaMallocHost(void **p, size_t n)
{
    READY();
    RET(fr_drv(0)->memAllocHost(p, n));
}

FR_API cudaError_t cudaHostAlloc(void **p, size_t n, unsigned int flags)
{
    READY();
    RET(fr_drv(0)->memHostAlloc(p, n, flags));
}

FR_API cudaError_t cudaFreeHost(void *p)
{
    READY();
    RET(fr_drv(0)->memFreeHost(p));
}

FR_API cudaError_t cudaHostRegister(void *p, size_t n, unsigned int flags)
{
    READY();
    RET(fr_drv(0)->memHostRegister(p, n, flags));
}

FR_API cudaError_t cudaHostUnregister(void *p)
{
    READY();
    RET(fr_drv(0)->memHostUnregister(p));
}

FR_API cudaError_t cudaMemGetInfo(size_t *free_b, size_t *total)
{
    READY();
    RET(fr_drv(0)->memGetInfo(free_b, total));
}

/* Stream-ordered allocation (cudaMallocAsync, pools): fr_mempool.c. */
FR_API cudaError_t cudaFreeAsync(void *p, cudaStream_t s)
{
    READY();
    RET(fr_drv(0)->memFreeAsync((CUdeviceptr)p, s));
}

FR_API cudaError_t cudaFreeAsync_ptsz(void *p, cudaStream_t s)
{
    READY();
    RET(fr_drv(1)->memFreeAsync((CUdeviceptr)p, s));
}

static cudaError_t fr_copy(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind, int async,
                           cudaStream_t s, int pt)
{
    READY();
    const struct fr_driver *d = fr_drv(pt);
    CUresult r;
    fr_rt_enter(async ? "cudaMemcpyAsync_v3020" : "cudaMemcpy_v3020");
    switch (kind) {
    case cudaMemcpyHostToDevice:
        r = async ? d->memcpyHtoDAsync((CUdeviceptr)dst, src, n, s) : d->memcpyHtoD((CUdeviceptr)dst, src, n);
        break;
    case cudaMemcpyDeviceToHost:
        r = async ? d->memcpyDtoHAsync(dst, (CUdeviceptr)src, n, s) : d->memcpyDtoH(dst, (CUdeviceptr)src, n);
        break;
    case cudaMemcpyDeviceToDevice:
        r = async ? d->memcpyDtoDAsync((CUdeviceptr)dst, (CUdeviceptr)src, n, s)
                  : d->memcpyDtoD((CUdeviceptr)dst, (CUdeviceptr)src, n);
        break;
    case cudaMemcpyHostToHost:
    case cudaMemcpyDefault:
        r = async ? d->memcpyAsync((CUdeviceptr)dst, (CUdeviceptr)src, n, s)
                  : d->memcpy((CUdeviceptr)dst, (CUdeviceptr)src, n);
        break;
    default:
        fr_rt_leave();
        return fr_set_error(cudaErrorInvalidMemcpyDirection);
    }
    fr_rt_leave();
    RET(r);
}

FR_API cudaError_t cudaMemcpy(void *dst, const void *src, size_t n, enum cudaMemcpyKind k)
{
    return fr_copy(dst, src, n, k, 0, NULL, 0);
}

FR_API cudaError_t cudaMemcpy_ptds(void *dst, const void *src, size_t n, enum cudaMemcpyKind k)
{
    return fr_copy(dst, src, n, k, 0, NULL, 1);
}

FR_API cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t n, enum cudaMemcpyKind k, cudaStream_t s)
{
    return fr_copy(dst, src, n, k, 1, s, 0);
}

FR_API cudaError_t cudaMemcpyAsync_ptsz(void *dst, const void *src, size_t n, enum cudaMemcpyKind k,
                                        cudaStream_t s)
{
    return fr_copy(dst, src, n, k, 1, s, 1);
}

static cudaError_t fr_copy2d(void *dst, size_t dp, const void *src, size_t sp, size_t w, size_t h,
                             enum cudaMemcpyKind kind, int async, cudaStream_t s, int pt)
{
    READY();
    CUDA_MEMCPY2D c;
    memset(&c, 0, sizeof(c));
    int src_dev = kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice;
    int dst_dev = kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice;
    if (kind == cudaMemcpyDefault) {
        c.srcMemoryType = c.dstMemoryType = CU_MEMORYTYPE_UNIFIED;
        c.srcDevice = (CUdeviceptr)src;
        c.dstDevice = (CUdeviceptr)dst;
    } else {
        c.srcMemoryType = src_dev ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST;
        c.dstMemoryType = dst_dev ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST;
        c.srcHost = src;
        c.srcDevice = (CUdeviceptr)src;
        c.dstHost = dst;
        c.dstDevice = (CUdeviceptr)dst;
    }
    c.srcPitch = sp;
    c.dstPitch = dp;
    c.WidthInBytes = w;
    c.Height = h;
    const struct fr_driver *d = fr_drv(pt);
    RET(async ? d->memcpy2DAsync(&c, s) : d->memcpy2D(&c));
}

FR_API cudaError_t cudaMemcpy2D(void *dst, size_t dp, const void *src, size_t sp, size_t w, size_t h,
                                enum cudaMemcpyKind k)
{
    return fr_copy2d(dst, dp, src, sp, w, h, k, 0, NULL, 0);
}

FR_API cudaError_t cudaMemcpy2D_ptds(void *dst, size_t dp, const void *src, size_t sp, size_t w, size_t h,
                                     enum cudaMemcpyKind k)
{
    return fr_copy2d(dst, dp, src, sp, w, h, k, 0, NULL, 1);
}

FR_API cudaError_t cudaMemcpy2DAsync(void *dst, size_t dp, const void *src, size_t sp, size_t w, size_t h,
                                     enum cudaMemcpyKind k, cudaStream_t s)
{
    return fr_copy2d(dst, dp, src, sp, w, h, k, 1, s, 0);
}

FR_API cudaError_t cudaMemcpy2DAsync_ptsz(void *dst, size_t dp, const void *src, size_t sp, size_t w, size_t h,
                                          enum cudaMemcpyKind k, cudaStream_t s)
{
    return fr_copy2d(dst, dp, src, sp, w, h, k, 1, s, 1);
}

/* Linear memory only (pitched pointers); arrays are not simulated. */
int fr_memcpy3d_params(const struct cudaMemcpy3DParms *p, CUDA_MEMCPY3D *out)
{
    if (!p || p->srcArray || p->dstArray)
        return 0;
    CUDA_MEMCPY3D c;
    memset(&c, 0, sizeof(c));
    int src_dev = p->kind == cudaMemcpyDeviceToHost || p->kind == cudaMemcpyDeviceToDevice;
    int dst_dev = p->kind == cudaMemcpyHostToDevice || p->kind == cudaMemcpyDeviceToDevice;
    if (p->kind == cudaMemcpyDefault)
        c.srcMemoryType = c.dstMemoryType = CU_MEMORYTYPE_UNIFIED;
    else {
        c.srcMemoryType = src_dev ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST;
        c.dstMemoryType = dst_dev ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST;
    }
    c.srcHost = p->srcPtr.ptr;
    c.srcDevice = (CUdeviceptr)p->srcPtr.ptr;
    c.srcPitch = p->srcPtr.pitch;
    c.srcHeight = p->srcPtr.ysize;
    c.dstHost = p->dstPtr.ptr;
    c.dstDevice = (CUdeviceptr)p->dstPtr.ptr;
    c.dstPitch = p->dstPtr.pitch;
    c.dstHeight = p->dstPtr.ysize;
    c.WidthInBytes = p->extent.width;
    c.Height = p->extent.height;
    c.Depth = p->extent.depth;
    *out = c;
    return 1;
}

static cudaError_t fr_copy3d(const struct cudaMemcpy3DParms *p, int async, cudaStream_t s, int pt)
{
    READY();
    CUDA_MEMCPY3D c;
    if (!fr_memcpy3d_params(p, &c))
        return fr_set_error(cudaErrorInvalidValue);
    const struct fr_driver *d = fr_drv(pt);
    RET(async ? d->memcpy3DAsync(&c, s) : d->memcpy3D(&c));
}

FR_API cudaError_t cudaMemcpy3D(const struct cudaMemcpy3DParms *p) { return fr_copy3d(p, 0, NULL, 0); }
FR_API cudaError_t cudaMemcpy3D_ptds(const struct cudaMemcpy3DParms *p) { return fr_copy3d(p, 0, NULL, 1); }
FR_API cudaError_t cudaMemcpy3DAsync(const struct cudaMemcpy3DParms *p, cudaStream_t s)
{
    return fr_copy3d(p, 1, s, 0);
}
FR_API cudaError_t cudaMemcpy3DAsync_ptsz(const struct cudaMemcpy3DParms *p, cudaStream_t s)
{
    return fr_copy3d(p, 1, s, 1);
}

FR_API cudaError_t cudaMemcpyPeer(void *dst, int dd, const void *src, int sd, size_t n)
{
    (void)dd;
    (void)sd;
    READY();
    RET(fr_drv(0)->memcpyPeer((CUdeviceptr)dst, NULL, (CUdeviceptr)src, NULL, n));
}

FR_API cudaError_t cudaMemcpyPeerAsync(void *dst, int dd, const void *src, int sd, size_t n, cudaStream_t s)
{
    (void)dd;
    (void)sd;
    READY();
    RET(fr_drv(0)->memcpyPeerAsync((CUdeviceptr)dst, NULL, (CUdeviceptr)src, NULL, n, s));
}

static cudaError_t fr_memset(void *p, int v, size_t w, size_t pitch, size_t h, int async, cudaStream_t s, int pt)
{
    READY();
    const struct fr_driver *d = fr_drv(pt);
    CUresult r;
    fr_rt_enter(async ? "cudaMemsetAsync_v3020" : "cudaMemset_v3020");
    if (h)
        r = async ? d->memsetD2D8Async((CUdeviceptr)p, pitch, (unsigned char)v, w, h, s)
                  : d->memsetD2D8((CUdeviceptr)p, pitch, (unsigned char)v, w, h);
    else
        r = async ? d->memsetD8Async((CUdeviceptr)p, (unsigned char)v, w, s)
                  : d->memsetD8((CUdeviceptr)p, (unsigned char)v, w);
    fr_rt_leave();
    RET(r);
}

FR_API cudaError_t cudaMemset(void *p, int v, size_t n) { return fr_memset(p, v, n, 0, 0, 0, NULL, 0); }
FR_API cudaError_t cudaMemset_ptds(void *p, int v, size_t n) { return fr_memset(p, v, n, 0, 0, 0, NULL, 1); }
FR_API cudaError_t cudaMemsetAsync(void *p, int v, size_t n, cudaStream_t s)
{
    return fr_memset(p, v, n, 0, 0, 1, s, 0);
}
FR_API cudaError_t cudaMemsetAsync_ptsz(void *p, int v, size_t n, cudaStream_t s)
{
    return fr_memset(p, v, n, 0, 0, 1, s, 1);
}
FR_API cudaError_t cudaMemset2D(void *p, size_t pitch, int v, size_t w, size_t h)
{
    return fr_memset(p, v, w, pitch, h, 0, NULL, 0);
}
FR_API cudaError_t cudaMemset2D_ptds(void *p, size_t pitch, int v, size_t w, size_t h)
{
    return fr_memset(p, v, w, pitch, h, 0, NULL, 1);
}
FR_API cudaError_t cudaMemset2DAsync(void *p, size_t pitch, int v, size_t w, size_t h, cudaStream_t s)
{
    return fr_memset(p, v, w, pitch, h, 1, s, 0);
}
FR_API cudaError_t cudaMemset2DAsync_ptsz(void *p, size_t pitch, int v, size_t w, size_t h, cudaStream_t s)
{
    return fr_memset(p, v, w, pitch, h, 1, s, 1);
}

static cudaError_t fr_copy_batch(void *const *dsts, const void *const *srcs, const size_t *sizes, size_t count,
                                 cudaStream_t s, int pt)
{
    READY();
    RET(fr_drv(pt)->memcpyBatchAsync((CUdeviceptr *)dsts, (CUdeviceptr *)srcs, (size_t *)sizes, count, NULL, NULL,
                                     0, s));
}

FR_API cudaError_t cudaMemcpyBatchAsync(void *const *dsts, const void *const *srcs, const size_t *sizes, size_t count,
                                        struct cudaMemcpyAttributes *attrs, size_t *idx, size_t nattrs,
                                        cudaStream_t s)
{
    (void)attrs; (void)idx; (void)nattrs;
    return fr_copy_batch(dsts, srcs, sizes, count, s, 0);
}

FR_API cudaError_t cudaMemcpyBatchAsync_ptsz(void *const *dsts, const void *const *srcs, const size_t *sizes,
                                             size_t count, struct cudaMemcpyAttributes *attrs, size_t *idx,
                                             size_t nattrs, cudaStream_t s)
{
    (void)attrs; (void)idx; (void)nattrs;
    return fr_copy_batch(dsts, srcs, sizes, count, s, 1);
}

FR_API cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t *pool, int device)
{
    READY();
    RET(fr_drv(0)->deviceGetDefaultMemPool((CUmemoryPool *)pool, device));
}

FR_API cudaError_t cudaMallocFromPoolAsync(void **p, size_t n, cudaMemPool_t pool, cudaStream_t s)
{
    READY();
    RET(fr_drv(0)->memAllocFromPoolAsync((CUdeviceptr *)p, n, (CUmemoryPool)pool, s));
}

FR_API cudaError_t cudaMallocFromPoolAsync_ptsz(void **p, size_t n, cudaMemPool_t pool, cudaStream_t s)
{
    READY();
    RET(fr_drv(1)->memAllocFromPoolAsync((CUdeviceptr *)p, n, (CUmemoryPool)pool, s));
}

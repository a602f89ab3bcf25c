/* fr_device.c: device flags, peer access, mapped host memory and pointer
 * queries, stream callbacks and priorities, occupancy: each over the
 * driver call the real runtime makes for it. */
#include <stdlib.h>

#include "fr_runtime.h"

FR_API cudaError_t cudaSetDeviceFlags(unsigned int flags)
{
    READY();
    /* the runtime's flag values are the driver's (cudaDeviceMapHost = CU_CTX_MAP_HOST...) */
    RET(fr_drv(0)->primaryCtxSetFlags(fr_current_device(), flags));
}

FR_API cudaError_t cudaGetDeviceFlags(unsigned int *flags)
{
    READY();
    RET(fr_drv(0)->ctxGetFlags(flags));
}

FR_API cudaError_t cudaDeviceCanAccessPeer(int *can, int device, int peer)
{
    READY();
    RET(fr_drv(0)->deviceCanAccessPeer(can, device, peer));
}

/* The context of a device, by ordinal: its primary one. */
static CUcontext fr_ctx_of(int device)
{
    CUcontext c = NULL;
    CUdevice d;
    if (fr_drv(0)->deviceGet(&d, device) != CUDA_SUCCESS || fr_drv(0)->primaryCtxRetain(&c, d) != CUDA_SUCCESS)
        return NULL;
    return c;
}

FR_API cudaError_t cudaDeviceEnablePeerAccess(int peer, unsigned int flags)
{
    READY();
    CUcontext c = fr_ctx_of(peer);
    if (!c)
        return fr_set_error(cudaErrorInvalidDevice);
    RET(fr_drv(0)->ctxEnablePeerAccess(c, flags));
}

FR_API cudaError_t cudaDeviceDisablePeerAccess(int peer)
{
    READY();
    CUcontext c = fr_ctx_of(peer);
    if (!c)
        return fr_set_error(cudaErrorInvalidDevice);
    RET(fr_drv(0)->ctxDisablePeerAccess(c));
}

FR_API cudaError_t cudaHostGetDevicePointer(void **dev, void *host, unsigned int flags)
{
    READY();
    RET(fr_drv(0)->memHostGetDevicePointer((CUdeviceptr *)dev, host, flags));
}

FR_API cudaError_t cudaHostGetFlags(unsigned int *flags, void *host)
{
    READY();
    RET(fr_drv(0)->memHostGetFlags(flags, host));
}

/* Memory CUDA does not know (pageable) is cudaMemoryTypeUnregistered, as
 * since CUDA 11, not an error. */
FR_API cudaError_t cudaPointerGetAttributes(struct cudaPointerAttributes *a, const void *p)
{
    READY();
    if (!a)
        return fr_set_error(cudaErrorInvalidValue);
    const struct fr_driver *d = fr_drv(0);
    unsigned type = 0, managed = 0;
    int ordinal = 0;
    a->type = cudaMemoryTypeUnregistered;
    a->device = -2; /* cudaInvalidDeviceId */
    a->devicePointer = NULL;
    a->hostPointer = (void *)p;
    if (d->pointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)p) != CUDA_SUCCESS)
        return cudaSuccess;
    d->pointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, (CUdeviceptr)p);
    d->pointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, (CUdeviceptr)p);
    a->device = ordinal;
    a->devicePointer = (void *)p;
    if (managed)
        a->type = cudaMemoryTypeManaged;
    else if (type == CU_MEMORYTYPE_HOST)
        a->type = cudaMemoryTypeHost;
    else {
        a->type = cudaMemoryTypeDevice;
        a->hostPointer = NULL;
    }
    return cudaSuccess;
}

/* ---- streams ---- */

struct fr_callback {
    cudaStreamCallback_t fn;
    void *data;
};

static void CUDA_CB fr_callback_tramp(CUstream s, CUresult status, void *arg)
{
    struct fr_callback c = *(struct fr_callback *)arg;
    free(arg);
    c.fn((cudaStream_t)s, fr_error(status), c.data);
}

static cudaError_t fr_add_callback(cudaStream_t s, cudaStreamCallback_t fn, void *data, unsigned flags, int pt)
{
    READY();
    if (!fn)
        return fr_set_error(cudaErrorInvalidValue);
    struct fr_callback *c = malloc(sizeof(*c));
    if (!c)
        return fr_set_error(cudaErrorMemoryAllocation);
    c->fn = fn;
    c->data = data;
    CUresult r = fr_drv(pt)->streamAddCallback(s, fr_callback_tramp, c, flags);
    if (r != CUDA_SUCCESS)
        free(c);
    RET(r);
}

FR_API cudaError_t cudaStreamAddCallback(cudaStream_t s, cudaStreamCallback_t fn, void *data, unsigned int flags)
{
    return fr_add_callback(s, fn, data, flags, 0);
}

FR_API cudaError_t cudaStreamAddCallback_ptsz(cudaStream_t s, cudaStreamCallback_t fn, void *data,
                                              unsigned int flags)
{
    return fr_add_callback(s, fn, data, flags, 1);
}

FR_API cudaError_t cudaDeviceGetStreamPriorityRange(int *least, int *greatest)
{
    READY();
    RET(fr_drv(0)->ctxGetStreamPriorityRange(least, greatest));
}

#define FR_STREAM_GET(name, field, T, conv)                                             \
    FR_API cudaError_t name(cudaStream_t s, T *out)                                     \
    {                                                                                   \
        READY();                                                                        \
        RET(fr_drv(0)->field(s, (conv *)out));                                          \
    }                                                                                   \
    FR_API cudaError_t name##_ptsz(cudaStream_t s, T *out)                              \
    {                                                                                   \
        READY();                                                                        \
        RET(fr_drv(1)->field(s, (conv *)out));                                          \
    }
FR_STREAM_GET(cudaStreamGetPriority, streamGetPriority, int, int)
FR_STREAM_GET(cudaStreamGetFlags, streamGetFlags, unsigned int, unsigned int)
FR_STREAM_GET(cudaStreamGetId, streamGetId, unsigned long long, unsigned long long)
FR_STREAM_GET(cudaStreamGetDevice, streamGetDevice, int, CUdevice)

/* ---- occupancy ---- */

static cudaError_t fr_occupancy(int *n, const void *f, int bs, size_t dyn, unsigned flags)
{
    READY();
    CUkernel k = fr_kernel_for(f);
    if (!k)
        return fr_set_error(cudaErrorInvalidDeviceFunction);
    RET(fr_drv(0)->occupancyMaxActiveBlocks(n, (CUfunction)k, bs, dyn, flags));
}

FR_API cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *n, const void *f, int bs, size_t dyn)
{
    return fr_occupancy(n, f, bs, dyn, 0);
}

FR_API cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *n, const void *f, int bs, size_t dyn,
                                                                          unsigned int flags)
{
    return fr_occupancy(n, f, bs, dyn, flags);
}

FR_API cudaError_t cudaOccupancyAvailableDynamicSMemPerBlock(size_t *dyn, const void *f, int blocks, int bs)
{
    READY();
    CUkernel k = fr_kernel_for(f);
    if (!k)
        return fr_set_error(cudaErrorInvalidDeviceFunction);
    RET(fr_drv(0)->occupancyAvailableDynamicSMem(dyn, (CUfunction)k, blocks, bs));
}

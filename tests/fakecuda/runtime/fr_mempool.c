/* fr_mempool.c: stream-ordered allocation, memory pools and graph memory
 * nodes, each mapped onto the driver call the real runtime makes (the
 * driver's entry points fetched through cuGetProcAddress, as the others):
 * cudaMallocAsync on a capturing stream becomes an allocation node there. */
#include <stddef.h>

#include "fr_runtime.h"

/* A driver entry point by name; NULL if the driver has none. */
static void *fr_entry(const char *name, int pt)
{
    void *fn = NULL;
    CUdriverProcAddressQueryResult st;
    if (fr_drv(0)->getProcAddress(name, &fn, 13000, pt ? CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM : 0, &st) !=
        CUDA_SUCCESS)
        return NULL;
    return fn;
}

#define FR_CALL(name, pt, type, ...)                          \
    do {                                                      \
        READY();                                              \
        type *f_ = (type *)fr_entry(name, pt);                \
        if (!f_)                                              \
            return fr_set_error(cudaErrorNotSupported);       \
        RET(f_(__VA_ARGS__));                                 \
    } while (0)

FR_API cudaError_t cudaMallocAsync(void **p, size_t n, cudaStream_t s)
{
    FR_CALL("cuMemAllocAsync", 0, __typeof__(cuMemAllocAsync), (CUdeviceptr *)p, n, s);
}

FR_API cudaError_t cudaMallocAsync_ptsz(void **p, size_t n, cudaStream_t s)
{
    FR_CALL("cuMemAllocAsync", 1, __typeof__(cuMemAllocAsync), (CUdeviceptr *)p, n, s);
}

FR_API cudaError_t cudaMemPoolCreate(cudaMemPool_t *pool, const struct cudaMemPoolProps *props)
{
    /* the runtime's props and the driver's have the same layout */
    FR_CALL("cuMemPoolCreate", 0, __typeof__(cuMemPoolCreate), (CUmemoryPool *)pool, (const CUmemPoolProps *)props);
}

FR_API cudaError_t cudaMemPoolDestroy(cudaMemPool_t pool)
{
    FR_CALL("cuMemPoolDestroy", 0, __typeof__(cuMemPoolDestroy), (CUmemoryPool)pool);
}

FR_API cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t pool, enum cudaMemPoolAttr attr, void *value)
{
    FR_CALL("cuMemPoolSetAttribute", 0, __typeof__(cuMemPoolSetAttribute), (CUmemoryPool)pool,
            (CUmemPool_attribute)attr, value);
}

FR_API cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t pool, enum cudaMemPoolAttr attr, void *value)
{
    FR_CALL("cuMemPoolGetAttribute", 0, __typeof__(cuMemPoolGetAttribute), (CUmemoryPool)pool,
            (CUmemPool_attribute)attr, value);
}

FR_API cudaError_t cudaMemPoolTrimTo(cudaMemPool_t pool, size_t keep)
{
    FR_CALL("cuMemPoolTrimTo", 0, __typeof__(cuMemPoolTrimTo), (CUmemoryPool)pool, keep);
}

FR_API cudaError_t cudaMemPoolSetAccess(cudaMemPool_t pool, const struct cudaMemAccessDesc *map, size_t count)
{
    FR_CALL("cuMemPoolSetAccess", 0, __typeof__(cuMemPoolSetAccess), (CUmemoryPool)pool,
            (const CUmemAccessDesc *)map, count);
}

FR_API cudaError_t cudaMemPoolGetAccess(enum cudaMemAccessFlags *flags, cudaMemPool_t pool,
                                        struct cudaMemLocation *loc)
{
    FR_CALL("cuMemPoolGetAccess", 0, __typeof__(cuMemPoolGetAccess), (CUmemAccess_flags *)flags,
            (CUmemoryPool)pool, (CUmemLocation *)loc);
}

FR_API cudaError_t cudaDeviceGetMemPool(cudaMemPool_t *pool, int device)
{
    FR_CALL("cuDeviceGetMemPool", 0, __typeof__(cuDeviceGetMemPool), (CUmemoryPool *)pool, device);
}

FR_API cudaError_t cudaDeviceSetMemPool(int device, cudaMemPool_t pool)
{
    FR_CALL("cuDeviceSetMemPool", 0, __typeof__(cuDeviceSetMemPool), device, (CUmemoryPool)pool);
}

/* The runtime's parameters carry the same fields as the driver's. */
FR_API cudaError_t cudaGraphAddMemAllocNode(cudaGraphNode_t *node, cudaGraph_t g, const cudaGraphNode_t *deps,
                                            size_t ndeps, struct cudaMemAllocNodeParams *p)
{
    FR_CALL("cuGraphAddMemAllocNode", 0, __typeof__(cuGraphAddMemAllocNode), (CUgraphNode *)node, (CUgraph)g,
            (const CUgraphNode *)deps, ndeps, (CUDA_MEM_ALLOC_NODE_PARAMS *)p);
}

FR_API cudaError_t cudaGraphAddMemFreeNode(cudaGraphNode_t *node, cudaGraph_t g, const cudaGraphNode_t *deps,
                                           size_t ndeps, void *dptr)
{
    FR_CALL("cuGraphAddMemFreeNode", 0, __typeof__(cuGraphAddMemFreeNode), (CUgraphNode *)node, (CUgraph)g,
            (const CUgraphNode *)deps, ndeps, (CUdeviceptr)dptr);
}

FR_API cudaError_t cudaGraphMemAllocNodeGetParams(cudaGraphNode_t node, struct cudaMemAllocNodeParams *p)
{
    FR_CALL("cuGraphMemAllocNodeGetParams", 0, __typeof__(cuGraphMemAllocNodeGetParams), (CUgraphNode)node,
            (CUDA_MEM_ALLOC_NODE_PARAMS *)p);
}

FR_API cudaError_t cudaGraphMemFreeNodeGetParams(cudaGraphNode_t node, void *dptr)
{
    FR_CALL("cuGraphMemFreeNodeGetParams", 0, __typeof__(cuGraphMemFreeNodeGetParams), (CUgraphNode)node,
            (CUdeviceptr *)dptr);
}

FR_API cudaError_t cudaDeviceGraphMemTrim(int device)
{
    FR_CALL("cuDeviceGraphMemTrim", 0, __typeof__(cuDeviceGraphMemTrim), device);
}

FR_API cudaError_t cudaDeviceGetGraphMemAttribute(int device, enum cudaGraphMemAttributeType attr, void *value)
{
    FR_CALL("cuDeviceGetGraphMemAttribute", 0, __typeof__(cuDeviceGetGraphMemAttribute), device,
            (CUgraphMem_attribute)attr, value);
}

FR_API cudaError_t cudaDeviceSetGraphMemAttribute(int device, enum cudaGraphMemAttributeType attr, void *value)
{
    FR_CALL("cuDeviceSetGraphMemAttribute", 0, __typeof__(cuDeviceSetGraphMemAttribute), device,
            (CUgraphMem_attribute)attr, value);
}

/* What the casts above rely on, as the real runtime does. */
_Static_assert(sizeof(struct cudaMemPoolProps) == sizeof(CUmemPoolProps), "pool props differ");
_Static_assert(offsetof(struct cudaMemAllocNodeParams, bytesize) == offsetof(CUDA_MEM_ALLOC_NODE_PARAMS, bytesize) &&
                   offsetof(struct cudaMemAllocNodeParams, dptr) == offsetof(CUDA_MEM_ALLOC_NODE_PARAMS, dptr),
               "allocation node params differ");

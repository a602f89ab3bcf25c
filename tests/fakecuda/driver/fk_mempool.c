/* fk_mempool.c: stream-ordered allocation beyond the default pool, and
 * graph memory nodes, as NVIDIA's programming guide describes them.
 *
 * - cuMemAllocAsync allocates at once (the simulated device has memory to
 *   spare, so "when the stream reaches it" changes no address); on a
 *   capturing stream it becomes an allocation node and its address is
 *   the graph's, fixed across instantiations and launches.
 * - Pools (cuMemPoolCreate...) are handles with their attributes kept and
 *   reported; every pool allocates from the device's memory.
 * - Graph memory nodes (cuGraphAddMemAllocNode, cuGraphAddMemFreeNode) get
 *   their address when the node is made, as the guide says; running them
 *   is no GPU work. A free node, or a captured cuMemFreeAsync, leaves the
 *   address reserved for the graph's later launches. */
#include <stdlib.h>
#include <string.h>

#include "fk_driver.h"

#define FK_MAGIC_POOL 0x504f4f31
/* The default pool's handle (fk_memory.c hands it out). */
#define FK_DEFAULT_POOL ((CUmemoryPool)(uintptr_t)0x9001)

struct CUmemPoolHandle_st {
    uint32_t magic;
    int device;
    cuuint64_t release_threshold;
    int reuse[3]; /* CU_MEMPOOL_ATTR_REUSE_*: follow event deps, allow opportunistic, allow internal deps */
};

static struct CUmemPoolHandle_st fk_default_attrs = {FK_MAGIC_POOL, 0, 0, {1, 1, 1}};
static CUmemoryPool fk_current_pool[FK_MAX_DEVICES];

int fk_pool_valid(CUmemoryPool pool)
{
    return pool == FK_DEFAULT_POOL || (pool && pool->magic == FK_MAGIC_POOL);
}

static struct CUmemPoolHandle_st *fk_pool(CUmemoryPool pool)
{
    return pool == FK_DEFAULT_POOL ? &fk_default_attrs : pool;
}

static CUresult fk_alloc_async(CUdeviceptr *p, size_t n, CUstream hs, int pt)
{
    CHECK_CTX();
    if (!p || !fk_stream_valid(hs))
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = cuMemAlloc_v2(p, n);
    if (r != CUDA_SUCCESS)
        return r;
    struct fk_node node = {.kind = FK_NODE_MEM_ALLOC, .dst = (void *)*p, .bytes = n};
    fk_capture(fk_stream(hs, pt), &node);
    return CUDA_SUCCESS;
}

FK_API CUresult cuMemAllocAsync(CUdeviceptr *p, size_t n, CUstream s) { return fk_alloc_async(p, n, s, 0); }
FK_API CUresult cuMemAllocAsync_ptsz(CUdeviceptr *p, size_t n, CUstream s) { return fk_alloc_async(p, n, s, 1); }

FK_API CUresult cuMemPoolCreate(CUmemoryPool *pool, const CUmemPoolProps *props)
{
    CHECK_CTX();
    if (!pool || !props || props->allocType != CU_MEM_ALLOCATION_TYPE_PINNED ||
        (props->location.type != CU_MEM_LOCATION_TYPE_DEVICE && props->location.type != CU_MEM_LOCATION_TYPE_HOST))
        return CUDA_ERROR_INVALID_VALUE;
    if (props->location.type == CU_MEM_LOCATION_TYPE_DEVICE &&
        (props->location.id < 0 || props->location.id >= fk_cfg.devices))
        return CUDA_ERROR_INVALID_DEVICE;
    struct CUmemPoolHandle_st *p = calloc(1, sizeof(*p));
    if (!p)
        return CUDA_ERROR_OUT_OF_MEMORY;
    p->magic = FK_MAGIC_POOL;
    p->device = props->location.id;
    p->reuse[0] = p->reuse[1] = p->reuse[2] = 1;
    *pool = p;
    return CUDA_SUCCESS;
}

FK_API CUresult cuMemPoolDestroy(CUmemoryPool pool)
{
    if (!pool || pool == FK_DEFAULT_POOL || pool->magic != FK_MAGIC_POOL)
        return CUDA_ERROR_INVALID_VALUE;
    pool->magic = 0; /* kept: its allocations stay valid until freed, as the driver's */
    return CUDA_SUCCESS;
}

FK_API CUresult cuMemPoolSetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void *value)
{
    if (!fk_pool_valid(pool) || !value)
        return CUDA_ERROR_INVALID_VALUE;
    struct CUmemPoolHandle_st *p = fk_pool(pool);
    switch (attr) {
    case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD: p->release_threshold = *(cuuint64_t *)value; return CUDA_SUCCESS;
    case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES: p->reuse[0] = *(int *)value != 0; return CUDA_SUCCESS;
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC: p->reuse[1] = *(int *)value != 0; return CUDA_SUCCESS;
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES: p->reuse[2] = *(int *)value != 0; return CUDA_SUCCESS;
    case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:
    case CU_MEMPOOL_ATTR_USED_MEM_HIGH:
        return *(cuuint64_t *)value == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE; /* resets only */
    default:
        return CUDA_ERROR_INVALID_VALUE;
    }
}

FK_API CUresult cuMemPoolGetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void *value)
{
    if (!fk_pool_valid(pool) || !value)
        return CUDA_ERROR_INVALID_VALUE;
    struct CUmemPoolHandle_st *p = fk_pool(pool);
    switch (attr) {
    case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD: *(cuuint64_t *)value = p->release_threshold; return CUDA_SUCCESS;
    case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES: *(int *)value = p->reuse[0]; return CUDA_SUCCESS;
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC: *(int *)value = p->reuse[1]; return CUDA_SUCCESS;
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES: *(int *)value = p->reuse[2]; return CUDA_SUCCESS;
    case CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT:
    case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:
    case CU_MEMPOOL_ATTR_USED_MEM_CURRENT:
    case CU_MEMPOOL_ATTR_USED_MEM_HIGH:
        *(cuuint64_t *)value = 0; /* not tracked: allocations come from the device's memory */
        return CUDA_SUCCESS;
    default:
        return CUDA_ERROR_INVALID_VALUE;
    }
}

FK_API CUresult cuMemPoolTrimTo(CUmemoryPool pool, size_t keep)
{
    (void)keep;
    return fk_pool_valid(pool) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* Every device can reach every pool here (peers all): access is granted as asked. */
FK_API CUresult cuMemPoolSetAccess(CUmemoryPool pool, const CUmemAccessDesc *map, size_t count)
{
    return fk_pool_valid(pool) && (map || !count) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

FK_API CUresult cuMemPoolGetAccess(CUmemAccess_flags *flags, CUmemoryPool pool, CUmemLocation *loc)
{
    if (!flags || !loc || !fk_pool_valid(pool))
        return CUDA_ERROR_INVALID_VALUE;
    *flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    return CUDA_SUCCESS;
}

FK_API CUresult cuDeviceGetMemPool(CUmemoryPool *pool, CUdevice dev)
{
    if (!pool || dev < 0 || dev >= fk_cfg.devices)
        return CUDA_ERROR_INVALID_VALUE;
    *pool = fk_current_pool[dev] ? fk_current_pool[dev] : FK_DEFAULT_POOL;
    return CUDA_SUCCESS;
}

FK_API CUresult cuDeviceSetMemPool(CUdevice dev, CUmemoryPool pool)
{
    if (dev < 0 || dev >= fk_cfg.devices || !fk_pool_valid(pool))
        return CUDA_ERROR_INVALID_VALUE;
    fk_current_pool[dev] = pool == FK_DEFAULT_POOL ? NULL : pool;
    return CUDA_SUCCESS;
}

/* ---- graph memory nodes ---- */

FK_API CUresult cuGraphAddMemAllocNode(CUgraphNode *out, CUgraph g, const CUgraphNode *deps, size_t ndeps,
                                       CUDA_MEM_ALLOC_NODE_PARAMS *p)
{
    CHECK_CTX();
    if (!p || !p->bytesize || p->poolProps.allocType != CU_MEM_ALLOCATION_TYPE_PINNED)
        return CUDA_ERROR_INVALID_VALUE;
    CUdeviceptr d;
    CUresult r = cuMemAlloc_v2(&d, p->bytesize);
    if (r != CUDA_SUCCESS)
        return r;
    struct fk_node w = {.kind = FK_NODE_MEM_ALLOC, .dst = (void *)d, .bytes = p->bytesize};
    r = fk_add(out, g, deps, ndeps, &w);
    if (r != CUDA_SUCCESS) {
        cuMemFree_v2(d);
        return r;
    }
    p->dptr = d; /* fixed for the graph's life, as the guide says */
    return CUDA_SUCCESS;
}

FK_API CUresult cuGraphAddMemFreeNode(CUgraphNode *out, CUgraph g, const CUgraphNode *deps, size_t ndeps,
                                      CUdeviceptr d)
{
    CHECK_CTX();
    if (!d || fk_mem_device((uintptr_t)d) < 0)
        return CUDA_ERROR_INVALID_VALUE;
    struct fk_node w = {.kind = FK_NODE_MEM_FREE, .dst = (void *)d};
    return fk_add(out, g, deps, ndeps, &w);
}

FK_API CUresult cuGraphMemAllocNodeGetParams(CUgraphNode n, CUDA_MEM_ALLOC_NODE_PARAMS *p)
{
    if (!p || !fk_graph_node_ok(n) || n->work.kind != FK_NODE_MEM_ALLOC)
        return CUDA_ERROR_INVALID_VALUE;
    memset(p, 0, sizeof(*p));
    p->poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    p->poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    p->poolProps.location.id = fk_mem_device((uintptr_t)n->work.dst);
    p->bytesize = n->work.bytes;
    p->dptr = (CUdeviceptr)n->work.dst;
    return CUDA_SUCCESS;
}

FK_API CUresult cuGraphMemFreeNodeGetParams(CUgraphNode n, CUdeviceptr *d)
{
    if (!d || !fk_graph_node_ok(n) || n->work.kind != FK_NODE_MEM_FREE)
        return CUDA_ERROR_INVALID_VALUE;
    *d = (CUdeviceptr)n->work.dst;
    return CUDA_SUCCESS;
}

FK_API CUresult cuDeviceGraphMemTrim(CUdevice dev)
{
    return dev < 0 || dev >= fk_cfg.devices ? CUDA_ERROR_INVALID_DEVICE : CUDA_SUCCESS;
}

FK_API CUresult cuDeviceGetGraphMemAttribute(CUdevice dev, CUgraphMem_attribute attr, void *value)
{
    if (dev < 0 || dev >= fk_cfg.devices)
        return CUDA_ERROR_INVALID_DEVICE;
    if (!value || attr < CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT || attr > CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH)
        return CUDA_ERROR_INVALID_VALUE;
    *(cuuint64_t *)value = 0; /* not tracked */
    return CUDA_SUCCESS;
}

FK_API CUresult cuDeviceSetGraphMemAttribute(CUdevice dev, CUgraphMem_attribute attr, void *value)
{
    if (dev < 0 || dev >= fk_cfg.devices)
        return CUDA_ERROR_INVALID_DEVICE;
    return value && (attr == CU_GRAPH_MEM_ATTR_USED_MEM_HIGH || attr == CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH)
               ? CUDA_SUCCESS
               : CUDA_ERROR_INVALID_VALUE;
}

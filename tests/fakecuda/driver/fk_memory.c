/* fk_memory.c: the driver's allocation, copy and memset entry points.
 * Device memory is host memory here, so copies move real bytes; their
 * timing and blocking follow the timeline's rules. */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "fk_driver.h"

/* ---- memory ---- */

static CUresult fk_alloc(void **p, size_t n, int kind)
{
    CHECK_CTX();
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    if (n == 0 || n > (1ull << 40))
        return n ? CUDA_ERROR_OUT_OF_MEMORY : CUDA_ERROR_INVALID_VALUE;
    /* Device memory is host memory here, so copies move real bytes. Large
     * allocations are mapped with their pages populated now: the first copy
     * or memset into them would otherwise pay the page faults (ms for a
     * MiB on a busy machine), which a real GPU does not. */
    void *m;
    if (n >= FK_MAP_BYTES) {
        m = mmap(NULL, n, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | (n <= (256u << 20) ? MAP_POPULATE : 0), -1, 0);
        if (m == MAP_FAILED)
            return CUDA_ERROR_OUT_OF_MEMORY;
    } else if (!(m = calloc(1, n))) {
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    fk_mem_add((uintptr_t)m, n, kind, 1);
    *p = m;
    return CUDA_SUCCESS;
}

/* `sync`: freeing synchronizes with the device, as cuMemFree does on a
 * real driver; stream-ordered frees do not. Either way no queued copy may
 * still write the memory once it is freed. */
static CUresult fk_free(void *p, int want, int sync)
{
    CHECK_CTX();
    if (!p)
        return CUDA_SUCCESS;
    if (sync)
        fk_wait_gpu(fk_current_device(), fk_all_done_time(fk_current_device()));
    fk_effect_wait(fk_effect_last());
    int kind = 0;
    size_t len = 0;
    int r = fk_mem_remove((uintptr_t)p, &kind, &len);
    if (!r || (want >= 0 && kind != want && !(want == FK_MEM_DEVICE && kind == FK_MEM_MANAGED))) {
        if (r)
            fk_mem_add((uintptr_t)p, len, kind, r == 2);
        return CUDA_ERROR_INVALID_VALUE;
    }
    if (r == 2 && len >= FK_MAP_BYTES)
        munmap(p, len);
    else if (r == 2)
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
    return fk_free((void *)p, FK_MEM_DEVICE, 1);
}

FK_API CUresult cuMemAllocHost_v2(void **p, size_t n)
{
    return fk_alloc(p, n, FK_MEM_PINNED);
}

FK_API CUresult cuMemHostAlloc(void **p, size_t n, unsigned int flags)
{
    if (flags & ~(unsigned)(CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_WRITECOMBINED))
        return CUDA_ERROR_INVALID_VALUE;
    return fk_alloc(p, n, FK_MEM_PINNED);
}

FK_API CUresult cuMemFreeHost(void *p)
{
    return fk_free(p, FK_MEM_PINNED, 1);
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
    fk_effect_wait(fk_effect_last()); /* the program may free it next */
    int kind;
    size_t len = 0;
    int r = fk_mem_remove((uintptr_t)p, &kind, &len);
    if (r != 1) {
        if (r == 2)
            fk_mem_add((uintptr_t)p, len, kind, 1);
        return CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
    }
    return CUDA_SUCCESS;
}

/* Mapped (zero-copy) host memory: with unified addressing every page-locked
 * allocation is mapped, at the same address (as cudaHostAllocMapped's is on
 * a 64-bit system). */
FK_API CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr *d, void *p, unsigned int flags)
{
    CHECK_CTX();
    if (!d || flags || fk_mem_kind((uintptr_t)p) != FK_MEM_PINNED)
        return CUDA_ERROR_INVALID_VALUE;
    *d = (CUdeviceptr)p;
    return CUDA_SUCCESS;
}

FK_API CUresult cuMemHostGetFlags(unsigned int *flags, void *p)
{
    CHECK_CTX();
    if (!flags || fk_mem_kind((uintptr_t)p) != FK_MEM_PINNED)
        return CUDA_ERROR_INVALID_VALUE;
    *flags = CU_MEMHOSTALLOC_DEVICEMAP;
    return CUDA_SUCCESS;
}

FK_API CUresult cuMemGetInfo_v2(size_t *free_b, size_t *total)
{
    CHECK_CTX();
    /* What is free is what the program has not allocated on the current
     * device, less the context's own share, as nvidia-smi would say. */
    uint64_t used = fk_mem_device_used(fk_current_device()) + FK_CONTEXT_BYTES;
    if (free_b)
        *free_b = used < FK_DEVICE_BYTES ? FK_DEVICE_BYTES - used : 0;
    if (total)
        *total = FK_DEVICE_BYTES;
    return CUDA_SUCCESS;
}

/* The allocation a device pointer lies in (PyTorch's driver API asks for it). */
FK_API CUresult cuMemGetAddressRange_v2(CUdeviceptr *base, size_t *size, CUdeviceptr p)
{
    CHECK_CTX();
    uintptr_t b = 0;
    size_t n = 0;
    if (!fk_mem_range((uintptr_t)p, &b, &n))
        return CUDA_ERROR_NOT_FOUND;
    if (base)
        *base = (CUdeviceptr)b;
    if (size)
        *size = n;
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
    if (kind == FK_MEM_PAGEABLE)
        return CUDA_ERROR_INVALID_VALUE;
    int dev = fk_mem_device(p);
    switch (a) {
    case CU_POINTER_ATTRIBUTE_DEVICE_POINTER: *(CUdeviceptr *)data = p; return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_HOST_POINTER:
        if (kind == FK_MEM_DEVICE)
            return CUDA_ERROR_INVALID_VALUE;
        *(void **)data = (void *)p;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: *(int *)data = dev >= 0 ? dev : 0; return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_CONTEXT: *(CUcontext *)data = &fk_ctx[dev >= 0 ? dev : 0]; return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_MAPPED: *(int *)data = 1; return CUDA_SUCCESS;
    default: break;
    }
    return CUDA_ERROR_NOT_SUPPORTED;
}

/* The attributes' sizes, for a default value where a pointer has none. */
static size_t fk_attr_size(CUpointer_attribute a)
{
    switch (a) {
    case CU_POINTER_ATTRIBUTE_CONTEXT: case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
    case CU_POINTER_ATTRIBUTE_HOST_POINTER: case CU_POINTER_ATTRIBUTE_BUFFER_ID:
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR: case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
    case CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES: case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE:
        return 8;
    default:
        return 4;
    }
}

/* Unlike cuPointerGetAttribute, never an error for memory CUDA does not
 * know (pageable): each attribute it has no value for reads 0 (memory type
 * 0 is the runtime's cudaMemoryTypeUnregistered). */
FK_API CUresult cuPointerGetAttributes(unsigned int n, CUpointer_attribute *attrs, void **data, CUdeviceptr p)
{
    if (!attrs || !data)
        return CUDA_ERROR_INVALID_VALUE;
    for (unsigned int i = 0; i < n; i++) {
        if (!data[i])
            return CUDA_ERROR_INVALID_VALUE;
        if (cuPointerGetAttribute(data[i], attrs[i], p) != CUDA_SUCCESS)
            memset(data[i], 0, fk_attr_size(attrs[i]));
    }
    return CUDA_SUCCESS;
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

/* Whether a copy holds the host until it ends, by the driver's documented
 * rules ("API synchronization behavior"): host to host always; device to
 * device never; the synchronous calls otherwise (pageable HtoD is staged
 * chunk by chunk, pinned HtoD is synchronous, DtoH returns once done); the
 * async calls only through pageable memory (staged, or DtoH done). */
static int fk_copy_blocks(int ck, int sk, int dk, int sync)
{
    if (ck == 11)
        return 1;
    if (ck == 8 || ck == 10)
        return 0;
    if (sync)
        return 1;
    return (ck == 1 ? sk : dk) == FK_MEM_PAGEABLE;
}

/* Waits for work that blocks the host: its GPU end and its bytes; the
 * device's error if it fails first. */
static CUresult fk_block(int device, uint64_t end, uint64_t ticket)
{
    CUresult r = fk_wait_gpu(device, end);
    fk_effect_wait(ticket);
    return r;
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
    /* As the real driver does: a copy that runs past its allocation is
     * refused, not performed. */
    if (!fk_mem_fits((uintptr_t)src, bytes) || !fk_mem_fits((uintptr_t)dst, bytes))
        return CUDA_ERROR_INVALID_VALUE;
    int sk = fk_side_kind((uintptr_t)src), dk = fk_side_kind((uintptr_t)dst);
    int ck = fk_copy_kind(sk, dk);
    /* between two devices' memory: peer to peer */
    int sdev = fk_mem_device((uintptr_t)src), ddev = fk_mem_device((uintptr_t)dst);
    if (ck == 8 && sdev >= 0 && ddev >= 0 && sdev != ddev)
        ck = 10;
    struct CUstream_st *s = fk_stream(hs, pt);
    struct fk_node node = {.kind = FAKECUDA_ACT_MEMCPY, .dst = dst, .src = src, .bytes = bytes, .copy_kind = ck,
                           .src_kind = sk, .dst_kind = dk};
    if (fk_capture(s, &node))
        return CUDA_SUCCESS;
    node.blocking = fk_copy_blocks(ck, sk, dk, sync);
    uint64_t ticket = 0, end = fk_run_node(s, &node, fk_api_enter(api), &ticket);
    if (node.blocking)
        return fk_block(s->device, end, ticket);
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

/* 2D/3D: one transfer of rows, timed as one copy of all their bytes. */
CUresult fk_node_from_3d(const CUDA_MEMCPY3D *p, struct fk_node *node)
{
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    const char *src = p->srcMemoryType == CU_MEMORYTYPE_HOST ? p->srcHost : (const char *)p->srcDevice;
    char *dst = p->dstMemoryType == CU_MEMORYTYPE_HOST ? p->dstHost : (char *)p->dstDevice;
    if (!src || !dst)
        return CUDA_ERROR_INVALID_VALUE;
    size_t depth = p->Depth ? p->Depth : 1, total = p->WidthInBytes * p->Height * depth;
    size_t sh = p->srcHeight ? p->srcHeight : p->Height, dh = p->dstHeight ? p->dstHeight : p->Height;
    int sk = fk_side_kind((uintptr_t)src), dk = fk_side_kind((uintptr_t)dst), ck = fk_copy_kind(sk, dk);
    *node = (struct fk_node){.kind = FAKECUDA_ACT_MEMCPY,
                             .dst = dst + (p->dstZ * dh + p->dstY) * p->dstPitch + p->dstXInBytes,
                             .src = src + (p->srcZ * sh + p->srcY) * p->srcPitch + p->srcXInBytes,
                             .bytes = total, .width = p->WidthInBytes, .height = p->Height, .depth = depth,
                             .spitch = p->srcPitch, .dpitch = p->dstPitch, .sheight = sh, .dheight = dh,
                             .copy_kind = ck, .src_kind = sk, .dst_kind = dk};
    if (!total)
        node->width = 0;
    return CUDA_SUCCESS;
}

static CUresult fk_copy_3d(const char *api, const CUDA_MEMCPY3D *p, CUstream st, int pt, int sync)
{
    CHECK_CTX();
    if (!fk_stream_valid(st))
        return CUDA_ERROR_INVALID_VALUE;
    struct fk_node node;
    CUresult r = fk_node_from_3d(p, &node);
    if (r != CUDA_SUCCESS)
        return r;
    struct CUstream_st *s = fk_stream(st, pt);
    if (fk_capture(s, &node))
        return CUDA_SUCCESS;
    node.blocking = fk_copy_blocks(node.copy_kind, node.src_kind, node.dst_kind, sync);
    uint64_t ticket = 0, end = fk_run_node(s, &node, fk_api_enter(api), &ticket);
    if (node.blocking)
        return fk_block(s->device, end, ticket);
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
                          size_t h, CUstream hs, int pt, int sync)
{
    CHECK_CTX();
    if (!fk_stream_valid(hs))
        return CUDA_ERROR_INVALID_HANDLE;
    size_t rows = h ? h : 1;
    size_t span = h ? pitch * (rows - 1) + n * esz : n * esz;
    /* The target must be memory the driver allocated, and the whole of it. */
    if (!d || fk_mem_kind(d) == FK_MEM_PAGEABLE || !fk_mem_fits(d, span))
        return CUDA_ERROR_INVALID_VALUE;
    struct CUstream_st *s = fk_stream(hs, pt);
    struct fk_node node = {.kind = FAKECUDA_ACT_MEMSET, .dst = (void *)d, .bytes = (uint64_t)n * esz * rows,
                           .value = v, .esz = esz, .n = n, .pitch = h ? pitch : 0, .rows = rows,
                           .dst_kind = fk_side_kind(d)};
    if (fk_capture(s, &node))
        return CUDA_SUCCESS;
    /* The synchronous memsets are asynchronous to the host except on pinned
     * host memory or managed memory, where they are fully synchronous; the
     * Async ones always return at once. */
    node.blocking = sync && (node.dst_kind == FK_MEM_PINNED || node.dst_kind == FK_MEM_MANAGED);
    uint64_t ticket = 0, end = fk_run_node(s, &node, fk_api_enter(api), &ticket);
    if (node.blocking)
        return fk_block(s->device, end, ticket);
    return CUDA_SUCCESS;
}

#define FK_MEMSET(name, T, esz, pt) \
    FK_API CUresult name(CUdeviceptr d, T v, size_t n) { return fk_memset(#name, d, v, esz, n, 0, 0, NULL, pt, 1); }
#define FK_MEMSET_ASYNC(name, T, esz, pt) \
    FK_API CUresult name(CUdeviceptr d, T v, size_t n, CUstream s) { return fk_memset(#name, d, v, esz, n, 0, 0, s, pt, 0); }
#define FK_MEMSET2D(name, T, esz, pt) \
    FK_API CUresult name(CUdeviceptr d, size_t p, T v, size_t w, size_t h) { return fk_memset(#name, d, v, esz, w, p, h, NULL, pt, 1); }
#define FK_MEMSET2D_ASYNC(name, T, esz, pt) \
    FK_API CUresult name(CUdeviceptr d, size_t p, T v, size_t w, size_t h, CUstream s) { return fk_memset(#name, d, v, esz, w, p, h, s, pt, 0); }
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

/* A batch is one call: every pair runs in order on the stream under the
 * call's correlation id. */
static CUresult fk_copy_batch(CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes, size_t count, CUstream hs, int pt)
{
    CHECK_CTX();
    if (!dsts || !srcs || !sizes || !count || !fk_stream_valid(hs))
        return CUDA_ERROR_INVALID_VALUE;
    struct CUstream_st *s = fk_stream(hs, pt);
    uint32_t corr = fk_api_enter("cuMemcpyBatchAsync");
    uint64_t end = 0, ticket = 0;
    int blocks = 0;
    for (size_t i = 0; i < count; i++) {
        int sk = fk_side_kind((uintptr_t)srcs[i]), dk = fk_side_kind((uintptr_t)dsts[i]);
        int ck = fk_copy_kind(sk, dk);
        struct fk_node node = {.kind = FAKECUDA_ACT_MEMCPY, .dst = (void *)dsts[i], .src = (const void *)srcs[i],
                               .bytes = sizes[i], .copy_kind = ck, .src_kind = sk, .dst_kind = dk};
        node.blocking = fk_copy_blocks(ck, sk, dk, 0);
        blocks |= node.blocking;
        end = fk_run_node(s, &node, corr, &ticket);
    }
    if (blocks)
        return fk_block(s->device, end, ticket);
    return CUDA_SUCCESS;
}

FK_API CUresult cuMemcpyBatchAsync_v2(CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes, size_t count,
                                      CUmemcpyAttributes *attrs, size_t *attrs_idx, size_t nattrs, CUstream s)
{
    (void)attrs; (void)attrs_idx; (void)nattrs;
    return fk_copy_batch(dsts, srcs, sizes, count, s, 0);
}

FK_API CUresult cuMemcpyBatchAsync_v2_ptsz(CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes, size_t count,
                                           CUmemcpyAttributes *attrs, size_t *attrs_idx, size_t nattrs, CUstream s)
{
    (void)attrs; (void)attrs_idx; (void)nattrs;
    return fk_copy_batch(dsts, srcs, sizes, count, s, 1);
}

/* Pools: one default pool per device; pool allocations are ordinary ones. */
static struct CUmemPoolHandle_st *const fk_default_pool = (struct CUmemPoolHandle_st *)(uintptr_t)0x9001;

FK_API CUresult cuDeviceGetDefaultMemPool(CUmemoryPool *pool, CUdevice dev)
{
    if (!pool || dev < 0 || dev >= fk_cfg.devices)
        return CUDA_ERROR_INVALID_VALUE;
    *pool = fk_default_pool;
    return CUDA_SUCCESS;
}

FK_API CUresult cuMemAllocFromPoolAsync(CUdeviceptr *p, size_t n, CUmemoryPool pool, CUstream s)
{
    if ((pool != fk_default_pool && !fk_pool_valid(pool)) || !fk_stream_valid(s))
        return CUDA_ERROR_INVALID_VALUE;
    return cuMemAllocAsync(p, n, s); /* fk_mempool.c: a capture's allocation node too */
}

FK_API CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *p, size_t n, CUmemoryPool pool, CUstream s)
{
    return cuMemAllocFromPoolAsync(p, n, pool, s);
}

static CUresult fk_free_async(CUdeviceptr p, CUstream s, int pt)
{
    if (!fk_stream_valid(s))
        return CUDA_ERROR_INVALID_HANDLE;
    /* captured: a free node; the address stays the graph's (its replays use it) */
    struct fk_node node = {.kind = FK_NODE_MEM_FREE, .dst = (void *)p};
    if (fk_capture(fk_stream(s, pt), &node))
        return CUDA_SUCCESS;
    return fk_free((void *)p, FK_MEM_DEVICE, 0);
}

FK_API CUresult cuMemFreeAsync(CUdeviceptr p, CUstream s) { return fk_free_async(p, s, 0); }
FK_API CUresult cuMemFreeAsync_ptsz(CUdeviceptr p, CUstream s) { return fk_free_async(p, s, 1); }

/* fr_texture.c: channel descriptors, CUDA arrays, texture and surface
 * objects: what NVIDIA's samples call around a texture. Kernels do not
 * compute here, so a texture object only keeps what it was made with (for
 * cudaGetTextureObject*Desc); an array is device memory with rows of
 * width x element bytes, and copies to and from it are 2D copies of that
 * memory (on the timeline, as any copy). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fr_runtime.h"

#define FR_MAGIC_ARRAY 0x41525231
#define FR_MAGIC_TEX 0x54455831

struct cudaArray {
    uint32_t magic;
    struct cudaChannelFormatDesc desc;
    size_t width, height, elem; /* height 0: a 1D array */
    unsigned flags;
    char *data;                 /* device memory, rows width * elem bytes apart */
};

struct fr_tex {
    uint32_t magic;
    int surface;
    struct cudaResourceDesc res;
    struct cudaTextureDesc tex;
};

FR_API struct cudaChannelFormatDesc cudaCreateChannelDesc(int x, int y, int z, int w, enum cudaChannelFormatKind f)
{
    struct cudaChannelFormatDesc d = {x, y, z, w, f};
    return d;
}

static const struct cudaArray *fr_array(cudaArray_const_t a)
{
    return a && a->magic == FR_MAGIC_ARRAY ? a : NULL;
}

FR_API cudaError_t cudaMallocArray(cudaArray_t *out, const struct cudaChannelFormatDesc *desc, size_t width,
                                   size_t height, unsigned int flags)
{
    if (!out || !desc || !width)
        return fr_set_error(cudaErrorInvalidValue);
    int bits = desc->x + desc->y + desc->z + desc->w;
    if (bits <= 0 || bits % 8)
        return fr_set_error(cudaErrorInvalidChannelDescriptor);
    struct cudaArray *a = calloc(1, sizeof(*a));
    if (!a)
        return fr_set_error(cudaErrorMemoryAllocation);
    a->desc = *desc;
    a->width = width;
    a->height = height;
    a->elem = (size_t)bits / 8;
    a->flags = flags;
    cudaError_t e = cudaMalloc((void **)&a->data, width * a->elem * (height ? height : 1));
    if (e != cudaSuccess) {
        free(a);
        return e;
    }
    a->magic = FR_MAGIC_ARRAY;
    *out = a;
    return cudaSuccess;
}

FR_API cudaError_t cudaFreeArray(cudaArray_t a)
{
    if (!a)
        return cudaSuccess; /* as cudaFree(NULL) */
    if (!fr_array(a))
        return fr_set_error(cudaErrorInvalidValue);
    a->magic = 0;
    cudaError_t e = cudaFree(a->data);
    free(a);
    return e;
}

FR_API cudaError_t cudaGetChannelDesc(struct cudaChannelFormatDesc *desc, cudaArray_const_t array)
{
    const struct cudaArray *a = fr_array(array);
    if (!desc || !a)
        return fr_set_error(cudaErrorInvalidValue);
    *desc = a->desc;
    return cudaSuccess;
}

FR_API cudaError_t cudaArrayGetInfo(struct cudaChannelFormatDesc *desc, struct cudaExtent *extent, unsigned int *flags,
                                    cudaArray_t array)
{
    const struct cudaArray *a = fr_array(array);
    if (!a)
        return fr_set_error(cudaErrorInvalidValue);
    if (desc)
        *desc = a->desc;
    if (extent)
        *extent = (struct cudaExtent){a->width, a->height, 0};
    if (flags)
        *flags = a->flags;
    return cudaSuccess;
}

/* wOffset is in bytes, as the runtime's documentation says. */
static cudaError_t fr_array_span(const struct cudaArray *a, size_t woff, size_t hoff, size_t width, size_t height,
                                 char **at)
{
    size_t pitch = a->width * a->elem, rows = a->height ? a->height : 1;
    if (woff + width > pitch || hoff + height > rows)
        return fr_set_error(cudaErrorInvalidValue);
    *at = a->data + hoff * pitch + woff;
    return cudaSuccess;
}

FR_API cudaError_t cudaMemcpy2DToArray(cudaArray_t dst, size_t woff, size_t hoff, const void *src, size_t spitch,
                                       size_t width, size_t height, enum cudaMemcpyKind kind)
{
    const struct cudaArray *a = fr_array(dst);
    char *at = NULL;
    if (!a)
        return fr_set_error(cudaErrorInvalidValue);
    cudaError_t e = fr_array_span(a, woff, hoff, width, height, &at);
    return e ? e : cudaMemcpy2D(at, a->width * a->elem, src, spitch, width, height, kind);
}

FR_API cudaError_t cudaMemcpy2DFromArray(void *dst, size_t dpitch, cudaArray_const_t src, size_t woff, size_t hoff,
                                         size_t width, size_t height, enum cudaMemcpyKind kind)
{
    const struct cudaArray *a = fr_array(src);
    char *at = NULL;
    if (!a)
        return fr_set_error(cudaErrorInvalidValue);
    cudaError_t e = fr_array_span(a, woff, hoff, width, height, &at);
    return e ? e : cudaMemcpy2D(dst, dpitch, at, a->width * a->elem, width, height, kind);
}

/* The deprecated 1D forms: count bytes from (wOffset, hOffset) on, row by row. */
FR_API cudaError_t cudaMemcpyToArray(cudaArray_t dst, size_t woff, size_t hoff, const void *src, size_t count,
                                     enum cudaMemcpyKind kind)
{
    const struct cudaArray *a = fr_array(dst);
    char *at = NULL;
    if (!a)
        return fr_set_error(cudaErrorInvalidValue);
    size_t pitch = a->width * a->elem;
    if (woff >= pitch && count)
        return fr_set_error(cudaErrorInvalidValue);
    cudaError_t e = fr_array_span(a, 0, hoff, 0, 0, &at);
    if (e || hoff * pitch + woff + count > pitch * (a->height ? a->height : 1))
        return e ? e : fr_set_error(cudaErrorInvalidValue);
    return cudaMemcpy(at + woff, src, count, kind);
}

FR_API cudaError_t cudaMemcpyFromArray(void *dst, cudaArray_const_t src, size_t woff, size_t hoff, size_t count,
                                       enum cudaMemcpyKind kind)
{
    const struct cudaArray *a = fr_array(src);
    char *at = NULL;
    if (!a)
        return fr_set_error(cudaErrorInvalidValue);
    size_t pitch = a->width * a->elem;
    cudaError_t e = fr_array_span(a, 0, hoff, 0, 0, &at);
    if (e || hoff * pitch + woff + count > pitch * (a->height ? a->height : 1))
        return e ? e : fr_set_error(cudaErrorInvalidValue);
    return cudaMemcpy(dst, at + woff, count, kind);
}

static cudaError_t fr_object_create(unsigned long long *out, const struct cudaResourceDesc *res,
                                    const struct cudaTextureDesc *tex, int surface)
{
    if (!out || !res)
        return fr_set_error(cudaErrorInvalidValue);
    if ((res->resType == cudaResourceTypeArray && !fr_array(res->res.array.array)) ||
        (res->resType == cudaResourceTypeLinear && !res->res.linear.devPtr) ||
        (res->resType == cudaResourceTypePitch2D && !res->res.pitch2D.devPtr) || (surface && res->resType != cudaResourceTypeArray))
        return fr_set_error(cudaErrorInvalidValue);
    struct fr_tex *t = calloc(1, sizeof(*t));
    if (!t)
        return fr_set_error(cudaErrorMemoryAllocation);
    t->magic = FR_MAGIC_TEX;
    t->surface = surface;
    t->res = *res;
    if (tex)
        t->tex = *tex;
    *out = (unsigned long long)(uintptr_t)t;
    return cudaSuccess;
}

static struct fr_tex *fr_object(unsigned long long h, int surface)
{
    struct fr_tex *t = (struct fr_tex *)(uintptr_t)h;
    return t && t->magic == FR_MAGIC_TEX && t->surface == surface ? t : NULL;
}

FR_API cudaError_t cudaCreateTextureObject(cudaTextureObject_t *out, const struct cudaResourceDesc *res,
                                           const struct cudaTextureDesc *tex, const struct cudaResourceViewDesc *view)
{
    (void)view;
    if (!tex)
        return fr_set_error(cudaErrorInvalidValue);
    return fr_object_create(out, res, tex, 0);
}

FR_API cudaError_t cudaCreateSurfaceObject(cudaSurfaceObject_t *out, const struct cudaResourceDesc *res)
{
    return fr_object_create(out, res, NULL, 1);
}

static cudaError_t fr_object_destroy(unsigned long long h, int surface)
{
    struct fr_tex *t = fr_object(h, surface);
    if (!t)
        return fr_set_error(cudaErrorInvalidValue);
    t->magic = 0;
    free(t);
    return cudaSuccess;
}

FR_API cudaError_t cudaDestroyTextureObject(cudaTextureObject_t h) { return fr_object_destroy(h, 0); }
FR_API cudaError_t cudaDestroySurfaceObject(cudaSurfaceObject_t h) { return fr_object_destroy(h, 1); }

FR_API cudaError_t cudaGetTextureObjectResourceDesc(struct cudaResourceDesc *res, cudaTextureObject_t h)
{
    struct fr_tex *t = fr_object(h, 0);
    if (!t || !res)
        return fr_set_error(cudaErrorInvalidValue);
    *res = t->res;
    return cudaSuccess;
}

FR_API cudaError_t cudaGetTextureObjectTextureDesc(struct cudaTextureDesc *tex, cudaTextureObject_t h)
{
    struct fr_tex *t = fr_object(h, 0);
    if (!t || !tex)
        return fr_set_error(cudaErrorInvalidValue);
    *tex = t->tex;
    return cudaSuccess;
}

FR_API cudaError_t cudaGetSurfaceObjectResourceDesc(struct cudaResourceDesc *res, cudaSurfaceObject_t h)
{
    struct fr_tex *t = fr_object(h, 1);
    if (!t || !res)
        return fr_set_error(cudaErrorInvalidValue);
    *res = t->res;
    return cudaSuccess;
}

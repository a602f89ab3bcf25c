/* sim_mempool: what NVIDIA's samples call beyond plain allocation, each
 * step's result printed as "name value" (0: success, else the error):
 *   textures: a channel descriptor, a 64 x 16 float array filled and read
 *     back (bytes compared), a texture and a surface object over it;
 *   pools: a pool made, its release threshold set and read back, made the
 *     device's, an allocation from it and one from cudaMallocAsync, each
 *     memset and freed on a stream;
 *   capture_pool(): a capture of cudaMallocAsync, a memset of 7s, a kernel,
 *     a copy back to pinned memory and cudaFreeAsync, launched twice (the
 *     copy's bytes are checked after each);
 *   build_mem_nodes(): an allocation node, a memset node on its address and
 *     a free node added by hand, launched once. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cuda_runtime_api.h>
#include "fakecuda.h"

#define KB 1024
#define CAP_BYTES (1 << 20)

static void say(const char *name, long v)
{
    printf("%s %ld\n", name, v);
}

static void textures(void)
{
    struct cudaChannelFormatDesc d = cudaCreateChannelDesc(32, 0, 0, 0, cudaChannelFormatKindFloat);
    say("channel_bits", d.x + d.y + d.z + d.w);
    cudaArray_t a;
    say("malloc_array", cudaMallocArray(&a, &d, 64, 16, 0));
    float in[16][64], out[16][64];
    for (int y = 0; y < 16; y++)
        for (int x = 0; x < 64; x++)
            in[y][x] = (float)(y * 64 + x);
    say("to_array", cudaMemcpy2DToArray(a, 0, 0, in, sizeof(in[0]), sizeof(in[0]), 16, cudaMemcpyHostToDevice));
    memset(out, 0, sizeof(out));
    say("from_array", cudaMemcpy2DFromArray(out, sizeof(out[0]), a, 0, 0, sizeof(out[0]), 16, cudaMemcpyDeviceToHost));
    say("array_bytes_equal", memcmp(in, out, sizeof(in)) == 0);
    struct cudaResourceDesc res;
    memset(&res, 0, sizeof(res));
    res.resType = cudaResourceTypeArray;
    res.res.array.array = a;
    struct cudaTextureDesc td;
    memset(&td, 0, sizeof(td));
    td.filterMode = cudaFilterModeLinear;
    td.normalizedCoords = 1;
    cudaTextureObject_t t;
    say("texture", cudaCreateTextureObject(&t, &res, &td, NULL));
    struct cudaTextureDesc back;
    say("texture_desc", cudaGetTextureObjectTextureDesc(&back, t));
    say("texture_desc_kept", back.filterMode == cudaFilterModeLinear && back.normalizedCoords == 1);
    cudaSurfaceObject_t s;
    say("surface", cudaCreateSurfaceObject(&s, &res));
    say("destroy", cudaDestroyTextureObject(t) | cudaDestroySurfaceObject(s) | cudaFreeArray(a));
}

static void pools(cudaStream_t st)
{
    struct cudaMemPoolProps props;
    memset(&props, 0, sizeof(props));
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = 0;
    cudaMemPool_t pool, cur;
    say("pool_create", cudaMemPoolCreate(&pool, &props));
    unsigned long long threshold = 64ull << 20, got = 0;
    say("pool_set", cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold));
    say("pool_get", cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &got));
    say("pool_threshold_kept", got == threshold);
    say("pool_set_device", cudaDeviceSetMemPool(0, pool));
    say("pool_get_device", cudaDeviceGetMemPool(&cur, 0));
    say("pool_is_device", cur == pool);
    void *p = NULL, *q = NULL;
    say("from_pool", cudaMallocFromPoolAsync(&p, 64 * KB, pool, st));
    say("malloc_async", cudaMallocAsync(&q, 64 * KB, st));
    say("memsets", cudaMemsetAsync(p, 1, 64 * KB, st) | cudaMemsetAsync(q, 2, 64 * KB, st));
    say("frees", cudaFreeAsync(p, st) | cudaFreeAsync(q, st));
    say("pool_sync", cudaStreamSynchronize(st));
}

__attribute__((noinline)) static cudaGraph_t capture_pool(cudaStream_t st, unsigned char *pinned)
{
    cudaGraph_t g = NULL;
    void *p = NULL, *args[] = {NULL};
    say("capture_begin", cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal));
    say("capture_malloc", cudaMallocAsync(&p, CAP_BYTES, st));
    say("capture_memset", cudaMemsetAsync(p, 7, CAP_BYTES, st));
    say("capture_kernel", cudaLaunchKernel(fakecuda_runtime_kernel("pool_k", 0), (dim3){4, 1, 1}, (dim3){64, 1, 1},
                                           args, 0, st));
    say("capture_copy", cudaMemcpyAsync(pinned, p, 4 * KB, cudaMemcpyDeviceToHost, st));
    say("capture_free", cudaFreeAsync(p, st));
    say("capture_end", cudaStreamEndCapture(st, &g));
    return g;
}

__attribute__((noinline)) static cudaGraph_t build_mem_nodes(void)
{
    cudaGraph_t g;
    cudaGraphNode_t a, m, f;
    say("build_create", cudaGraphCreate(&g, 0));
    struct cudaMemAllocNodeParams ap;
    memset(&ap, 0, sizeof(ap));
    ap.poolProps.allocType = cudaMemAllocationTypePinned;
    ap.poolProps.location.type = cudaMemLocationTypeDevice;
    ap.bytesize = 256 * KB;
    say("build_alloc_node", cudaGraphAddMemAllocNode(&a, g, NULL, 0, &ap));
    say("build_alloc_address", ap.dptr != NULL);
    struct cudaMemsetParams mp = {ap.dptr, 0, 3, 1, 256 * KB, 1};
    say("build_memset_node", cudaGraphAddMemsetNode(&m, g, &a, 1, &mp));
    say("build_free_node", cudaGraphAddMemFreeNode(&f, g, &m, 1, ap.dptr));
    struct cudaMemAllocNodeParams back;
    void *freed = NULL;
    say("build_params", cudaGraphMemAllocNodeGetParams(a, &back) | cudaGraphMemFreeNodeGetParams(f, &freed));
    say("build_params_kept", back.dptr == ap.dptr && back.bytesize == ap.bytesize && freed == ap.dptr);
    return g;
}

int main(void)
{
    cudaStream_t st;
    if (cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking) != cudaSuccess)
        return 2;
    textures();
    pools(st);
    unsigned char *pinned;
    if (cudaMallocHost((void **)&pinned, 4 * KB) != cudaSuccess)
        return 3;
    cudaGraph_t g = capture_pool(st, pinned);
    size_t n = 0;
    say("capture_nodes", cudaGraphGetNodes(g, NULL, &n) == cudaSuccess ? (long)n : -1);
    cudaGraphExec_t x;
    say("capture_instantiate", cudaGraphInstantiate(&x, g, 0));
    for (int i = 0; i < 2; i++) {
        memset(pinned, 0, 4 * KB);
        say(i ? "capture_launch_2" : "capture_launch_1", cudaGraphLaunch(x, st) | cudaStreamSynchronize(st));
        int sevens = 0;
        for (int j = 0; j < 4 * KB; j++)
            sevens += pinned[j] == 7;
        say(i ? "capture_bytes_2" : "capture_bytes_1", sevens);
    }
    cudaGraph_t h = build_mem_nodes();
    cudaGraphExec_t y;
    say("build_launch", cudaGraphInstantiate(&y, h, 0) | cudaGraphLaunch(y, st) | cudaStreamSynchronize(st));
    return 0;
}

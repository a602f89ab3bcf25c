/* fr_graph.c: stream capture and CUDA Graphs, over the driver's. */
#include <string.h>

#include "fr_runtime.h"

FR_API cudaError_t cudaStreamBeginCapture(cudaStream_t s, enum cudaStreamCaptureMode mode)
{
    READY();
    RET(fr_drv(0)->streamBeginCapture(s, (CUstreamCaptureMode)mode));
}

FR_API cudaError_t cudaStreamBeginCapture_ptsz(cudaStream_t s, enum cudaStreamCaptureMode mode)
{
    READY();
    RET(fr_drv(1)->streamBeginCapture(s, (CUstreamCaptureMode)mode));
}

FR_API cudaError_t cudaStreamEndCapture(cudaStream_t s, cudaGraph_t *g)
{
    READY();
    RET(fr_drv(0)->streamEndCapture(s, (CUgraph *)g));
}

FR_API cudaError_t cudaStreamEndCapture_ptsz(cudaStream_t s, cudaGraph_t *g)
{
    READY();
    RET(fr_drv(1)->streamEndCapture(s, (CUgraph *)g));
}

FR_API cudaError_t cudaStreamIsCapturing(cudaStream_t s, enum cudaStreamCaptureStatus *st)
{
    READY();
    RET(fr_drv(0)->streamIsCapturing(s, (CUstreamCaptureStatus *)st));
}

FR_API cudaError_t cudaStreamIsCapturing_ptsz(cudaStream_t s, enum cudaStreamCaptureStatus *st)
{
    READY();
    RET(fr_drv(1)->streamIsCapturing(s, (CUstreamCaptureStatus *)st));
}

FR_API cudaError_t cudaGraphInstantiate(cudaGraphExec_t *e, cudaGraph_t g, unsigned long long flags)
{
    READY();
    RET(fr_drv(0)->graphInstantiate((CUgraphExec *)e, (CUgraph)g, flags));
}

FR_API cudaError_t cudaGraphLaunch(cudaGraphExec_t e, cudaStream_t s)
{
    READY();
    fr_rt_enter("cudaGraphLaunch_v10000");
    CUresult r = fr_drv(0)->graphLaunch((CUgraphExec)e, s);
    fr_rt_leave();
    RET(r);
}

FR_API cudaError_t cudaGraphLaunch_ptsz(cudaGraphExec_t e, cudaStream_t s)
{
    READY();
    fr_rt_enter("cudaGraphLaunch_v10000");
    CUresult r = fr_drv(1)->graphLaunch((CUgraphExec)e, s);
    fr_rt_leave();
    RET(r);
}

FR_API cudaError_t cudaGraphExecDestroy(cudaGraphExec_t e)
{
    READY();
    RET(fr_drv(0)->graphExecDestroy((CUgraphExec)e));
}

FR_API cudaError_t cudaGraphDestroy(cudaGraph_t g)
{
    READY();
    RET(fr_drv(0)->graphDestroy((CUgraph)g));
}

/* ---- graphs built node by node ---- */

FR_API cudaError_t cudaGraphInstantiateWithFlags(cudaGraphExec_t *e, cudaGraph_t g, unsigned long long flags)
{
    READY();
    RET(fr_drv(0)->graphInstantiate((CUgraphExec *)e, (CUgraph)g, flags));
}

FR_API cudaError_t cudaGraphCreate(cudaGraph_t *g, unsigned int flags)
{
    READY();
    RET(fr_drv(0)->graphCreate((CUgraph *)g, flags));
}

/* The runtime's kernel node names the kernel by its host stub. */
static cudaError_t fr_kernel_params(const struct cudaKernelNodeParams *p, CUDA_KERNEL_NODE_PARAMS *k)
{
    if (!p)
        return cudaErrorInvalidValue;
    CUkernel kern = fr_kernel_for(p->func);
    if (!kern)
        return cudaErrorInvalidDeviceFunction;
    memset(k, 0, sizeof(*k));
    k->func = (CUfunction)kern;
    k->gridDimX = p->gridDim.x;
    k->gridDimY = p->gridDim.y;
    k->gridDimZ = p->gridDim.z;
    k->blockDimX = p->blockDim.x;
    k->blockDimY = p->blockDim.y;
    k->blockDimZ = p->blockDim.z;
    k->sharedMemBytes = p->sharedMemBytes;
    k->kernelParams = p->kernelParams;
    k->extra = p->extra;
    return cudaSuccess;
}

FR_API cudaError_t cudaGraphAddKernelNode(cudaGraphNode_t *n, cudaGraph_t g, const cudaGraphNode_t *deps,
                                          size_t ndeps, const struct cudaKernelNodeParams *p)
{
    READY();
    CUDA_KERNEL_NODE_PARAMS k;
    cudaError_t e = fr_kernel_params(p, &k);
    if (e)
        return fr_set_error(e);
    RET(fr_drv(0)->graphAddKernelNode((CUgraphNode *)n, (CUgraph)g, (const CUgraphNode *)deps, ndeps, &k));
}

FR_API cudaError_t cudaGraphKernelNodeSetParams(cudaGraphNode_t n, const struct cudaKernelNodeParams *p)
{
    READY();
    CUDA_KERNEL_NODE_PARAMS k;
    cudaError_t e = fr_kernel_params(p, &k);
    if (e)
        return fr_set_error(e);
    RET(fr_drv(0)->graphKernelNodeSetParams((CUgraphNode)n, &k));
}

FR_API cudaError_t cudaGraphExecKernelNodeSetParams(cudaGraphExec_t x, cudaGraphNode_t n,
                                                    const struct cudaKernelNodeParams *p)
{
    READY();
    CUDA_KERNEL_NODE_PARAMS k;
    cudaError_t e = fr_kernel_params(p, &k);
    if (e)
        return fr_set_error(e);
    RET(fr_drv(0)->graphExecKernelNodeSetParams((CUgraphExec)x, (CUgraphNode)n, &k));
}

FR_API cudaError_t cudaGraphAddMemcpyNode(cudaGraphNode_t *n, cudaGraph_t g, const cudaGraphNode_t *deps,
                                          size_t ndeps, const struct cudaMemcpy3DParms *p)
{
    READY();
    CUDA_MEMCPY3D c;
    if (!fr_memcpy3d_params(p, &c))
        return fr_set_error(cudaErrorInvalidValue);
    RET(fr_drv(0)->graphAddMemcpyNode((CUgraphNode *)n, (CUgraph)g, (const CUgraphNode *)deps, ndeps, &c, NULL));
}

struct cudaMemcpy3DParms fr_memcpy1d_parms(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
    struct cudaMemcpy3DParms p;
    memset(&p, 0, sizeof(p));
    p.srcPtr = (struct cudaPitchedPtr){(void *)src, count, count, 1};
    p.dstPtr = (struct cudaPitchedPtr){dst, count, count, 1};
    p.extent = (struct cudaExtent){count, 1, 1};
    p.kind = kind;
    return p;
}

FR_API cudaError_t cudaGraphAddMemcpyNode1D(cudaGraphNode_t *n, cudaGraph_t g, const cudaGraphNode_t *deps,
                                            size_t ndeps, void *dst, const void *src, size_t count,
                                            enum cudaMemcpyKind kind)
{
    struct cudaMemcpy3DParms p = fr_memcpy1d_parms(dst, src, count, kind);
    return cudaGraphAddMemcpyNode(n, g, deps, ndeps, &p);
}

FR_API cudaError_t cudaGraphAddMemsetNode(cudaGraphNode_t *n, cudaGraph_t g, const cudaGraphNode_t *deps,
                                          size_t ndeps, const struct cudaMemsetParams *p)
{
    READY();
    if (!p)
        return fr_set_error(cudaErrorInvalidValue);
    CUDA_MEMSET_NODE_PARAMS m = {(CUdeviceptr)p->dst, p->pitch, p->value, p->elementSize, p->width, p->height};
    RET(fr_drv(0)->graphAddMemsetNode((CUgraphNode *)n, (CUgraph)g, (const CUgraphNode *)deps, ndeps, &m, NULL));
}

FR_API cudaError_t cudaGraphAddHostNode(cudaGraphNode_t *n, cudaGraph_t g, const cudaGraphNode_t *deps,
                                        size_t ndeps, const struct cudaHostNodeParams *p)
{
    READY();
    if (!p)
        return fr_set_error(cudaErrorInvalidValue);
    CUDA_HOST_NODE_PARAMS h = {p->fn, p->userData};
    RET(fr_drv(0)->graphAddHostNode((CUgraphNode *)n, (CUgraph)g, (const CUgraphNode *)deps, ndeps, &h));
}

FR_API cudaError_t cudaGraphAddEmptyNode(cudaGraphNode_t *n, cudaGraph_t g, const cudaGraphNode_t *deps,
                                         size_t ndeps)
{
    READY();
    RET(fr_drv(0)->graphAddEmptyNode((CUgraphNode *)n, (CUgraph)g, (const CUgraphNode *)deps, ndeps));
}

/* The runtime's node types are numbered as the driver's. */
FR_API cudaError_t cudaGraphNodeGetType(cudaGraphNode_t n, enum cudaGraphNodeType *type)
{
    READY();
    RET(fr_drv(0)->graphNodeGetType((CUgraphNode)n, (CUgraphNodeType *)type));
}

FR_API cudaError_t cudaGraphGetNodes(cudaGraph_t g, cudaGraphNode_t *nodes, size_t *num)
{
    READY();
    RET(fr_drv(0)->graphGetNodes((CUgraph)g, (CUgraphNode *)nodes, num));
}

FR_API cudaError_t cudaGraphClone(cudaGraph_t *out, cudaGraph_t g)
{
    READY();
    RET(fr_drv(0)->graphClone((CUgraph *)out, (CUgraph)g));
}

/* The runtime's update result (cudaGraphExecUpdateResultInfo) has the
 * driver's layout and numbering. */
FR_API cudaError_t cudaGraphExecUpdate(cudaGraphExec_t x, cudaGraph_t g, cudaGraphExecUpdateResultInfo *info)
{
    READY();
    RET(fr_drv(0)->graphExecUpdate((CUgraphExec)x, (CUgraph)g, (CUgraphExecUpdateResultInfo *)info));
}

FR_API cudaError_t cudaGraphUpload(cudaGraphExec_t x, cudaStream_t s)
{
    READY();
    RET(fr_drv(0)->graphUpload((CUgraphExec)x, s));
}

FR_API cudaError_t cudaGraphUpload_ptsz(cudaGraphExec_t x, cudaStream_t s)
{
    READY();
    RET(fr_drv(1)->graphUpload((CUgraphExec)x, s));
}

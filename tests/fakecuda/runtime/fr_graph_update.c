/* fr_graph_update.c: cudaGraphExec{Memcpy,Memcpy1D,Memset,Host}NodeSetParams,
 * over the driver's (fetched through cuGetProcAddress, as every entry
 * point), with the parameters converted as cudaGraphAdd*Node converts them. */
#include <string.h>

#include "fr_runtime.h"

static void *fr_update_entry(const char *name)
{
    void *fn = NULL;
    CUdriverProcAddressQueryResult st;
    return fr_drv(0)->getProcAddress(name, &fn, 13000, 0, &st) == CUDA_SUCCESS ? fn : NULL;
}

FR_API cudaError_t cudaGraphExecMemcpyNodeSetParams(cudaGraphExec_t e, cudaGraphNode_t n,
                                                    const struct cudaMemcpy3DParms *p)
{
    READY();
    __typeof__(cuGraphExecMemcpyNodeSetParams) *f = fr_update_entry("cuGraphExecMemcpyNodeSetParams");
    CUDA_MEMCPY3D c;
    if (!f)
        return fr_set_error(cudaErrorNotSupported);
    if (!fr_memcpy3d_params(p, &c))
        return fr_set_error(cudaErrorInvalidValue);
    RET(f((CUgraphExec)e, (CUgraphNode)n, &c, NULL));
}

FR_API cudaError_t cudaGraphExecMemcpyNodeSetParams1D(cudaGraphExec_t e, cudaGraphNode_t n, void *dst,
                                                      const void *src, size_t count, enum cudaMemcpyKind kind)
{
    struct cudaMemcpy3DParms p = fr_memcpy1d_parms(dst, src, count, kind);
    return cudaGraphExecMemcpyNodeSetParams(e, n, &p);
}

FR_API cudaError_t cudaGraphExecMemsetNodeSetParams(cudaGraphExec_t e, cudaGraphNode_t n,
                                                    const struct cudaMemsetParams *p)
{
    READY();
    __typeof__(cuGraphExecMemsetNodeSetParams) *f = fr_update_entry("cuGraphExecMemsetNodeSetParams");
    if (!f)
        return fr_set_error(cudaErrorNotSupported);
    if (!p)
        return fr_set_error(cudaErrorInvalidValue);
    CUDA_MEMSET_NODE_PARAMS m = {(CUdeviceptr)p->dst, p->pitch, p->value, p->elementSize, p->width, p->height};
    RET(f((CUgraphExec)e, (CUgraphNode)n, &m, NULL));
}

FR_API cudaError_t cudaGraphExecHostNodeSetParams(cudaGraphExec_t e, cudaGraphNode_t n,
                                                  const struct cudaHostNodeParams *p)
{
    READY();
    __typeof__(cuGraphExecHostNodeSetParams) *f = fr_update_entry("cuGraphExecHostNodeSetParams");
    if (!f)
        return fr_set_error(cudaErrorNotSupported);
    if (!p)
        return fr_set_error(cudaErrorInvalidValue);
    CUDA_HOST_NODE_PARAMS h = {p->fn, p->userData};
    RET(f((CUgraphExec)e, (CUgraphNode)n, &h));
}

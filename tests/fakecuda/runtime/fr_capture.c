/* fr_capture.c: the runtime's stream capture queries and modes, over the
 * driver's (cuStreamGetCaptureInfo, cuThreadExchangeStreamCaptureMode), as
 * PyTorch's CUDA graphs and caching allocator ask them. */
#include "fr_runtime.h"

static cudaError_t fr_capture_info(int pt, cudaStream_t s, enum cudaStreamCaptureStatus *st, unsigned long long *id,
                                   cudaGraph_t *graph, const cudaGraphNode_t **deps,
                                   const cudaGraphEdgeData **edges, size_t *ndeps)
{
    READY();
    cuuint64_t cid = 0;
    CUresult r = fr_drv(pt)->streamGetCaptureInfo(s, (CUstreamCaptureStatus *)st, &cid, (CUgraph *)graph,
                                                  (const CUgraphNode **)deps, (const CUgraphEdgeData **)edges,
                                                  ndeps);
    if (r == CUDA_SUCCESS && id)
        *id = cid;
    RET(r);
}

FR_API cudaError_t cudaStreamGetCaptureInfo(cudaStream_t s, enum cudaStreamCaptureStatus *st, unsigned long long *id,
                                            cudaGraph_t *graph, const cudaGraphNode_t **deps,
                                            const cudaGraphEdgeData **edges, size_t *ndeps)
{
    return fr_capture_info(0, s, st, id, graph, deps, edges, ndeps);
}

FR_API cudaError_t cudaStreamGetCaptureInfo_ptsz(cudaStream_t s, enum cudaStreamCaptureStatus *st,
                                                 unsigned long long *id, cudaGraph_t *graph,
                                                 const cudaGraphNode_t **deps, const cudaGraphEdgeData **edges,
                                                 size_t *ndeps)
{
    return fr_capture_info(1, s, st, id, graph, deps, edges, ndeps);
}

FR_API cudaError_t cudaThreadExchangeStreamCaptureMode(enum cudaStreamCaptureMode *mode)
{
    READY();
    RET(fr_drv(0)->threadExchangeStreamCaptureMode((CUstreamCaptureMode *)mode));
}

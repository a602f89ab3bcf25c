/* fr_graph.c: stream capture and CUDA Graphs, over the driver's. */
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
    RET(fr_drv(0)->graphLaunch((CUgraphExec)e, s));
}

FR_API cudaError_t cudaGraphLaunch_ptsz(cudaGraphExec_t e, cudaStream_t s)
{
    READY();
    RET(fr_drv(1)->graphLaunch((CUgraphExec)e, s));
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

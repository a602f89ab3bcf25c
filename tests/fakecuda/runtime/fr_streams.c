/* fr_streams.c: streams, events and the calls that wait on them. */
#include "fr_runtime.h"


FR_API cudaError_t cudaStreamCreate(cudaStream_t *s)
{
    READY();
    RET(fr_drv(0)->streamCreate(s, 0));
}

FR_API cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned int flags)
{
    READY();
    RET(fr_drv(0)->streamCreate(s, flags & cudaStreamNonBlocking ? CU_STREAM_NON_BLOCKING : 0));
}

FR_API cudaError_t cudaStreamCreateWithPriority(cudaStream_t *s, unsigned int flags, int prio)
{
    READY();
    RET(fr_drv(0)->streamCreateWithPriority(s, flags & cudaStreamNonBlocking ? CU_STREAM_NON_BLOCKING : 0, prio));
}

FR_API cudaError_t cudaStreamDestroy(cudaStream_t s)
{
    READY();
    RET(fr_drv(0)->streamDestroy(s));
}

FR_API cudaError_t cudaStreamSynchronize(cudaStream_t s)
{
    READY();
    fr_rt_enter("cudaStreamSynchronize_v3020");
    CUresult r = fr_drv(0)->streamSynchronize(s);
    fr_rt_leave();
    RET(r);
}

FR_API cudaError_t cudaStreamSynchronize_ptsz(cudaStream_t s)
{
    READY();
    fr_rt_enter("cudaStreamSynchronize_v3020");
    CUresult r = fr_drv(1)->streamSynchronize(s);
    fr_rt_leave();
    RET(r);
}

FR_API cudaError_t cudaStreamQuery(cudaStream_t s)
{
    READY();
    RET(fr_drv(0)->streamQuery(s));
}

FR_API cudaError_t cudaStreamQuery_ptsz(cudaStream_t s)
{
    READY();
    RET(fr_drv(1)->streamQuery(s));
}

FR_API cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned int flags)
{
    READY();
    RET(fr_drv(0)->streamWaitEvent(s, e, flags));
}

FR_API cudaError_t cudaStreamWaitEvent_ptsz(cudaStream_t s, cudaEvent_t e, unsigned int flags)
{
    READY();
    RET(fr_drv(1)->streamWaitEvent(s, e, flags));
}

FR_API cudaError_t cudaLaunchHostFunc(cudaStream_t s, cudaHostFn_t fn, void *data)
{
    READY();
    RET(fr_drv(0)->launchHostFunc(s, fn, data));
}

FR_API cudaError_t cudaLaunchHostFunc_ptsz(cudaStream_t s, cudaHostFn_t fn, void *data)
{
    READY();
    RET(fr_drv(1)->launchHostFunc(s, fn, data));
}

FR_API cudaError_t cudaEventCreate(cudaEvent_t *e)
{
    READY();
    RET(fr_drv(0)->eventCreate(e, 0));
}

FR_API cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned int flags)
{
    READY();
    RET(fr_drv(0)->eventCreate(e, flags));
}

FR_API cudaError_t cudaEventDestroy(cudaEvent_t e)
{
    READY();
    RET(fr_drv(0)->eventDestroy(e));
}

FR_API cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s)
{
    READY();
    RET(fr_drv(0)->eventRecord(e, s));
}

FR_API cudaError_t cudaEventRecord_ptsz(cudaEvent_t e, cudaStream_t s)
{
    READY();
    RET(fr_drv(1)->eventRecord(e, s));
}

FR_API cudaError_t cudaEventRecordWithFlags(cudaEvent_t e, cudaStream_t s, unsigned int flags)
{
    (void)flags;
    return cudaEventRecord(e, s);
}

FR_API cudaError_t cudaEventRecordWithFlags_ptsz(cudaEvent_t e, cudaStream_t s, unsigned int flags)
{
    (void)flags;
    return cudaEventRecord_ptsz(e, s);
}

FR_API cudaError_t cudaEventSynchronize(cudaEvent_t e)
{
    READY();
    fr_rt_enter("cudaEventSynchronize_v3020");
    CUresult r = fr_drv(0)->eventSynchronize(e);
    fr_rt_leave();
    RET(r);
}

FR_API cudaError_t cudaEventQuery(cudaEvent_t e)
{
    READY();
    RET(fr_drv(0)->eventQuery(e));
}

FR_API cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t a, cudaEvent_t b)
{
    READY();
    RET(fr_drv(0)->eventElapsedTime(ms, a, b));
}

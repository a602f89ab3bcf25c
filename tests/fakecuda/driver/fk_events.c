/* fk_events.c: events: created with their flags (timing or not, blocking
 * sync, interprocess), recorded on a stream, waited for, queried, and
 * timed against each other (stream waits on them: fk_api.c). */
#include <stdlib.h>

#include "fk_driver.h"

FK_API CUresult cuEventCreate(CUevent *e, unsigned int flags)
{
    CHECK_CTX();
    if (!e || (flags & ~(unsigned)(CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING | CU_EVENT_INTERPROCESS)))
        return CUDA_ERROR_INVALID_VALUE;
    /* an interprocess event must not time (cuda.h) */
    if ((flags & CU_EVENT_INTERPROCESS) && !(flags & CU_EVENT_DISABLE_TIMING))
        return CUDA_ERROR_INVALID_VALUE;
    struct CUevent_st *ev = calloc(1, sizeof(*ev));
    if (!ev)
        return CUDA_ERROR_OUT_OF_MEMORY;
    ev->magic = FK_MAGIC_EVENT;
    ev->flags = flags;
    *e = ev;
    return CUDA_SUCCESS;
}

FK_API CUresult cuEventDestroy_v2(CUevent e)
{
    if (!e || e->magic != FK_MAGIC_EVENT)
        return CUDA_ERROR_INVALID_HANDLE;
    e->magic = 0;
    return CUDA_SUCCESS;
}

static CUresult fk_event_rec(CUevent e, CUstream s, int pt)
{
    CHECK_CTX();
    if (!e || e->magic != FK_MAGIC_EVENT || !fk_stream_valid(s))
        return CUDA_ERROR_INVALID_HANDLE;
    /* recorded into a capture, it is the capture's edge, not a time */
    if (!fk_capture_event_record(e, fk_stream(s, pt)))
        fk_event_record(e, fk_stream(s, pt));
    return CUDA_SUCCESS;
}

FK_API CUresult cuEventRecord(CUevent e, CUstream s) { return fk_event_rec(e, s, 0); }
FK_API CUresult cuEventRecord_ptsz(CUevent e, CUstream s) { return fk_event_rec(e, s, 1); }
FK_API CUresult cuEventRecordWithFlags(CUevent e, CUstream s, unsigned f) { (void)f; return fk_event_rec(e, s, 0); }
FK_API CUresult cuEventRecordWithFlags_ptsz(CUevent e, CUstream s, unsigned f) { (void)f; return fk_event_rec(e, s, 1); }

FK_API CUresult cuEventSynchronize(CUevent e)
{
    CHECK_CTX();
    if (!e || e->magic != FK_MAGIC_EVENT)
        return CUDA_ERROR_INVALID_HANDLE;
    uint64_t t0 = fakecuda_now_ns();
    uint32_t corr = fk_api_enter("cuEventSynchronize");
    CUresult r = CUDA_SUCCESS;
    if (e->recorded) {
        r = fk_wait_gpu(fk_current_device(), e->time);
        fk_effect_wait(e->effect);
    }
    fk_emit_sync(corr, 1, 0, t0);
    return r;
}

FK_API CUresult cuEventQuery(CUevent e)
{
    if (!e || e->magic != FK_MAGIC_EVENT)
        return CUDA_ERROR_INVALID_HANDLE;
    return !e->recorded || (fakecuda_now_ns() >= e->time && fk_effect_done(e->effect)) ? CUDA_SUCCESS
                                                                                        : CUDA_ERROR_NOT_READY;
}

FK_API CUresult cuEventElapsedTime_v2(float *ms, CUevent a, CUevent b)
{
    if (!ms || !a || !b || a->magic != FK_MAGIC_EVENT || b->magic != FK_MAGIC_EVENT)
        return CUDA_ERROR_INVALID_HANDLE;
    /* events created without timing, or never recorded, have no time */
    if (!a->recorded || !b->recorded || ((a->flags | b->flags) & CU_EVENT_DISABLE_TIMING))
        return CUDA_ERROR_INVALID_HANDLE;
    uint64_t now = fakecuda_now_ns();
    if (now < a->time || now < b->time)
        return CUDA_ERROR_NOT_READY;
    *ms = (float)((double)((int64_t)b->time - (int64_t)a->time) / 1e6);
    return CUDA_SUCCESS;
}

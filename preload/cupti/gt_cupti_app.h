/* gt_cupti_app.h: the program's own calls to CUPTI's Activity API, beside
 * the tracer's (gt_cupti_share.c). The hooks (hot/gt_hooks.def) hand each
 * call here with the program's own CUPTI function (`real`, NULL when none
 * was found): while the tracer holds CUPTI's one set of buffer callbacks,
 * the call is answered here; otherwise it goes to `real`, and what it set
 * is remembered for when the tracer takes over. */
#ifndef GT_CUPTI_APP_H
#define GT_CUPTI_APP_H

#include <stdint.h>

#include <cupti.h>

CUptiResult gt_cupti_app_register(void *real, CUpti_BuffersCallbackRequestFunc req,
                                  CUpti_BuffersCallbackCompleteFunc done);
CUptiResult gt_cupti_app_enable(void *real, CUpti_ActivityKind kind, int on);
CUptiResult gt_cupti_app_enable_context(void *real, CUcontext ctx, CUpti_ActivityKind kind, int on);
CUptiResult gt_cupti_app_flush_all(void *real, uint32_t flag);
CUptiResult gt_cupti_app_flush(void *real, CUcontext ctx, uint32_t stream, uint32_t flag);
CUptiResult gt_cupti_app_flush_period(void *real, uint32_t ms);
CUptiResult gt_cupti_app_dropped(void *real, CUcontext ctx, uint32_t stream, size_t *dropped);
CUptiResult gt_cupti_app_finalize(void *real);
/* cuptiActivityEnableDriverApi (kind DRIVER) and RuntimeApi (RUNTIME). */
CUptiResult gt_cupti_app_enable_api(void *real, CUpti_ActivityKind kind, CUpti_CallbackId cbid, uint8_t on);
CUptiResult gt_cupti_app_timestamp(void *real, CUpti_TimestampCallbackFunc cb);

/* For meta: "shared" (the program's records came out of the tracer's
 * buffers), "direct" (its calls went to CUPTI: the tracer held none), or
 * NULL (it registered no buffers). Counts of records handed to it and
 * dropped for want of a buffer from it. */
const char *gt_cupti_app_mode(void);
uint64_t gt_cupti_app_records(void);
uint64_t gt_cupti_app_records_dropped(void);
/* 0: CUPTI runs on the tracer's clock; else on the program's, and the
 * trace's GPU times are t0 + (c - c0) * ns_per_tick: `offset` is t0 - c0
 * (the tracer's clock minus the program's when it was given); 2 when the
 * rate was measured (1: not yet, taken as 1). */
int gt_cupti_app_clock(double *ns_per_tick, int64_t *offset);

#endif

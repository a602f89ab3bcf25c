/* gt_cupti.h: GPU-side times through CUPTI's Activity API, loaded at run
 * time. Only the Activity API is used, never the callback API's single
 * subscriber slot; CUPTI's one set of activity buffer callbacks is ours,
 * and a program's own collector (the PyTorch profiler) gets its records
 * from us (gt_cupti_share.c). Our external correlation ids use a kind of
 * our own (CUSTOM2). */
#ifndef GT_CUPTI_H
#define GT_CUPTI_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* Set once CUPTI records GPU times: the hot path tags work-making calls
 * with a correlation id only then. */
extern _Atomic int gt_cupti_enabled;

/* Loads and starts CUPTI. Returns 1 when GPU times will be recorded; else
 * 0 with the reason in `why`. `mode`: the GPUTRACE_GPU_TIMING value. */
int gt_cupti_start(const char *mode, char *why, size_t why_len);
int gt_cupti_active(void);
/* Brackets a call that makes GPU work with our correlation id. */
void gt_cupti_push(uint64_t id);
void gt_cupti_pop(void);
/* The program's own CUPTI kinds on for the call `id`, noted right before
 * the real call (after its start time is taken): CUPTI decides at the
 * launch, inside the call (gt_cupti_share.c). */
void gt_cupti_note_call(uint64_t id);
/* CUPTI's ids of a CUDA Graph node (CUgraphNode) and graph (CUgraph), the
 * ids its records of a replayed node carry; 0 when CUPTI is not recording
 * or cannot tell. Program threads, inside a hooked call. */
uint64_t gt_cupti_graph_node_id(void *node);
uint32_t gt_cupti_graph_id(void *graph);
/* Asks CUPTI to hand over what it holds (forced: partial buffers too). */
void gt_cupti_flush(int forced);
/* Flushes everything and stops; buffers stay queued for the writer. */
void gt_cupti_stop(void);
/* The process ends (exit, a fatal signal): as gt_cupti_stop, and the
 * program's own collector gets nothing more from us. */
void gt_cupti_end(void);
/* A standby window's end: CUPTI stops instrumenting (its activity kinds
 * disabled), then as gt_cupti_stop. gt_cupti_start enables them again. */
void gt_cupti_pause(void);
/* Frees the buffers kept for reuse, once the writer has drained them. */
void gt_cupti_release_buffers(void);
/* The writer drains from now on (its file is ready, or will never be):
 * CUPTI's buffer requests are served within the pool's bound. Until then
 * every request is served, so that no record is lost to our start. */
void gt_cupti_bound_buffers(void);

/* Writer side: each completed record, then the buffer is freed. */
typedef void (*gt_cupti_record_fn)(const void *record, void *arg);
void gt_cupti_drain(gt_cupti_record_fn fn, void *arg);
uint64_t gt_cupti_dropped(void);
const char *gt_cupti_library(void);
/* Which CUPTI API records are on for the links (meta cupti_api_records):
 * work_calls, all_calls, driver_calls, runtime_calls or none. */
const char *gt_cupti_api_records_kind(void);
void gt_cupti_after_fork_child(void);

#endif

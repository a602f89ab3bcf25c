/* gt_cupti_int.h: what the tracer's CUPTI (gt_cupti.c) and the program's
 * use of it beside the tracer (gt_cupti_share.c) share inside cupti/.
 * gt_cupti.c calls gt_cupti_share.c, never the other way; the share side
 * only reads the entry points and state below. */
#ifndef GT_CUPTI_INT_H
#define GT_CUPTI_INT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <cupti.h>

/* Our external correlation ids' kind. */
#define GT_EXT_KIND CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2

struct gt_cupti_api {
    CUptiResult (*register_callbacks)(CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc);
    CUptiResult (*register_timestamp)(CUpti_TimestampCallbackFunc);
    CUptiResult (*enable)(CUpti_ActivityKind);
    CUptiResult (*disable)(CUpti_ActivityKind);
    CUptiResult (*flush_all)(uint32_t);
    CUptiResult (*flush_period)(uint32_t);
    CUptiResult (*next_record)(uint8_t *, size_t, CUpti_Activity **);
    CUptiResult (*dropped)(CUcontext, uint32_t, size_t *);
    CUptiResult (*push)(CUpti_ExternalCorrelationKind, uint64_t);
    CUptiResult (*pop)(CUpti_ExternalCorrelationKind, uint64_t *);
    CUptiResult (*result_string)(CUptiResult, const char **);
    CUptiResult (*graph_node_id)(CUgraphNode, uint64_t *); /* optional: CUDA Graphs' node ids */
    CUptiResult (*graph_id)(CUgraph, uint32_t *);
    /* optional (CUPTI 12.6 onwards): API records for chosen functions */
    CUptiResult (*enable_driver_api)(CUpti_CallbackId, uint8_t);
    CUptiResult (*enable_runtime_api)(CUpti_CallbackId, uint8_t);
    CUptiResult (*callback_name)(CUpti_CallbackDomain, uint32_t, const char **);
};

/* Resolved once CUPTI is loaded (gt_cupti_start). */
extern struct gt_cupti_api gt_cu;
/* CUPTI's buffer callbacks are the tracer's (1), or the program's own or
 * none (0: its calls go straight to CUPTI). */
extern _Atomic int gt_cupti_holding;
/* The activity kinds the tracer has enabled, one bit each (kinds < 64). */
extern _Atomic(uint64_t) gt_cupti_tracer_kinds;

/* gt_cupti_share.c, called by gt_cupti.c: */
/* A buffer CUPTI handed back, before the writer sees it: the program's
 * records copied into its own buffers. CUPTI's thread or a flushing one. */
void gt_cupti_share_forward(uint8_t *buf, size_t valid);
/* The tracer calls the work-making call whose external id is `ext`, on the
 * program's thread: notes which of its kinds the program has on. */
void gt_cupti_share_note(uint64_t ext);
/* The tracer is about to register its callbacks: what the program's own
 * callbacks hold is flushed to it first. Once taken, CUPTI stays the
 * tracer's for the process's life (handing it back could give one side's
 * buffer to the other's callback). */
void gt_cupti_share_take(void);
/* The tracer's concurrent kernels are on: a kernel kind the program had
 * CUPTI turn on (before the tracer took it, or between windows) goes off,
 * its records served by ours (both on would record each kernel twice). */
void gt_cupti_share_kernels_served(void);
/* The tracer's callbacks are registered: the program's calls answered. */
void gt_cupti_share_taken(void);
/* A buffer CUPTI handed back that is not one of the tracer's: the
 * program's, lent before the tracer took over. Returns 1 if delivered. */
int gt_cupti_share_foreign(uint8_t *buf, size_t size, size_t valid);
/* Whether the program has activity kind `k` on: the tracer leaves it on
 * when a standby window ends. */
int gt_cupti_share_wants(CUpti_ActivityKind k);
/* The process is ending (exit, a fatal signal): the program's callbacks
 * get nothing more from us; its destructors may have run already (the
 * tracer's exit handler runs late). */
void gt_cupti_share_end(void);
void gt_cupti_share_after_fork_child(void);

/* gt_cupti_api.c, called by both: the API records without which CUPTI
 * writes no external-correlation record. */
/* Turned on for the functions that make GPU work (or, with a CUPTI that
 * cannot choose, for every function). Says which, for meta. */
const char *gt_cupti_api_records_on(void);
/* Turned off, but for the domains the program wants records of. */
void gt_cupti_api_records_off(int keep_driver, int keep_runtime);
/* The program turned a whole API kind off: that also undid the tracer's
 * per-function choices in it, made again. */
void gt_cupti_api_records_reselect(CUpti_ActivityKind kind);
/* The program chose function `cbid` of kind DRIVER or RUNTIME for API
 * records (cuptiActivityEnableDriverApi/RuntimeApi); it chose any. */
int gt_cupti_api_app_selected(CUpti_ActivityKind kind, uint32_t cbid);
int gt_cupti_api_app_any(void);

/* gt_cupti_dump.c, called by both: GPUTRACE_CUPTI_DUMP, a diagnostic. */
void gt_cupti_dump_buffer(uint8_t *buf, size_t valid);
void gt_cupti_dump_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* gt_cupti_clock.c, called by both: CUPTI's one clock a process. */
/* The program gave CUPTI a clock of its own before the tracer took CUPTI
 * over: 1, and CUPTI stays on it (gt_cupti_clock_map converts). */
int gt_cupti_clock_program(void);
/* Whether CUPTI's records are on the program's clock. */
int gt_cupti_clock_foreign(void);
/* A time of CUPTI's records on the tracer's clock. */
uint64_t gt_cupti_clock_map(uint64_t t);
/* Another reading of both clocks, for the line between them (the writer,
 * before it drains). */
void gt_cupti_clock_sample(void);
void gt_cupti_clock_after_fork_child(void);

#endif

/* gt_scan.h: a trace's calls and GPU operations, read once each, for the
 * analyses. Version 4 and later traces are read from their storage tables
 * in one pass; older versions through their own views. Nothing here
 * computes a figure: rows go up as the trace holds them. */
#ifndef GT_SCAN_H
#define GT_SCAN_H

#include <stddef.h>
#include <stdint.h>

#include "trace/gt_trace.h"

/* A call's category (api_names.category). */
enum gt_rec_cat {
    GT_RC_OTHER, GT_RC_LAUNCH, GT_RC_MEMCPY, GT_RC_MEMSET, GT_RC_SYNC, GT_RC_ALLOC, GT_RC_FREE, GT_RC_STREAM,
    GT_RC_EVENT, GT_RC_GRAPH, GT_RC_MODULE, GT_RC_COUNT
};
enum gt_rec_copy { GT_RCOPY_HTOD, GT_RCOPY_DTOH, GT_RCOPY_DTOD, GT_RCOPY_HTOH, GT_RCOPY_PTOP, GT_RCOPY_OTHER };
/* GT_RMEM_MAPPED: mapped (zero-copy) page-locked host memory. */
enum gt_rec_mem { GT_RMEM_PAGEABLE, GT_RMEM_PINNED, GT_RMEM_MANAGED, GT_RMEM_OTHER, GT_RMEM_MAPPED };
enum gt_rec_sync {
    GT_RSYNC_DEVICE, GT_RSYNC_CONTEXT, GT_RSYNC_STREAM, GT_RSYNC_EVENT, GT_RSYNC_WAIT_EVENT,
    GT_RSYNC_EVENT_QUERY, GT_RSYNC_STREAM_QUERY, /* polls (version 8): a row is a run of them */
    GT_RSYNC_OTHER
};
enum gt_op_kind { GT_OP_KERNEL, GT_OP_MEMCPY, GT_OP_MEMSET };

/* One piece of work the GPU ran, as CUPTI recorded it. */
struct gt_op_rec {
    int kind;               /* enum gt_op_kind */
    int64_t device, stream; /* CUPTI's device and stream ids */
    uint64_t start, end;
    const char *name;       /* kernels: interned (equal names, equal pointers); NULL when the call names it */
    uint64_t bytes;         /* copies, memsets */
    int copy_kind;          /* copies: enum gt_rec_copy, from CUPTI's kind */
    int src_mem, dst_mem;   /* copies: CUPTI's memory kinds (1 pageable, 2 pinned, 5 managed, ...) */
    int64_t link;           /* the call it belongs to, as gt_rec.link names it; 0: none */
};

/* One call, with what the analyses need of it. */
struct gt_rec {
    int cat;                /* enum gt_rec_cat */
    uint32_t api;           /* index of its entry point (gt_scan_api_name) */
    uint64_t start, end;    /* host times of the call */
    int64_t site_key;       /* stack_id | pystack_id << 32 */
    int64_t tid;
    int has_python;         /* a Python stack was recorded */
    int result, captured;
    const char *kernel;     /* launches: the name, interned */
    int copy_kind;          /* memcpy: enum gt_rec_copy, as the call was made */
    int host_mem;           /* memcpy: enum gt_rec_mem, as the shim classified the call's host pointer */
    int async;              /* memcpy, memset */
    uint64_t bytes;         /* memcpy, memset, alloc */
    int alloc_kind;         /* alloc, free (version 4 on): alloc_args' kind code, 5 mapped */
    int sync_kind;          /* sync: enum gt_rec_sync */
    int module_jit;         /* module (version 8 on): PTX the driver compiled; bytes: the image's */
    uint64_t polls;         /* sync: the polls a query row stands for (1 for every other call) */
    int64_t device;         /* launch, memcpy, memset: the device the call used */
    int64_t stream;         /* the stream handle the call used; 0: none */
    int64_t link;           /* what operations of gt_scan_ops name this call by; 0: none */
    int has_op;             /* the call's GPU record, kept in its own row (version 4 on) */
    struct gt_op_rec op;
};

typedef void (*gt_rec_fn)(const struct gt_rec *r, void *arg);
typedef void (*gt_op_fn)(const struct gt_op_rec *o, void *arg);
typedef void (*gt_span_fn)(int cat, uint64_t start, uint64_t end, int64_t site_key, uint32_t api, void *arg);

struct gt_scan;

struct gt_scan *gt_scan_open(struct gt_trace *t);
void gt_scan_close(struct gt_scan *s);

/* The GPU operations not carried by a call's own row (gpu_ops in version 4
 * on; every operation in older traces), each once, in no particular
 * order. 0, or -1 after an error message. */
int gt_scan_ops(struct gt_scan *s, gt_op_fn fn, void *arg);
/* Every call once, in no particular order. */
int gt_scan_calls(struct gt_scan *s, gt_rec_fn fn, void *arg);
/* From now on gt_scan_ops and gt_scan_calls give the rows that start in
 * [from, to) (trace times, ns), by start time, through the start-time
 * indexes (for export's timeline). Calls that carry their GPU record come
 * from early enough that every record starting in the window comes too:
 * the caller filters those by their own times. */
void gt_scan_set_window(struct gt_scan *s, int64_t from, int64_t to);
/* About how many rows gt_scan_calls and gt_scan_ops read together, for a
 * progress line; 0 when not known cheaply (traces before version 4). */
uint64_t gt_scan_row_estimate(struct gt_trace *t);
/* About when the calls start (trace times, ns): the starts of the first
 * and the last call stored (calls are stored about in time order), read
 * without reading the calls: a span to size things by before the pass
 * that knows it exactly. 0, or -1 when not known cheaply (traces before
 * version 4, no calls). */
int gt_scan_time_hint(struct gt_trace *t, uint64_t *first, uint64_t *last);
/* Every call's category and host times, by start time (through the
 * start-time index; analysis/gt_spans.c replays them from memory, and
 * this stands in when that cannot be had). */
int gt_scan_call_spans(struct gt_scan *s, gt_span_fn fn, void *arg);

/* The entry points calls name by gt_rec.api. */
uint32_t gt_scan_api_count(const struct gt_scan *s);
const char *gt_scan_api_name(const struct gt_scan *s, uint32_t api);
/* NVIDIA's name for a result of entry point `api` (cudaErrorInvalidValue,
 * CUDA_ERROR_NOT_FOUND), from the trace's result_names where it has them,
 * else from the CUDA headers gputrace was built with; "error N" when
 * neither knows it. */
const char *gt_scan_result_name(struct gt_scan *s, uint32_t api, int result, char *buf, size_t len);

#endif

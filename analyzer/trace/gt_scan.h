/* gt_scan.h: a trace's calls and GPU intervals, read once each, for the
 * analyses. Version 4 traces are read from their storage table in one
 * pass; older versions through their own views. */
#ifndef GT_SCAN_H
#define GT_SCAN_H

#include <stdint.h>

#include "trace/gt_trace.h"

enum gt_rec_cat { GT_RC_OTHER, GT_RC_LAUNCH, GT_RC_MEMCPY, GT_RC_MEMSET, GT_RC_SYNC, GT_RC_ALLOC, GT_RC_FREE };
enum gt_rec_copy { GT_RCOPY_HTOD, GT_RCOPY_DTOH, GT_RCOPY_DTOD, GT_RCOPY_HTOH, GT_RCOPY_PTOP, GT_RCOPY_OTHER };
enum gt_rec_mem { GT_RMEM_PAGEABLE, GT_RMEM_PINNED, GT_RMEM_MANAGED, GT_RMEM_OTHER };
enum gt_rec_sync {
    GT_RSYNC_DEVICE, GT_RSYNC_CONTEXT, GT_RSYNC_STREAM, GT_RSYNC_EVENT, GT_RSYNC_WAIT_EVENT, GT_RSYNC_OTHER
};

/* One call, with what the analyses need of it. */
struct gt_rec {
    int cat;                /* enum gt_rec_cat */
    uint64_t start, end;    /* host times of the call */
    int64_t site_key;       /* stack_id | pystack_id << 32 */
    int64_t tid;
    int has_python;         /* a Python stack was recorded */
    int result, captured;
    const char *kernel;     /* launches: the name, interned (equal names, equal pointers) */
    int copy_kind;          /* memcpy: enum gt_rec_copy */
    int host_mem;           /* memcpy: enum gt_rec_mem, CUPTI's answer where it gave one */
    int async;              /* memcpy, memset */
    uint64_t bytes;         /* memcpy, memset, alloc */
    int sync_kind;          /* sync: enum gt_rec_sync */
    int64_t device;         /* the GPU's device where recorded, else the call's */
    int has_gpu;            /* launch, memcpy, memset: GPU times below */
    int gpu_in_row;         /* the GPU interval is read only here (not by gt_scan_intervals) */
    uint64_t gpu_start, gpu_end;
};

typedef void (*gt_rec_fn)(const struct gt_rec *r, void *arg);
typedef void (*gt_interval_fn)(int64_t device, uint64_t start, uint64_t end, void *arg);

struct gt_scan;

struct gt_scan *gt_scan_open(struct gt_trace *t);
/* Calls without their GPU records: no lookups in gpu_ops for records not
 * kept in their call's row (which, in a trace whose process died before
 * its indexes were built, cost a scan each). */
void gt_scan_skip_gpu(struct gt_scan *s);
void gt_scan_close(struct gt_scan *s);
/* Every call once, in no particular order. 0, or -1 after an error message. */
int gt_scan_calls(struct gt_scan *s, gt_rec_fn fn, void *arg);
/* Every call's host times, category and site only: the cheap pass. */
int gt_scan_call_times(struct gt_scan *s, gt_rec_fn fn, void *arg);
/* The GPU intervals not delivered with a call (gpu_in_row = 0). */
int gt_scan_intervals(struct gt_scan *s, gt_interval_fn fn, void *arg);

#endif

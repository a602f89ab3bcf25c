/* gt_export_buckets.h: time one stream spent busy, summed into buckets of
 * equal width from a start time, for export's counter tracks. Busy time is
 * the union of the stream's intervals: a CUDA Graph's branches run at once
 * on the stream they were launched on, and CUPTI reports them there. The
 * intervals come in start order (export sorts each stream's work first:
 * gt_export_perfetto_more.c); the latest GT_BK_PEND runs are kept merged
 * before they are summed in, exact while no interval comes more runs than
 * that out of order (one that does is counted from the end of what was
 * summed). Memory is bounded: past GT_BK_MAX buckets the width doubles
 * (pairs summed). */
#ifndef GT_EXPORT_BUCKETS_H
#define GT_EXPORT_BUCKETS_H

#include <stddef.h>
#include <stdint.h>

#define GT_BK_MAX 4096
#define GT_BK_FIRST_WIDTH 1000 /* ns: 1 us, doubled as the span needs */
#define GT_BK_PEND 64

struct gt_buckets {
    int64_t t0;
    uint64_t width;
    double *ns;    /* busy ns per bucket; NULL until the first interval */
    size_t n;      /* buckets in use */
    /* runs not yet summed in, sorted and disjoint; what ends before
     * `summed` is in the buckets */
    int64_t lo[GT_BK_PEND + 1], hi[GT_BK_PEND + 1];
    size_t npend;
    int64_t summed;
};

/* Adds [s, e) (clipped to start at t0). -1 when out of memory. */
int gt_buckets_add(struct gt_buckets *b, int64_t s, int64_t e);
/* Sums in the runs still kept apart: before reading ns and n. -1 when out
 * of memory. */
int gt_buckets_flush(struct gt_buckets *b);
void gt_buckets_free(struct gt_buckets *b);

#endif

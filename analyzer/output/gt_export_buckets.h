/* gt_export_buckets.h: time one stream spent busy, summed into buckets of
 * equal width from a start time, for export's counter tracks. Busy time is
 * the union of the stream's intervals: a CUDA Graph's branches run at once
 * on the stream they were launched on, and CUPTI reports them there. The
 * intervals come in start order (export sorts each stream's work first:
 * gt_export_perfetto_more.c), so one run is kept open, grown by each
 * interval that starts inside it, and summed in when one starts past it.
 * Memory is bounded: past GT_BK_MAX buckets the width doubles (pairs
 * summed). */
#ifndef GT_EXPORT_BUCKETS_H
#define GT_EXPORT_BUCKETS_H

#include <stddef.h>
#include <stdint.h>

#define GT_BK_MAX 4096
#define GT_BK_FIRST_WIDTH 1000 /* ns: 1 us, doubled as the span needs */

struct gt_buckets {
    int64_t t0;
    uint64_t width;
    double *ns;    /* busy ns per bucket; NULL until the first interval */
    size_t n;      /* buckets in use */
    int64_t lo, hi; /* the open run, not yet summed in (lo == hi: none) */
};

/* Adds [s, e) (clipped to start at t0), s at or after the last one's.
 * -1 when out of memory. */
int gt_buckets_add(struct gt_buckets *b, int64_t s, int64_t e);
/* Sums in the open run: before reading ns and n. -1 when out of memory. */
int gt_buckets_flush(struct gt_buckets *b);
void gt_buckets_free(struct gt_buckets *b);

#endif

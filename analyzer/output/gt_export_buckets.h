/* gt_export_buckets.h: time one stream spent busy, summed into buckets of
 * equal width from a start time, for export's counter tracks. A stream runs
 * its work in order, so its intervals do not overlap and their sum per
 * bucket is its busy time there, whatever order they come in. Memory is
 * bounded: past GT_BK_MAX buckets the width doubles (pairs summed). */
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
};

/* Adds [s, e) (clipped to start at t0). -1 when out of memory. */
int gt_buckets_add(struct gt_buckets *b, int64_t s, int64_t e);
void gt_buckets_free(struct gt_buckets *b);

#endif

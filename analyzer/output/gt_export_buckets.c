/* gt_export_buckets.c: see gt_export_buckets.h. */
#include <stdlib.h>
#include <string.h>

#include "output/gt_export_buckets.h"

static int gt_buckets_sum(struct gt_buckets *b, int64_t s, int64_t e)
{
    if (!b->ns) {
        if (!(b->ns = calloc(GT_BK_MAX, sizeof(*b->ns))))
            return -1;
        b->width = GT_BK_FIRST_WIDTH;
        b->n = 0;
    }
    /* widen until e fits: each bucket the sum of two */
    while ((uint64_t)(e - b->t0) > b->width * GT_BK_MAX) {
        for (size_t i = 0; i < GT_BK_MAX / 2; i++)
            b->ns[i] = b->ns[2 * i] + b->ns[2 * i + 1];
        memset(b->ns + GT_BK_MAX / 2, 0, GT_BK_MAX / 2 * sizeof(*b->ns));
        b->n = (b->n + 1) / 2;
        b->width *= 2;
    }
    size_t first = (size_t)((uint64_t)(s - b->t0) / b->width), last = (size_t)((uint64_t)(e - 1 - b->t0) / b->width);
    for (size_t i = first; i <= last; i++) {
        int64_t lo = b->t0 + (int64_t)(i * b->width), hi = lo + (int64_t)b->width;
        b->ns[i] += (double)((e < hi ? e : hi) - (s > lo ? s : lo));
    }
    if (last + 1 > b->n)
        b->n = last + 1;
    return 0;
}

int gt_buckets_add(struct gt_buckets *b, int64_t s, int64_t e)
{
    if (s < b->t0)
        s = b->t0;
    if (e <= s)
        return 0;
    if (b->hi > b->lo && s <= b->hi) { /* overlaps or touches the open run */
        if (e > b->hi)
            b->hi = e;
        return 0;
    }
    int rc = b->hi > b->lo ? gt_buckets_sum(b, b->lo, b->hi) : 0;
    b->lo = s;
    b->hi = e;
    return rc;
}

int gt_buckets_flush(struct gt_buckets *b)
{
    int rc = b->hi > b->lo ? gt_buckets_sum(b, b->lo, b->hi) : 0;
    b->lo = b->hi = 0;
    return rc;
}

void gt_buckets_free(struct gt_buckets *b)
{
    free(b->ns);
    memset(b, 0, sizeof(*b));
}

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

/* The oldest kept run into the buckets. */
static int gt_buckets_sum_first(struct gt_buckets *b)
{
    int rc = gt_buckets_sum(b, b->lo[0], b->hi[0]);
    b->summed = b->hi[0];
    b->npend--;
    memmove(b->lo, b->lo + 1, b->npend * sizeof(b->lo[0]));
    memmove(b->hi, b->hi + 1, b->npend * sizeof(b->hi[0]));
    return rc;
}

int gt_buckets_add(struct gt_buckets *b, int64_t s, int64_t e)
{
    if (s < b->t0)
        s = b->t0;
    if (s < b->summed)
        s = b->summed;
    if (e <= s)
        return 0;
    /* the first kept run ending at or after s, and the first starting after e */
    size_t i = b->npend;
    while (i > 0 && b->hi[i - 1] >= s)
        i--;
    size_t j = i;
    while (j < b->npend && b->lo[j] <= e)
        j++;
    if (j > i) { /* overlaps or touches runs i .. j-1: one run now */
        if (b->lo[i] < s)
            s = b->lo[i];
        if (b->hi[j - 1] > e)
            e = b->hi[j - 1];
        memmove(b->lo + i + 1, b->lo + j, (b->npend - j) * sizeof(b->lo[0]));
        memmove(b->hi + i + 1, b->hi + j, (b->npend - j) * sizeof(b->hi[0]));
        b->npend -= j - i - 1;
    } else {
        memmove(b->lo + i + 1, b->lo + i, (b->npend - i) * sizeof(b->lo[0]));
        memmove(b->hi + i + 1, b->hi + i, (b->npend - i) * sizeof(b->hi[0]));
        b->npend++;
    }
    b->lo[i] = s;
    b->hi[i] = e;
    return b->npend > GT_BK_PEND ? gt_buckets_sum_first(b) : 0;
}

int gt_buckets_flush(struct gt_buckets *b)
{
    int rc = 0;
    while (b->npend)
        if (gt_buckets_sum_first(b) < 0)
            rc = -1;
    return rc;
}

void gt_buckets_free(struct gt_buckets *b)
{
    free(b->ns);
    memset(b, 0, sizeof(*b));
}

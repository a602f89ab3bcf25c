/* gt_opsort.h: the GPU operations of a report in start order, for the
 * timeline's sweep, held in bounded memory: each operation goes in once
 * its call has been read (gt_extsort spills them to disk past
 * GT_OPSORT_MEM), and they come out by start, then duration, then the
 * order they went in, one at a time. */
#ifndef GT_OPSORT_H
#define GT_OPSORT_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/gt_ops.h"
#include "base/gt_extsort.h"

#define GT_OPSORT_MEM (32u << 20)

struct gt_opsort {
    const struct gt_ops *ops;   /* long durations */
    struct gt_extsort xs;
    uint64_t n;                 /* operations added */
    uint64_t *first;            /* sorted: operations whose GT_OPF_LB_CAND is cleared on the way out */
    size_t nfirst;
    struct gt_op cur;           /* the operation at the front */
    int has_cur;
};

void gt_opsort_init(struct gt_opsort *s, const struct gt_ops *ops);
/* An operation, numbered `seq` (distinct, for gt_opsort_begin's list). */
void gt_opsort_add(struct gt_opsort *s, const struct gt_op *op, uint64_t seq);
/* Reading begins; the operations numbered in first[0..n) come out without
 * GT_OPF_LB_CAND (each kernel's first launch). 0; -1 out of memory or
 * when the spill file failed. */
int gt_opsort_begin(struct gt_opsort *s, const uint64_t *first, size_t n);
/* The operation at the front, NULL after the last; gt_opsort_pop moves on. */
const struct gt_op *gt_opsort_peek(struct gt_opsort *s);
void gt_opsort_pop(struct gt_opsort *s);
/* 1 when reading failed (a spill file's read error, out of memory) */
int gt_opsort_failed(const struct gt_opsort *s);
void gt_opsort_free(struct gt_opsort *s);

#endif

/* gt_opsort.c: the operations in start order (see gt_opsort.h). */
#include <stdlib.h>
#include <string.h>

#include "analysis/gt_opsort.h"

struct gt_op_seq {
    struct gt_op op;
    uint64_t seq;
};

/* By start, then duration (the sweep needs starts in order; the rest
 * makes the order total), equal ones by number: the order they were read. */
static int gt_opsort_cmp(const void *a, const void *b, void *arg)
{
    const struct gt_ops *o = arg;
    const struct gt_op_seq *x = a, *y = b;
    if (x->op.start != y->op.start)
        return x->op.start < y->op.start ? -1 : 1;
    uint64_t dx = gt_op_dur(o, &x->op), dy = gt_op_dur(o, &y->op);
    if (dx != dy)
        return dx < dy ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

void gt_opsort_init(struct gt_opsort *s, const struct gt_ops *ops)
{
    memset(s, 0, sizeof(*s));
    s->ops = ops;
    gt_xs_init(&s->xs, sizeof(struct gt_op_seq), gt_opsort_cmp, (void *)ops, GT_OPSORT_MEM);
}

void gt_opsort_add(struct gt_opsort *s, const struct gt_op *op, uint64_t seq)
{
    struct gt_op_seq r;
    memset(&r, 0, sizeof(r));
    r.op = *op;
    r.seq = seq;
    gt_xs_add(&s->xs, &r);
    s->n++;
}

static int gt_u64_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void gt_opsort_load(struct gt_opsort *s)
{
    const struct gt_op_seq *r = gt_xs_next(&s->xs);
    s->has_cur = r != NULL;
    if (!r)
        return;
    s->cur = r->op;
    if ((s->cur.flags & GT_OPF_LB_CAND) && s->nfirst &&
        bsearch(&r->seq, s->first, s->nfirst, sizeof(*s->first), gt_u64_cmp))
        s->cur.flags &= (uint8_t)~GT_OPF_LB_CAND;
}

int gt_opsort_begin(struct gt_opsort *s, const uint64_t *first, size_t n)
{
    if (n) {
        if (!(s->first = malloc(n * sizeof(*s->first))))
            return -1;
        memcpy(s->first, first, n * sizeof(*s->first));
        qsort(s->first, n, sizeof(*s->first), gt_u64_cmp);
        s->nfirst = n;
    }
    if (gt_xs_begin(&s->xs) < 0)
        return -1;
    gt_opsort_load(s);
    return s->xs.failed ? -1 : 0;
}

const struct gt_op *gt_opsort_peek(struct gt_opsort *s)
{
    return s->has_cur ? &s->cur : NULL;
}

void gt_opsort_pop(struct gt_opsort *s)
{
    gt_opsort_load(s);
}

int gt_opsort_failed(const struct gt_opsort *s)
{
    return s->xs.failed;
}

void gt_opsort_free(struct gt_opsort *s)
{
    gt_xs_free(&s->xs);
    free(s->first);
    s->first = NULL;
    s->nfirst = 0;
    s->has_cur = 0;
}

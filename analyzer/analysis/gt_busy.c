/* gt_busy.c: the HTML overview's busy share per slice (gt_busy.h). */
#include <stdlib.h>
#include <string.h>

#include "analysis/gt_busy.h"

static int gt_busy_dev_cmp(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

int gt_busy_init(struct gt_busy *b, size_t nb, uint64_t t0, uint64_t span, const int64_t *devs, size_t n)
{
    memset(b, 0, sizeof(*b));
    b->nb = nb;
    b->t0 = t0;
    b->span = span;
    b->w = nb ? (double)span / (double)nb : 0;
    int64_t *d = n ? malloc(n * sizeof(*d)) : NULL;
    if (n && !d)
        return -1;
    if (n) {
        memcpy(d, devs, n * sizeof(*d));
        qsort(d, n, sizeof(*d), gt_busy_dev_cmp);
    }
    for (size_t i = 0; i < n && b->ndev < GT_BUSY_MAX_DEVICES; i++) {
        if (i && d[i] == d[i - 1])
            continue;
        b->dev[b->ndev] = (int)d[i];
        if (!(b->frac[b->ndev] = calloc(nb ? nb : 1, sizeof(float)))) {
            free(d);
            gt_busy_free(b);
            return -1;
        }
        b->ndev++;
    }
    free(d);
    return 0;
}

void gt_busy_run(int64_t device, uint64_t s, uint64_t e, void *arg)
{
    struct gt_busy *b = arg;
    int d = 0;
    while (d < b->ndev && b->dev[d] != device)
        d++;
    if (d == b->ndev || e <= s || !b->span || !b->nb)
        return;
    /* a run before the span's start (it cannot be, but a wrapped
     * difference must not land in a slice) */
    if (e <= b->t0)
        return;
    if (s < b->t0)
        s = b->t0;
    double x0 = (double)(s - b->t0) / b->w, x1 = (double)(e - b->t0) / b->w;
    if (x1 > (double)b->nb)
        x1 = (double)b->nb;
    for (size_t i = (size_t)x0; i < b->nb && (double)i < x1; i++) {
        double lo = x0 > (double)i ? x0 : (double)i, hi = x1 < (double)(i + 1) ? x1 : (double)(i + 1);
        if (hi > lo)
            b->frac[d][i] += (float)(hi - lo);
    }
}

void gt_busy_free(struct gt_busy *b)
{
    for (int i = 0; i < b->ndev; i++)
        free(b->frac[i]);
    memset(b, 0, sizeof(*b));
}

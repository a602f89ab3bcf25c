/* gt_kstats.c: kernels by GPU time (count, total, mean, median, min, max,
 * standard deviation, share), as `nsys stats` sums them.
 *
 * The median needs every duration: they are gathered by kernel into the
 * operations' own memory, which the sweep is done with, rather than into
 * a second copy as large. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/gt_pass.h"

struct gt_kdur {
    uint64_t kernel, dur;
};

static int gt_krow_by_total(const void *a, const void *b)
{
    const struct gt_kernel_row *x = a, *y = b;
    if (x->total_ns != y->total_ns)
        return x->total_ns > y->total_ns ? -1 : 1;
    return strcmp(x->name, y->name);
}

int gt_kstats_rows(struct gt_pass *p)
{
    struct gt_report *r = p->r;
    struct gt_ops *o = &p->ops;
    size_t nk = 0;
    uint64_t all = 0;
    size_t nrows = 0;
    for (size_t k = 0; k < p->nkernels; k++) {
        all += p->kernels[k].total;
        nrows += p->kernels[k].count > 0;
    }
    r->summary.kernel_ns = all;
    if (!nrows)
        return 0;
    /* (kernel, duration) pairs over the front of the array: each written
     * at or before where its operation was read */
    struct gt_kdur *kd = (struct gt_kdur *)(void *)o->v;
    for (size_t i = 0; i < o->n; i++) {
        const struct gt_op *x = &o->v[i];
        if (x->kind != GT_OP_KERNEL || x->name >= p->nkernels)
            continue;
        struct gt_kdur d = {x->name, gt_op_dur(o, x)};
        kd[nk++] = d;
    }
    /* durations grouped by kernel, after the pairs */
    uint64_t *dur = (uint64_t *)(void *)(kd + nk);
    size_t *off = calloc(p->nkernels + 1, sizeof(*off));
    if (!off || (nk && (char *)(dur + nk) > (char *)(o->v + o->n)))
        return free(off), -1;
    for (size_t k = 0; k < p->nkernels; k++)
        off[k + 1] = off[k] + p->kernels[k].count;
    size_t *fill = malloc((p->nkernels + 1) * sizeof(*fill));
    if (!fill)
        return free(off), -1;
    memcpy(fill, off, (p->nkernels + 1) * sizeof(*fill));
    for (size_t i = 0; i < nk; i++)
        dur[fill[kd[i].kernel]++] = kd[i].dur;
    free(fill);

    if (!(r->kernels = calloc(nrows, sizeof(*r->kernels))))
        return free(off), -1;
    for (size_t k = 0; k < p->nkernels; k++) {
        const struct gt_kernel_acc *a = &p->kernels[k];
        size_t n = off[k + 1] - off[k];
        if (!a->count || n != a->count)
            continue;
        struct gt_kernel_row *row = &r->kernels[r->nkernels++];
        snprintf(row->name, sizeof(row->name), "%s", a->name);
        row->count = a->count;
        row->graph_count = a->graph_count;
        row->total_ns = a->total;
        row->mean_ns = a->total / a->count;
        row->min_ns = a->min;
        row->max_ns = a->max;
        double mean = (double)a->total / (double)a->count;
        long double ss = 0;
        for (size_t i = off[k]; i < off[k + 1]; i++) {
            long double d = (long double)dur[i] - mean;
            ss += d * d;
        }
        row->stddev_ns = sqrt((double)(ss / (long double)n));
        row->median_ns = gt_percentile(dur + off[k], n, 50);
        row->share_pct = all ? 100.0 * (double)a->total / (double)all : 0;
    }
    free(off);
    if (r->nkernels > 1)
        qsort(r->kernels, r->nkernels, sizeof(*r->kernels), gt_krow_by_total);
    return 0;
}

/* gt_kstats.c: kernels by GPU time (count, total, mean, median, min, max,
 * standard deviation, share), as `nsys stats` sums them.
 *
 * The median needs every duration in order: each kernel's durations go
 * into a sort in bounded memory (gt_extsort, spilled to disk past
 * GT_KSTATS_MEM) as the operations are done, and come back by kernel,
 * shortest first, so a kernel's median is its ceil(n/2)-th and its
 * deviations from the mean are summed in the same read. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/gt_pass.h"

#define GT_KSTATS_MEM (8u << 20)

void gt_kstats_init(struct gt_pass *p)
{
    gt_xs_init_keyed(&p->kdur, GT_KSTATS_MEM);
}

void gt_kstats_add(struct gt_pass *p, uint32_t kernel, uint64_t dur)
{
    struct gt_xs_keyed d = {kernel, 0, dur};
    gt_xs_add(&p->kdur, &d);
}

void gt_kstats_free(struct gt_pass *p)
{
    gt_xs_free(&p->kdur);
}

static int gt_krow_by_total(const void *a, const void *b)
{
    const struct gt_kernel_row *x = a, *y = b;
    if (x->total_ns != y->total_ns)
        return x->total_ns > y->total_ns ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* Reading one kernel's durations: where it is, what it needs. */
struct gt_kread {
    struct gt_pass *p;
    uint32_t kernel;        /* the kernel being read; UINT32_MAX: none yet */
    uint64_t i, rank;       /* durations read of it, its median's rank (from 1) */
    double mean;
    long double ss;
    uint64_t *median;       /* by kernel */
    long double *sum_sq;    /* by kernel */
};

static int gt_kread_one(const void *rec, void *arg)
{
    const struct gt_xs_keyed *e = rec;
    struct gt_kread *k = arg;
    if (e->key >= k->p->nkernels)
        return 0;
    struct {
        uint32_t kernel;
        uint64_t dur;
    } dd = {e->key, e->value}, *d = &dd;
    if (d->kernel != k->kernel) {
        if (k->kernel != UINT32_MAX)
            k->sum_sq[k->kernel] = k->ss;
        const struct gt_kernel_acc *a = &k->p->kernels[d->kernel];
        k->kernel = d->kernel;
        k->i = 0;
        k->ss = 0;
        k->mean = a->count ? (double)a->total / (double)a->count : 0;
        /* gt_percentile's nearest rank: ceil(50 n / 100), at least 1 */
        k->rank = (50 * a->count + 99) / 100;
        if (k->rank < 1)
            k->rank = 1;
    }
    if (++k->i == k->rank)
        k->median[d->kernel] = d->dur;
    long double dv = (long double)d->dur - k->mean;
    k->ss += dv * dv;
    return 0;
}

int gt_kstats_rows(struct gt_pass *p)
{
    struct gt_report *r = p->r;
    uint64_t all = 0;
    size_t nrows = 0;
    for (size_t k = 0; k < p->nkernels; k++) {
        all += p->kernels[k].total;
        nrows += p->kernels[k].count > 0;
    }
    r->summary.kernel_ns = all;
    if (!nrows)
        return 0;
    struct gt_kread k = {.p = p, .kernel = UINT32_MAX};
    k.median = calloc(p->nkernels, sizeof(*k.median));
    k.sum_sq = calloc(p->nkernels, sizeof(*k.sum_sq));
    int rc = k.median && k.sum_sq ? gt_xs_each(&p->kdur, gt_kread_one, &k) : -1;
    if (rc == 0 && k.kernel != UINT32_MAX)
        k.sum_sq[k.kernel] = k.ss;
    if (rc == 0 && !(r->kernels = calloc(nrows, sizeof(*r->kernels))))
        rc = -1;
    for (size_t i = 0; rc == 0 && i < p->nkernels; i++) {
        const struct gt_kernel_acc *a = &p->kernels[i];
        if (!a->count)
            continue;
        struct gt_kernel_row *row = &r->kernels[r->nkernels++];
        snprintf(row->name, sizeof(row->name), "%s", a->name);
        row->count = a->count;
        row->graph_count = a->graph_count;
        row->total_ns = a->total;
        row->mean_ns = a->total / a->count;
        row->min_ns = a->min;
        row->max_ns = a->max;
        row->stddev_ns = sqrt((double)(k.sum_sq[i] / (long double)a->count));
        row->median_ns = k.median[i];
        row->share_pct = all ? 100.0 * (double)a->total / (double)all : 0;
    }
    free(k.median);
    free(k.sum_sq);
    if (rc == 0 && r->nkernels > 1)
        qsort(r->kernels, r->nkernels, sizeof(*r->kernels), gt_krow_by_total);
    return rc < 0 ? -1 : 0;
}

/* gt_launch.c: launch overhead rows from the (kernel, site) pairs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/gt_launch.h"

static size_t gt_pair_hash(uint32_t kernel, uint32_t site, size_t slots)
{
    uint64_t h = (kernel * 0x9E3779B97F4A7C15ull) ^ (site * 0xC2B2AE3D27D4EB4Full);
    return (size_t)(h ^ (h >> 31)) & (slots - 1);
}

struct gt_pair *gt_pair_of(struct gt_pairs *p, uint32_t kernel, uint32_t site)
{
    if (p->last && p->v[p->last - 1].kernel == kernel && p->v[p->last - 1].site == site)
        return &p->v[p->last - 1];
    if ((p->n + 1) * 2 > p->slots) {
        size_t slots = p->slots ? p->slots * 2 : 256;
        uint32_t *n = calloc(slots, sizeof(*n));
        if (!n)
            return NULL;
        for (size_t i = 0; i < p->n; i++) {
            size_t j = gt_pair_hash(p->v[i].kernel, p->v[i].site, slots);
            while (n[j])
                j = (j + 1) & (slots - 1);
            n[j] = (uint32_t)i + 1;
        }
        free(p->slot);
        p->slot = n;
        p->slots = slots;
    }
    size_t j = gt_pair_hash(kernel, site, p->slots);
    for (; p->slot[j]; j = (j + 1) & (p->slots - 1)) {
        struct gt_pair *x = &p->v[p->slot[j] - 1];
        if (x->kernel == kernel && x->site == site) {
            p->last = p->slot[j];
            return x;
        }
    }
    if (p->n == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 64;
        struct gt_pair *v = realloc(p->v, cap * sizeof(*v));
        if (!v)
            return NULL;
        p->v = v;
        p->cap = cap;
    }
    struct gt_pair *x = &p->v[p->n];
    memset(x, 0, sizeof(*x));
    x->kernel = kernel;
    x->site = site;
    p->slot[j] = (uint32_t)++p->n;
    p->last = p->n;
    return x;
}

void gt_pairs_free(struct gt_pairs *p)
{
    gt_xs_free(&p->by_kernel);
    gt_xs_free(&p->by_site);
    free(p->v);
    free(p->slot);
    memset(p, 0, sizeof(*p));
}

int gt_pair_launch(struct gt_pairs *p, struct gt_pair *x, uint64_t api_ns)
{
    if (!p->sorting) {
        gt_xs_init_keyed(&p->by_kernel, GT_LAUNCH_MEM);
        gt_xs_init_keyed(&p->by_site, GT_LAUNCH_MEM);
        p->sorting = 1;
    }
    /* a launch's host time under its kernel, and under its site */
    struct gt_xs_keyed k = {x->kernel, 0, api_ns}, s = {x->site, 0, api_ns};
    gt_xs_add(&p->by_kernel, &k);
    gt_xs_add(&p->by_site, &s);
    if (p->by_kernel.failed || p->by_site.failed)
        return -1;
    x->count++;
    x->api_total += api_ns;
    if (api_ns > x->api_max)
        x->api_max = api_ns;
    return 0;
}

void gt_pair_gpu(struct gt_pair *x, uint64_t gpu_ns, uint64_t queue_ns)
{
    x->gpu_total += gpu_ns;
    x->queue_sum += queue_ns;
    x->gpu_n++;
}

/* The k-th smallest of a[lo..hi), a reordered around it. */
static uint64_t gt_select(uint64_t *a, size_t lo, size_t hi, size_t k)
{
    while (hi - lo > 1) {
        uint64_t p = a[lo + (hi - lo) / 2];
        size_t i = lo, lt = lo, gt = hi;
        /* three-way partition: [lo,lt) < p, [lt,gt) == p, [gt,hi) > p */
        while (i < gt) {
            if (a[i] < p) {
                uint64_t t = a[i]; a[i] = a[lt]; a[lt] = t;
                i++;
                lt++;
            } else if (a[i] > p) {
                gt--;
                uint64_t t = a[i]; a[i] = a[gt]; a[gt] = t;
            } else {
                i++;
            }
        }
        if (k < lt)
            hi = lt;
        else if (k >= gt)
            lo = gt;
        else
            return p;
    }
    return a[k];
}

uint64_t gt_percentile(uint64_t *a, size_t n, unsigned pct)
{
    size_t rank = ((size_t)pct * n + 99) / 100; /* ceil(pct * n / 100), from 1 */
    if (rank < 1)
        rank = 1;
    return gt_select(a, 0, n, rank - 1);
}

static int gt_row_by_api_total(const void *a, const void *b)
{
    const struct gt_launch_row *ra = a, *rb = b;
    if (ra->api_total_ns != rb->api_total_ns)
        return ra->api_total_ns > rb->api_total_ns ? -1 : 1;
    int c = strcmp(ra->kernel, rb->kernel);
    return c ? c : strcmp(ra->site.text, rb->site.text);
}

static int gt_pair_by_kernel(const void *a, const void *b)
{
    uint32_t x = (*(struct gt_pair *const *)a)->kernel, y = (*(struct gt_pair *const *)b)->kernel;
    return x < y ? -1 : x > y;
}

static int gt_pair_by_site(const void *a, const void *b)
{
    uint32_t x = (*(struct gt_pair *const *)a)->site, y = (*(struct gt_pair *const *)b)->site;
    return x < y ? -1 : x > y;
}

/* Reading one side's sort: each row's launches come in a run, shortest
 * first; the row's p50 and p99 are its nearest-rank ones. */
struct gt_api_read {
    struct gt_launch_row *rows;
    const uint32_t *row_of_key;     /* key -> row index + 1 */
    size_t nkeys;
    uint32_t key;                   /* the key being read; UINT32_MAX: none yet */
    uint64_t i, r50, r99;
};

static uint64_t gt_rank(uint64_t n, unsigned pct)
{
    uint64_t rank = (pct * n + 99) / 100;
    return rank < 1 ? 1 : rank;
}

static int gt_api_read_one(const void *rec, void *arg)
{
    const struct gt_xs_keyed *a = rec;
    struct gt_api_read *x = arg;
    if (a->key >= x->nkeys || !x->row_of_key[a->key])
        return 0;
    struct gt_launch_row *r = &x->rows[x->row_of_key[a->key] - 1];
    if (a->key != x->key) {
        x->key = a->key;
        x->i = 0;
        x->r50 = gt_rank(r->count, 50);
        x->r99 = gt_rank(r->count, 99);
    }
    x->i++;
    if (x->i == x->r50)
        r->api_p50_ns = a->value;
    if (x->i == x->r99)
        r->api_p99_ns = a->value;
    return 0;
}

long gt_launch_rows(struct gt_pairs *p, struct gt_sites *sites, const char *const *names,
                    const uint64_t *first_api, int by_site, struct gt_launch_row **out)
{
    *out = NULL;
    if (!p->n)
        return 0;
    struct gt_pair **ord = malloc(p->n * sizeof(*ord));
    if (!ord)
        return -1;
    for (size_t i = 0; i < p->n; i++)
        ord[i] = &p->v[i];
    qsort(ord, p->n, sizeof(*ord), by_site ? gt_pair_by_site : gt_pair_by_kernel);
    /* rows are large (a site each): as many as there are groups */
    size_t groups = 1;
    for (size_t i = 1; i < p->n; i++)
        groups += by_site ? ord[i]->site != ord[i - 1]->site : ord[i]->kernel != ord[i - 1]->kernel;
    size_t nkeys = (by_site ? ord[p->n - 1]->site : ord[p->n - 1]->kernel) + (size_t)1;
    struct gt_launch_row *rows = calloc(groups, sizeof(*rows));
    uint32_t *row_of_key = calloc(nkeys, sizeof(*row_of_key));
    if (!rows || !row_of_key) {
        free(ord);
        free(rows);
        free(row_of_key);
        return -1;
    }
    size_t nrows = 0;
    for (size_t i = 0; i < p->n;) {
        size_t j = i + 1;
        while (j < p->n && (by_site ? ord[j]->site == ord[i]->site : ord[j]->kernel == ord[i]->kernel))
            j++;
        struct gt_launch_row *r = &rows[nrows++];
        row_of_key[by_site ? ord[i]->site : ord[i]->kernel] = (uint32_t)nrows;
        if (by_site) {
            r->site = *gt_site_by_index(sites, ord[i]->site);
        } else {
            snprintf(r->kernel, sizeof(r->kernel), "%s", names[ord[i]->kernel]);
            r->first_api_ns = first_api[ord[i]->kernel];
        }
        uint64_t queue_sum = 0, gpu_n = 0;
        for (size_t k = i; k < j; k++) {
            const struct gt_pair *x = ord[k];
            r->count += x->count;
            r->api_total_ns += x->api_total;
            if (x->api_max > r->api_max_ns)
                r->api_max_ns = x->api_max;
            r->gpu_total_ns += x->gpu_total;
            r->launch_bound += x->bound;
            queue_sum += x->queue_sum;
            gpu_n += x->gpu_n;
        }
        r->api_mean_ns = r->count ? r->api_total_ns / r->count : 0;
        r->queue_mean_ns = gpu_n ? queue_sum / gpu_n : 0;
        r->gpu_mean_ns = gpu_n ? r->gpu_total_ns / gpu_n : 0;
        i = j;
    }
    free(ord);
    int rc = 0;
    if (p->sorting) {
        struct gt_api_read x = {.rows = rows, .row_of_key = row_of_key, .nkeys = nkeys, .key = UINT32_MAX};
        rc = gt_xs_each(by_site ? &p->by_site : &p->by_kernel, gt_api_read_one, &x);
    }
    free(row_of_key);
    if (rc < 0) {
        free(rows);
        return -1;
    }
    if (nrows > 1)
        qsort(rows, nrows, sizeof(*rows), gt_row_by_api_total);
    *out = rows;
    return (long)nrows;
}

/* gt_analyze.c: launch overhead, H2D hotspots, GPU idle gaps and syncs,
 * from one trace. GPU-side times where CUPTI recorded them, host-side
 * times (and the report says so) where it did not.
 *
 * The trace is read in one pass over its calls (gt_scan.c), plus one over
 * the GPU records not kept with a call and, when the GPU idled, a second,
 * cheap pass over the calls' times for what the host did in each gap
 * (gt_gaps.c). What is kept in memory grows with distinct kernels and
 * call sites, except 4 bytes per launch (for its percentiles) and the GPU
 * intervals and gaps. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/gt_analyze.h"
#include "analysis/gt_gaps.h"
#include "base/gt_map.h"
#include "trace/gt_scan.h"
#include "analysis/gt_site.h"

/* qsort with nothing to sort may get a NULL array, which qsort forbids. */
static void gt_sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
    if (n > 1)
        qsort(base, n, size, cmp);
}

const char *const gt_gap_cause_names[GT_GAP_CAUSES] = {"sync", "copy", "launch", "host"};

static double gt_pct(uint64_t part, uint64_t whole)
{
    return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

/* ---- launch overhead ---- */

/* Launches of one kernel from one site: their sums, and each one's host
 * time for the percentiles (32 bits: a launch call over 4 s counts as 4 s
 * there, and only there). */
struct gt_pair {
    const char *kernel;
    uint32_t site;
    uint64_t count, api_total, gpu_total, queue_sum, queue_n, bound;
    uint32_t *api;
    size_t napi, capi;
};

struct gt_pairs {
    struct gt_pair *v;
    size_t n, cap;
    uint32_t *slot; /* hash -> index + 1 */
    size_t slots;
};

static size_t gt_pair_hash(const char *kernel, uint32_t site, size_t slots)
{
    uint64_t h = ((uint64_t)(uintptr_t)kernel * 0x9E3779B97F4A7C15ull) ^ (site * 0xC2B2AE3D27D4EB4Full);
    return (size_t)(h ^ (h >> 31)) & (slots - 1);
}

static struct gt_pair *gt_pair_of(struct gt_pairs *p, const char *kernel, uint32_t site)
{
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
        if (x->kernel == kernel && x->site == site)
            return x;
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
    return x;
}

static void gt_pairs_free(struct gt_pairs *p)
{
    for (size_t i = 0; i < p->n; i++)
        free(p->v[i].api);
    free(p->v);
    free(p->slot);
    memset(p, 0, sizeof(*p));
}

static int gt_pair_add(struct gt_pair *x, uint64_t api_ns, int has_gpu, uint64_t queue_ns, uint64_t gpu_ns)
{
    if (x->napi == x->capi) {
        size_t cap = x->capi ? x->capi * 2 : 16;
        uint32_t *a = realloc(x->api, cap * sizeof(*a));
        if (!a)
            return -1;
        x->api = a;
        x->capi = cap;
    }
    x->api[x->napi++] = api_ns > UINT32_MAX ? UINT32_MAX : (uint32_t)api_ns;
    x->count++;
    x->api_total += api_ns;
    if (has_gpu) {
        x->gpu_total += gpu_ns;
        x->queue_sum += queue_ns;
        x->queue_n++;
        if (gpu_ns < api_ns)
            x->bound++;
    }
    return 0;
}

/* The k-th smallest of a[lo..hi), a reordered around it. */
static uint32_t gt_select(uint32_t *a, size_t lo, size_t hi, size_t k)
{
    while (hi - lo > 1) {
        uint32_t p = a[lo + (hi - lo) / 2];
        size_t i = lo, lt = lo, gt = hi;
        /* three-way partition: [lo,lt) < p, [lt,gt) == p, [gt,hi) > p */
        while (i < gt) {
            if (a[i] < p) {
                uint32_t t = a[i]; a[i] = a[lt]; a[lt] = t;
                i++;
                lt++;
            } else if (a[i] > p) {
                gt--;
                uint32_t t = a[i]; a[i] = a[gt]; a[gt] = t;
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
    uintptr_t x = (uintptr_t)(*(struct gt_pair *const *)a)->kernel;
    uintptr_t y = (uintptr_t)(*(struct gt_pair *const *)b)->kernel;
    return x < y ? -1 : x > y;
}

static int gt_pair_by_site(const void *a, const void *b)
{
    uint32_t x = (*(struct gt_pair *const *)a)->site, y = (*(struct gt_pair *const *)b)->site;
    return x < y ? -1 : x > y;
}

/* One row per kernel (by_site 0) or per site (1), from the pairs. */
static size_t gt_launch_rows(struct gt_pairs *p, struct gt_sites *sites, int by_site, uint32_t *scratch,
                             struct gt_launch_row **out)
{
    *out = NULL;
    if (!p->n)
        return 0;
    struct gt_pair **ord = malloc(p->n * sizeof(*ord));
    struct gt_launch_row *rows = calloc(p->n, sizeof(*rows));
    if (!ord || !rows) {
        free(ord);
        free(rows);
        return 0;
    }
    for (size_t i = 0; i < p->n; i++)
        ord[i] = &p->v[i];
    gt_sort(ord, p->n, sizeof(*ord), by_site ? gt_pair_by_site : gt_pair_by_kernel);
    size_t nrows = 0;
    for (size_t i = 0; i < p->n;) {
        size_t j = i + 1;
        while (j < p->n && (by_site ? ord[j]->site == ord[i]->site : ord[j]->kernel == ord[i]->kernel))
            j++;
        struct gt_launch_row *r = &rows[nrows++];
        if (by_site)
            r->site = *gt_site_by_index(sites, ord[i]->site);
        else
            snprintf(r->kernel, sizeof(r->kernel), "%s", ord[i]->kernel);
        uint64_t queue_sum = 0, queue_n = 0;
        size_t n = 0;
        for (size_t k = i; k < j; k++) {
            const struct gt_pair *x = ord[k];
            r->count += x->count;
            r->api_total_ns += x->api_total;
            r->gpu_total_ns += x->gpu_total;
            r->launch_bound += x->bound;
            queue_sum += x->queue_sum;
            queue_n += x->queue_n;
            memcpy(scratch + n, x->api, x->napi * sizeof(*scratch));
            n += x->napi;
        }
        r->api_mean_ns = r->count ? r->api_total_ns / r->count : 0;
        if (n) {
            size_t k50 = (n - 1) / 2, k99 = (size_t)((double)(n - 1) * 0.99);
            r->api_p50_ns = gt_select(scratch, 0, n, k50);
            r->api_p99_ns = gt_select(scratch, k50, n, k99);
        }
        r->queue_mean_ns = queue_n ? queue_sum / queue_n : 0;
        r->gpu_mean_ns = queue_n ? r->gpu_total_ns / queue_n : 0;
        i = j;
    }
    free(ord);
    gt_sort(rows, nrows, sizeof(*rows), gt_row_by_api_total);
    *out = rows;
    return nrows;
}

/* ---- H2D hotspots and syncs: small tables, by site ---- */

static int gt_h2d_by_host(const void *a, const void *b)
{
    uint64_t x = ((const struct gt_h2d_row *)a)->host_ns, y = ((const struct gt_h2d_row *)b)->host_ns;
    return x > y ? -1 : x < y;
}

static int gt_sync_by_blocked(const void *a, const void *b)
{
    uint64_t x = ((const struct gt_sync_row *)a)->blocked_ns, y = ((const struct gt_sync_row *)b)->blocked_ns;
    return x > y ? -1 : x < y;
}

/* ---- the pass over the calls ---- */

struct gt_pass {
    struct gt_report *r;
    struct gt_sites *sites;
    struct gt_gaps *gaps;
    struct gt_pairs pairs;
    struct gt_map h2d_of, sync_of; /* row index + 1, by site (and kind) */
    size_t h2d_cap, sync_cap;
    int64_t min_start, max_end;
    int any, failed;
};

static const char *const gt_sync_kind_names[] = {"device", "context", "stream", "event", "stream_wait_event",
                                                 "unknown", "memcpy_dtoh", "memcpy_pageable"};

static void gt_sync_add(struct gt_pass *p, int kind, uint32_t site, uint64_t ns)
{
    struct gt_report *r = p->r;
    int64_t *slot = gt_map_at(&p->sync_of, (uint64_t)site << 8 | (uint64_t)kind);
    if (!slot) {
        p->failed = 1;
        return;
    }
    if (!*slot) {
        if (r->nsyncs == p->sync_cap) {
            size_t cap = p->sync_cap ? p->sync_cap * 2 : 16;
            struct gt_sync_row *g = realloc(r->syncs, cap * sizeof(*g));
            if (!g) {
                p->failed = 1;
                return;
            }
            r->syncs = g;
            p->sync_cap = cap;
        }
        struct gt_sync_row *row = &r->syncs[r->nsyncs];
        memset(row, 0, sizeof(*row));
        snprintf(row->kind, sizeof(row->kind), "%s", gt_sync_kind_names[kind]);
        row->site = *gt_site_by_index(p->sites, site);
        *slot = (int64_t)++r->nsyncs;
    }
    struct gt_sync_row *row = &r->syncs[*slot - 1];
    row->count++;
    row->blocked_ns += ns;
    r->summary.sync_ns += ns;
}

static void gt_h2d_add(struct gt_pass *p, const struct gt_rec *c, uint32_t site)
{
    struct gt_report *r = p->r;
    int64_t *slot = gt_map_at(&p->h2d_of, site);
    if (!slot) {
        p->failed = 1;
        return;
    }
    if (!*slot) {
        if (r->nh2d == p->h2d_cap) {
            size_t cap = p->h2d_cap ? p->h2d_cap * 2 : 16;
            struct gt_h2d_row *g = realloc(r->h2d, cap * sizeof(*g));
            if (!g) {
                p->failed = 1;
                return;
            }
            r->h2d = g;
            p->h2d_cap = cap;
        }
        struct gt_h2d_row *row = &r->h2d[r->nh2d];
        memset(row, 0, sizeof(*row));
        row->site = *gt_site_by_index(p->sites, site);
        *slot = (int64_t)++r->nh2d;
    }
    struct gt_h2d_row *row = &r->h2d[*slot - 1];
    int pageable = c->host_mem == GT_RMEM_PAGEABLE;
    row->bytes += c->bytes;
    row->count++;
    row->host_ns += c->end - c->start;
    if (c->has_gpu)
        row->gpu_ns += c->gpu_end - c->gpu_start;
    if (pageable)
        row->pageable_bytes += c->bytes;
    else if (c->host_mem == GT_RMEM_PINNED)
        row->pinned_bytes += c->bytes;
    /* A synchronous copy blocks; so does an "async" one from pageable
     * memory, which the driver stages through a pinned buffer. */
    if (!c->async || pageable)
        row->blocking++;
    if (c->async)
        row->async++;
    if (c->async && pageable)
        row->async_pageable++;
    r->summary.h2d_bytes += c->bytes;
    if (pageable)
        r->summary.pageable_h2d_bytes += c->bytes;
}

static void gt_on_call(const struct gt_rec *c, void *arg)
{
    struct gt_pass *p = arg;
    struct gt_report *r = p->r;
    r->summary.calls++;
    if (!p->any || (int64_t)c->start < p->min_start)
        p->min_start = (int64_t)c->start;
    if (!p->any || (int64_t)c->end > p->max_end)
        p->max_end = (int64_t)c->end;
    p->any = 1;
    if (c->cat != GT_RC_LAUNCH && c->cat != GT_RC_MEMCPY && c->cat != GT_RC_MEMSET && c->cat != GT_RC_SYNC)
        return;
    int work = c->cat != GT_RC_SYNC && c->result == 0 && !c->captured;
    /* the GPU's intervals: CUPTI's, or without them the calls' own */
    if (r->summary.gpu_times ? c->gpu_in_row && c->has_gpu : work) {
        if (gt_gaps_add(p->gaps, c->device, r->summary.gpu_times ? c->gpu_start : c->start,
                        r->summary.gpu_times ? c->gpu_end : c->end) < 0)
            p->failed = 1;
    }
    uint64_t host_ns = c->end - c->start;
    if (c->cat == GT_RC_SYNC) {
        if (c->sync_kind != GT_RSYNC_WAIT_EVENT)
            gt_sync_add(p, c->sync_kind, gt_site_index(p->sites, c->site_key), host_ns);
        return;
    }
    if (c->cat == GT_RC_MEMCPY && !c->captured &&
        ((c->copy_kind == GT_RCOPY_DTOH && !c->async) || (c->async && c->host_mem == GT_RMEM_PAGEABLE)))
        gt_sync_add(p, c->async ? 7 : 6, gt_site_index(p->sites, c->site_key), host_ns);
    if (!work)
        return;
    if (c->cat == GT_RC_LAUNCH) {
        /* without a GPU record, the call's own times stand in */
        uint64_t gs = c->has_gpu ? c->gpu_start : c->start, ge = c->has_gpu ? c->gpu_end : c->end;
        uint64_t queue = (int64_t)(gs - c->end) > 0 ? gs - c->end : 0;
        struct gt_pair *x = gt_pair_of(&p->pairs, c->kernel, gt_site_index(p->sites, c->site_key));
        if (!x || gt_pair_add(x, host_ns, c->has_gpu, queue, ge - gs) < 0) {
            p->failed = 1;
            return;
        }
        r->summary.launches++;
        r->summary.launch_host_ns += host_ns;
        if (c->has_gpu && ge - gs < host_ns)
            r->summary.launch_bound++;
    } else if (c->cat == GT_RC_MEMCPY && c->copy_kind == GT_RCOPY_HTOD) {
        gt_h2d_add(p, c, gt_site_index(p->sites, c->site_key));
    }
}

static void gt_on_interval(int64_t device, uint64_t start, uint64_t end, void *arg)
{
    struct gt_pass *p = arg;
    if (gt_gaps_add(p->gaps, device, start, end) < 0)
        p->failed = 1;
}

static void gt_on_call_time(const struct gt_rec *c, void *arg)
{
    struct gt_pass *p = arg;
    static const int gap_cat[] = {[GT_RC_OTHER] = 0, [GT_RC_SYNC] = 1, [GT_RC_MEMCPY] = 2, [GT_RC_LAUNCH] = 3,
                                  [GT_RC_MEMSET] = 0, [GT_RC_ALLOC] = 0, [GT_RC_FREE] = 0};
    gt_gaps_call(p->gaps, gap_cat[c->cat], c->start, c->end, gt_site_index(p->sites, c->site_key));
}

static int gt_analyze_pass(struct gt_trace *t, const struct gt_analyze_opts *o, struct gt_pass *p)
{
    struct gt_report *r = p->r;
    struct gt_scan *scan = gt_scan_open(t);
    if (!scan) {
        fprintf(stderr, "gputrace: %s: cannot read the trace's tables\n", t->path);
        return -1;
    }
    int rc = gt_scan_calls(scan, gt_on_call, p);
    if (rc == 0 && r->summary.gpu_times)
        rc = gt_scan_intervals(scan, gt_on_interval, p);
    if (p->failed)
        rc = -1;
    if (rc == 0) {
        /* Signed, as the trace stores them; unsigned span: a damaged trace
         * may hold any times at all. */
        r->summary.span_ns = p->any && p->max_end > p->min_start ? (uint64_t)p->max_end - (uint64_t)p->min_start : 0;
        r->summary.first_ns = p->any ? (uint64_t)p->min_start : 0;
        uint32_t *scratch = malloc((r->summary.launches + 1) * sizeof(*scratch));
        if (!scratch)
            rc = -1;
        else {
            r->nkernels = gt_launch_rows(&p->pairs, p->sites, 0, scratch, &r->kernels);
            r->nlaunch_sites = gt_launch_rows(&p->pairs, p->sites, 1, scratch, &r->launch_sites);
        }
        free(scratch);
    }
    gt_pairs_free(&p->pairs);
    if (rc == 0)
        rc = gt_gaps_merge(p->gaps, o->min_gap_ns, r);
    if (rc == 0)
        rc = gt_scan_call_times(scan, gt_on_call_time, p);
    if (rc == 0)
        rc = gt_gaps_report(p->gaps, p->sites, r);
    gt_scan_close(scan);
    return rc;
}

/* ---- summary and advice ---- */

static void gt_advise(struct gt_report *r)
{
    const struct gt_summary *s = &r->summary;
    int n = 0;
    if (s->gpu_times && s->launches >= 100 && s->launch_bound_pct >= 50)
        snprintf(r->advice[n++], sizeof(r->advice[0]),
                 "%.0f%% of launches are launch-bound: capture the loop in a CUDA Graph "
                 "(torch.compile(mode=\"reduce-overhead\")) or fuse small kernels.", s->launch_bound_pct);
    if (s->pageable_h2d_bytes)
        snprintf(r->advice[n++], sizeof(r->advice[0]),
                 "H2D copies from pageable memory block the host: pin the source (pin_memory=True, "
                 "cudaHostAlloc or cudaHostRegister).");
    uint64_t top = 0;
    int cause = -1;
    for (int c = 0; c < GT_GAP_CAUSES; c++)
        if (s->idle_by_cause[c] > top) {
            top = s->idle_by_cause[c];
            cause = c;
        }
    if (cause == GT_GAP_SYNC && s->idle_pct >= 10)
        snprintf(r->advice[n++], sizeof(r->advice[0]),
                 "The GPU idles while the host waits in synchronizations (.item(), .cpu(), "
                 "cudaDeviceSynchronize): take them off the step's critical path.");
    else if (cause == GT_GAP_HOST && s->idle_pct >= 10)
        snprintf(r->advice[n++], sizeof(r->advice[0]),
                 "The GPU idles while the host works outside CUDA (data loading, CPU work): overlap it "
                 "with GPU work (DataLoader workers, prefetching).");
}

static void gt_truncate(struct gt_report *r, size_t top)
{
    if (!top)
        return;
    if (r->nkernels > top)
        r->nkernels = top;
    if (r->nlaunch_sites > top)
        r->nlaunch_sites = top;
    if (r->nh2d > top)
        r->nh2d = top;
    if (r->ngaps > top)
        r->ngaps = top;
    if (r->nsyncs > top)
        r->nsyncs = top;
    if (r->nidle_sites > top)
        r->nidle_sites = top;
}

int gt_analyze(struct gt_trace *t, const struct gt_analyze_opts *o, struct gt_report *r)
{
    memset(r, 0, sizeof(*r));
    char *timing = gt_trace_meta(t, "gpu_timing");
    r->summary.gpu_times = timing && strcmp(timing, "cupti") == 0;
    free(timing);
    struct gt_sites sites;
    if (gt_sites_init(&sites, t->db) < 0) {
        gt_trace_sql_error(t, "stacks");
        gt_sites_free(&sites);
        return -1;
    }
    struct gt_pass p = {.r = r, .sites = &sites, .gaps = gt_gaps_new()};
    int rc = p.gaps ? gt_analyze_pass(t, o, &p) : -1;
    gt_gaps_free(p.gaps);
    gt_map_free(&p.h2d_of);
    gt_map_free(&p.sync_of);
    gt_sites_free(&sites);
    if (rc < 0) {
        if (p.failed)
            fprintf(stderr, "gputrace: %s: out of memory\n", t->path);
        gt_report_free(r);
        return -1;
    }
    struct gt_summary *s = &r->summary;
    for (size_t i = 0; i < r->nh2d; i++) {
        struct gt_h2d_row *row = &r->h2d[i];
        uint64_t ns = row->gpu_ns ? row->gpu_ns : row->host_ns;
        row->bandwidth_gbps = ns ? (double)row->bytes / (double)ns : 0;
        row->small_storm = row->count >= 100 && row->bytes / row->count < 64 * 1024;
    }
    gt_sort(r->h2d, r->nh2d, sizeof(*r->h2d), gt_h2d_by_host);
    gt_sort(r->syncs, r->nsyncs, sizeof(*r->syncs), gt_sync_by_blocked);
    s->sync_pct = gt_pct(s->sync_ns, s->span_ns);
    s->launch_host_pct = gt_pct(s->launch_host_ns, s->span_ns);
    s->launch_bound_pct = gt_pct(s->launch_bound, s->launches);
    gt_advise(r);
    gt_truncate(r, o->top);
    return 0;
}

void gt_report_free(struct gt_report *r)
{
    free(r->kernels);
    free(r->launch_sites);
    free(r->h2d);
    free(r->gaps);
    free(r->syncs);
    free(r->idle_sites);
    memset(r, 0, sizeof(*r));
}

/* gt_analyze.c: launch overhead, H2D hotspots, GPU idle gaps and syncs,
 * from one trace. GPU-side times where CUPTI recorded them, host-side
 * times (and the report says so) where it did not. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gt_analyze.h"
#include "gt_site.h"

/* qsort with nothing to sort may get a NULL array, which qsort forbids. */
static void gt_sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
    if (n > 1)
        qsort(base, n, size, cmp);
}

const char *const gt_gap_cause_names[GT_GAP_CAUSES] = {"sync", "copy", "launch", "host"};

static int gt_prepare(struct gt_trace *t, const char *sql, sqlite3_stmt **q)
{
    if (sqlite3_prepare_v2(t->db, sql, -1, q, NULL) != SQLITE_OK) {
        gt_trace_sql_error(t, "query");
        return -1;
    }
    return 0;
}

static int gt_cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static double gt_pct(uint64_t part, uint64_t whole)
{
    return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

/* ---- launch overhead ---- */

struct gt_launch_sample {
    const char *kernel;
    const struct gt_site *site;
    uint64_t api_ns, queue_ns, gpu_ns;
    int has_gpu;
};

/* Kernel names are interned (one copy each), so equal names are equal
 * pointers: grouping needs no string compares. */
static int gt_by_kernel(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)((const struct gt_launch_sample *)a)->kernel;
    uintptr_t y = (uintptr_t)((const struct gt_launch_sample *)b)->kernel;
    return x < y ? -1 : x > y;
}

static int gt_by_site(const void *a, const void *b)
{
    if (((const struct gt_launch_sample *)a)->site == ((const struct gt_launch_sample *)b)->site)
        return 0;
    return strcmp(((const struct gt_launch_sample *)a)->site->text, ((const struct gt_launch_sample *)b)->site->text);
}

static int gt_row_by_api_total(const void *a, const void *b)
{
    const struct gt_launch_row *ra = a, *rb = b;
    if (ra->api_total_ns != rb->api_total_ns)
        return ra->api_total_ns > rb->api_total_ns ? -1 : 1;
    int c = strcmp(ra->kernel, rb->kernel);
    return c ? c : strcmp(ra->site.text, rb->site.text);
}

/* One row from a run of samples that share a key. */
static void gt_launch_group(struct gt_launch_sample *s, size_t n, uint64_t *scratch, struct gt_launch_row *row)
{
    uint64_t queue_sum = 0, queue_n = 0;
    for (size_t i = 0; i < n; i++) {
        scratch[i] = s[i].api_ns;
        row->api_total_ns += s[i].api_ns;
        if (s[i].has_gpu) {
            row->gpu_total_ns += s[i].gpu_ns;
            queue_sum += s[i].queue_ns;
            queue_n++;
            if (s[i].gpu_ns < s[i].api_ns)
                row->launch_bound++;
        }
    }
    gt_sort(scratch, n, sizeof(*scratch), gt_cmp_u64);
    row->count = n;
    row->api_mean_ns = row->api_total_ns / n;
    row->api_p50_ns = scratch[(n - 1) / 2];
    row->api_p99_ns = scratch[(size_t)((double)(n - 1) * 0.99)];
    row->queue_mean_ns = queue_n ? queue_sum / queue_n : 0;
    row->gpu_mean_ns = queue_n ? row->gpu_total_ns / queue_n : 0;
}

static size_t gt_launch_rows(struct gt_launch_sample *s, size_t n, int by_site, struct gt_launch_row **out)
{
    *out = NULL;
    if (!n)
        return 0;
    gt_sort(s, n, sizeof(*s), by_site ? gt_by_site : gt_by_kernel);
    uint64_t *scratch = malloc(n * sizeof(*scratch));
    struct gt_launch_row *rows = calloc(n, sizeof(*rows));
    if (!scratch || !rows) {
        free(scratch);
        free(rows);
        return 0;
    }
    size_t nrows = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && (by_site ? gt_by_site(&s[i], &s[j]) : gt_by_kernel(&s[i], &s[j])) == 0)
            j++;
        struct gt_launch_row *r = &rows[nrows++];
        if (by_site)
            r->site = *s[i].site;
        else
            snprintf(r->kernel, sizeof(r->kernel), "%s", s[i].kernel);
        gt_launch_group(&s[i], j - i, scratch, r);
        i = j;
    }
    free(scratch);
    gt_sort(rows, nrows, sizeof(*rows), gt_row_by_api_total);
    *out = rows;
    return nrows;
}

/* Kernel names, one copy each, found by hash: a trace has few distinct
 * names and millions of launches. */
struct gt_names {
    char **slot;
    size_t cap, count;
};

static uint64_t gt_hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static const char *gt_names_intern(struct gt_names *n, const char *name)
{
    if (!name)
        name = "";
    if (n->count * 2 >= n->cap) {
        size_t cap = n->cap ? n->cap * 2 : 256;
        char **slot = calloc(cap, sizeof(*slot));
        if (!slot)
            return NULL;
        for (size_t i = 0; i < n->cap; i++) {
            if (!n->slot[i])
                continue;
            size_t j = gt_hash_str(n->slot[i]) & (cap - 1);
            while (slot[j])
                j = (j + 1) & (cap - 1);
            slot[j] = n->slot[i];
        }
        free(n->slot);
        n->slot = slot;
        n->cap = cap;
    }
    size_t j = gt_hash_str(name) & (n->cap - 1);
    for (; n->slot[j]; j = (j + 1) & (n->cap - 1))
        if (strcmp(n->slot[j], name) == 0)
            return n->slot[j];
    if (!(n->slot[j] = strdup(name)))
        return NULL;
    n->count++;
    return n->slot[j];
}

static void gt_names_free(struct gt_names *n)
{
    for (size_t i = 0; i < n->cap; i++)
        free(n->slot[i]);
    free(n->slot);
}

static int gt_launch_overhead(struct gt_trace *t, struct gt_sites *sites, struct gt_report *r)
{
    sqlite3_stmt *q;
    if (gt_prepare(t, "SELECT COALESCE(k.name, '(unknown kernel)'), " GT_SITE_KEY("c") ", k.api_end_ns - k.api_start_ns, "
                      "k.start_ns - k.api_end_ns, k.end_ns - k.start_ns, k.time_source = 'gpu' "
                      "FROM kernels k JOIN calls c ON c.id = k.api_call_id WHERE k.result = 0 AND k.captured = 0", &q) < 0)
        return -1;
    size_t n = 0, cap = 1024;
    struct gt_launch_sample *s = malloc(cap * sizeof(*s));
    struct gt_names names = {0};
    while (s && sqlite3_step(q) == SQLITE_ROW) {
        if (n == cap) {
            struct gt_launch_sample *g = realloc(s, (cap *= 2) * sizeof(*s));
            if (!g)
                break;
            s = g;
        }
        const char *kept = gt_names_intern(&names, (const char *)sqlite3_column_text(q, 0));
        if (!kept)
            break;
        struct gt_launch_sample *x = &s[n++];
        x->kernel = kept;
        x->site = gt_site_of(sites, sqlite3_column_int64(q, 1));
        x->api_ns = (uint64_t)sqlite3_column_int64(q, 2);
        int64_t queue = sqlite3_column_int64(q, 3);
        x->queue_ns = queue > 0 ? (uint64_t)queue : 0;
        x->gpu_ns = (uint64_t)sqlite3_column_int64(q, 4);
        x->has_gpu = sqlite3_column_int(q, 5);
        r->summary.launch_host_ns += x->api_ns;
        if (x->has_gpu && x->gpu_ns < x->api_ns)
            r->summary.launch_bound++;
    }
    sqlite3_finalize(q);
    r->summary.launches = n;
    r->nkernels = gt_launch_rows(s, n, 0, &r->kernels);
    r->nlaunch_sites = gt_launch_rows(s, n, 1, &r->launch_sites);
    gt_names_free(&names);
    free(s);
    return 0;
}

/* ---- H2D hotspots ---- */

static int gt_h2d_by_host(const void *a, const void *b)
{
    uint64_t x = ((const struct gt_h2d_row *)a)->host_ns, y = ((const struct gt_h2d_row *)b)->host_ns;
    return x > y ? -1 : x < y;
}

static struct gt_h2d_row *gt_h2d_row_for(struct gt_report *r, const struct gt_site *site, size_t *cap)
{
    for (size_t i = 0; i < r->nh2d; i++)
        if (strcmp(r->h2d[i].site.text, site->text) == 0)
            return &r->h2d[i];
    if (r->nh2d == *cap) {
        size_t ncap = *cap ? *cap * 2 : 16;
        struct gt_h2d_row *g = realloc(r->h2d, ncap * sizeof(*g));
        if (!g)
            return NULL;
        r->h2d = g;
        *cap = ncap;
    }
    struct gt_h2d_row *row = &r->h2d[r->nh2d++];
    memset(row, 0, sizeof(*row));
    row->site = *site;
    return row;
}

static int gt_h2d(struct gt_trace *t, struct gt_sites *sites, struct gt_report *r)
{
    sqlite3_stmt *q;
    if (gt_prepare(t, "SELECT " GT_SITE_KEY("c") ", m.bytes, m.host_mem, m.async, m.api_end_ns - m.api_start_ns, "
                      "m.end_ns - m.start_ns, m.time_source = 'gpu' "
                      "FROM memcpys m JOIN calls c ON c.id = m.api_call_id WHERE m.kind = 'HtoD' AND m.result = 0 AND m.captured = 0",
                   &q) < 0)
        return -1;
    size_t cap = 0;
    while (sqlite3_step(q) == SQLITE_ROW) {
        struct gt_h2d_row *row = gt_h2d_row_for(r, gt_site_of(sites, sqlite3_column_int64(q, 0)), &cap);
        if (!row)
            break;
        uint64_t bytes = (uint64_t)sqlite3_column_int64(q, 1);
        const char *hm = (const char *)sqlite3_column_text(q, 2);
        int async = sqlite3_column_int(q, 3), pageable = hm && strcmp(hm, "pageable") == 0;
        row->bytes += bytes;
        row->count++;
        row->host_ns += (uint64_t)sqlite3_column_int64(q, 4);
        if (sqlite3_column_int(q, 6))
            row->gpu_ns += (uint64_t)sqlite3_column_int64(q, 5);
        if (pageable)
            row->pageable_bytes += bytes;
        else if (hm && strcmp(hm, "pinned") == 0)
            row->pinned_bytes += bytes;
        /* A synchronous copy blocks; so does an "async" one from pageable
         * memory, which the driver stages through a pinned buffer. */
        if (!async || pageable)
            row->blocking++;
        if (async)
            row->async++;
        if (async && pageable)
            row->async_pageable++;
        r->summary.h2d_bytes += bytes;
        if (pageable)
            r->summary.pageable_h2d_bytes += bytes;
    }
    sqlite3_finalize(q);
    for (size_t i = 0; i < r->nh2d; i++) {
        struct gt_h2d_row *row = &r->h2d[i];
        uint64_t ns = row->gpu_ns ? row->gpu_ns : row->host_ns;
        row->bandwidth_gbps = ns ? (double)row->bytes / (double)ns : 0;
        row->small_storm = row->count >= 100 && row->bytes / row->count < 64 * 1024;
    }
    gt_sort(r->h2d, r->nh2d, sizeof(*r->h2d), gt_h2d_by_host);
    return 0;
}

/* ---- GPU busy intervals and idle gaps ---- */

struct gt_interval {
    int64_t device;
    uint64_t start, end;
};

struct gt_hcall {
    uint64_t start, end;
    int cat; /* 0 other, 1 sync, 2 copy, 3 launch */
    int64_t site_key;
};

static int gt_iv_by_dev_start(const void *a, const void *b)
{
    const struct gt_interval *x = a, *y = b;
    if (x->device != y->device)
        return x->device < y->device ? -1 : 1;
    return x->start < y->start ? -1 : x->start > y->start;
}

static int gt_iv_by_start(const void *a, const void *b)
{
    const struct gt_interval *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

static int gt_gap_by_dur(const void *a, const void *b)
{
    uint64_t x = ((const struct gt_gap *)a)->dur_ns, y = ((const struct gt_gap *)b)->dur_ns;
    return x > y ? -1 : x < y;
}

static struct gt_interval *gt_load_intervals(struct gt_trace *t, int gpu, size_t *n)
{
    const char *sql = gpu ? "SELECT device, start_ns, end_ns FROM gpu_activity"
                          : "SELECT device, start_ns, end_ns FROM kernels WHERE result = 0 AND captured = 0 "
                            "UNION ALL SELECT device, start_ns, end_ns FROM memcpys WHERE result = 0 AND captured = 0 "
                            "UNION ALL SELECT device, start_ns, end_ns FROM memsets WHERE result = 0 AND captured = 0";
    sqlite3_stmt *q;
    *n = 0;
    if (gt_prepare(t, sql, &q) < 0)
        return NULL;
    size_t cap = 1024;
    struct gt_interval *v = malloc(cap * sizeof(*v));
    while (v && sqlite3_step(q) == SQLITE_ROW) {
        if (*n == cap) {
            struct gt_interval *g = realloc(v, (cap *= 2) * sizeof(*v));
            if (!g)
                break;
            v = g;
        }
        v[*n].device = sqlite3_column_int64(q, 0);
        v[*n].start = (uint64_t)sqlite3_column_int64(q, 1);
        v[*n].end = (uint64_t)sqlite3_column_int64(q, 2);
        if (v[*n].end >= v[*n].start)
            (*n)++;
    }
    sqlite3_finalize(q);
    return v;
}

static struct gt_hcall *gt_load_calls(struct gt_trace *t, size_t *n, uint64_t *max_dur)
{
    sqlite3_stmt *q;
    *n = 0;
    *max_dur = 0;
    if (gt_prepare(t, "SELECT c.start_ns, c.end_ns, c.category, " GT_SITE_KEY("c") " FROM api_calls c ORDER BY c.start_ns", &q) < 0)
        return NULL;
    size_t cap = 1024;
    struct gt_hcall *v = malloc(cap * sizeof(*v));
    while (v && sqlite3_step(q) == SQLITE_ROW) {
        if (*n == cap) {
            struct gt_hcall *g = realloc(v, (cap *= 2) * sizeof(*v));
            if (!g)
                break;
            v = g;
        }
        struct gt_hcall *c = &v[(*n)++];
        c->start = (uint64_t)sqlite3_column_int64(q, 0);
        c->end = (uint64_t)sqlite3_column_int64(q, 1);
        const char *cat = (const char *)sqlite3_column_text(q, 2);
        c->cat = !cat ? 0 : !strcmp(cat, "sync") ? 1 : !strcmp(cat, "memcpy") ? 2 : !strcmp(cat, "launch") ? 3 : 0;
        c->site_key = sqlite3_column_int64(q, 3);
        if (c->end > c->start && c->end - c->start > *max_dur)
            *max_dur = c->end - c->start;
    }
    sqlite3_finalize(q);
    return v;
}

/* First call starting at or after t. */
static size_t gt_first_call_from(const struct gt_hcall *c, size_t n, uint64_t t)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c[mid].start < t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* What the host did during [gs, ge): the kind of call covering most of it,
 * if any covers half; else the host was outside CUDA. */
static void gt_classify_gap(struct gt_gap *g, const struct gt_hcall *c, size_t n, uint64_t max_dur,
                            struct gt_sites *sites)
{
    uint64_t gs = g->start_ns, ge = g->start_ns + g->dur_ns;
    uint64_t cover[4] = {0};
    size_t i = gt_first_call_from(c, n, gs > max_dur ? gs - max_dur : 0);
    for (; i < n && c[i].start < ge; i++) {
        uint64_t s = c[i].start > gs ? c[i].start : gs, e = c[i].end < ge ? c[i].end : ge;
        if (e > s)
            cover[c[i].cat] += e - s;
    }
    g->cause = GT_GAP_HOST;
    if (cover[1] * 2 >= g->dur_ns)
        g->cause = GT_GAP_SYNC;
    else if (cover[2] * 2 >= g->dur_ns)
        g->cause = GT_GAP_COPY;
    else if (cover[3] * 2 >= g->dur_ns)
        g->cause = GT_GAP_LAUNCH;
    size_t after = gt_first_call_from(c, n, ge);
    size_t before = gt_first_call_from(c, n, gs);
    /* the last call that had started by the gap's start */
    g->before = *gt_site_of(sites, before > 0 ? c[before - 1].site_key : 0);
    g->after = *gt_site_of(sites, after < n ? c[after].site_key : 0);
}

static int gt_idle_by_time(const void *a, const void *b)
{
    uint64_t x = ((const struct gt_idle_site *)a)->idle_ns, y = ((const struct gt_idle_site *)b)->idle_ns;
    return x > y ? -1 : x < y;
}

static void gt_add_idle_site(struct gt_report *r, const struct gt_gap *g, size_t *cap)
{
    for (size_t i = 0; i < r->nidle_sites; i++)
        if (strcmp(r->idle_sites[i].site.text, g->after.text) == 0) {
            r->idle_sites[i].idle_ns += g->dur_ns;
            r->idle_sites[i].gaps++;
            return;
        }
    if (r->nidle_sites == *cap) {
        size_t ncap = *cap ? *cap * 2 : 16;
        struct gt_idle_site *n = realloc(r->idle_sites, ncap * sizeof(*n));
        if (!n)
            return;
        r->idle_sites = n;
        *cap = ncap;
    }
    struct gt_idle_site *x = &r->idle_sites[r->nidle_sites++];
    x->site = g->after;
    x->idle_ns = g->dur_ns;
    x->gaps = 1;
}

static int gt_gaps(struct gt_trace *t, const struct gt_analyze_opts *o, struct gt_sites *sites,
                   struct gt_report *r)
{
    size_t niv = 0, ncalls = 0;
    uint64_t max_dur = 0;
    struct gt_interval *iv = gt_load_intervals(t, r->summary.gpu_times, &niv);
    struct gt_hcall *calls = gt_load_calls(t, &ncalls, &max_dur);
    if (!iv || !calls) {
        free(iv);
        free(calls);
        return -1;
    }
    /* Busy time over all devices: the union of their intervals. */
    gt_sort(iv, niv, sizeof(*iv), gt_iv_by_start);
    uint64_t busy = 0, cur_s = 0, cur_e = 0;
    for (size_t i = 0; i < niv; i++) {
        if (i == 0 || iv[i].start > cur_e) {
            busy += cur_e - cur_s;
            cur_s = iv[i].start;
            cur_e = iv[i].end;
        } else if (iv[i].end > cur_e) {
            cur_e = iv[i].end;
        }
    }
    if (niv)
        busy += cur_e - cur_s;
    r->summary.busy_ns = busy < r->summary.span_ns ? busy : r->summary.span_ns;
    r->summary.idle_ns = r->summary.span_ns - r->summary.busy_ns;
    r->summary.idle_pct = gt_pct(r->summary.idle_ns, r->summary.span_ns);

    /* Gaps per device, between its merged busy intervals. */
    gt_sort(iv, niv, sizeof(*iv), gt_iv_by_dev_start);
    size_t cap = 0, site_cap = 0;
    for (size_t i = 0; i < niv;) {
        uint64_t end = iv[i].end, dev_busy = 0, run_start = iv[i].start;
        size_t j = i + 1;
        for (; j < niv && iv[j].device == iv[i].device; j++) {
            if (iv[j].start > end) {
                dev_busy += end - run_start;
                run_start = iv[j].start;
                uint64_t dur = iv[j].start - end;
                struct gt_gap g = {.device = (int)iv[i].device, .start_ns = end, .dur_ns = dur};
                gt_classify_gap(&g, calls, ncalls, max_dur, sites);
                r->summary.idle_by_cause[g.cause] += dur;
                gt_add_idle_site(r, &g, &site_cap);
                if (dur >= o->min_gap_ns) {
                    if (r->ngaps == cap) {
                        size_t ncap = cap ? cap * 2 : 16;
                        struct gt_gap *gg = realloc(r->gaps, ncap * sizeof(*gg));
                        if (!gg)
                            break;
                        r->gaps = gg;
                        cap = ncap;
                    }
                    r->gaps[r->ngaps++] = g;
                }
            }
            if (iv[j].end > end)
                end = iv[j].end;
        }
        dev_busy += end - run_start;
        if (r->ndevices < GT_MAX_DEVICES) {
            struct gt_device_idle *d = &r->devices[r->ndevices++];
            d->device = (int)iv[i].device;
            d->busy_ns = dev_busy < r->summary.span_ns ? dev_busy : r->summary.span_ns;
            d->idle_ns = r->summary.span_ns - d->busy_ns;
            d->idle_pct = gt_pct(d->idle_ns, r->summary.span_ns);
        }
        i = j;
    }
    gt_sort(r->gaps, r->ngaps, sizeof(*r->gaps), gt_gap_by_dur);
    gt_sort(r->idle_sites, r->nidle_sites, sizeof(*r->idle_sites), gt_idle_by_time);
    free(iv);
    free(calls);
    return 0;
}

/* ---- syncs, explicit and implicit ---- */

static int gt_sync_by_blocked(const void *a, const void *b)
{
    uint64_t x = ((const struct gt_sync_row *)a)->blocked_ns, y = ((const struct gt_sync_row *)b)->blocked_ns;
    return x > y ? -1 : x < y;
}

static int gt_syncs(struct gt_trace *t, struct gt_sites *sites, struct gt_report *r)
{
    sqlite3_stmt *q;
    if (gt_prepare(t, "SELECT s.kind, " GT_SITE_KEY("c") ", s.end_ns - s.start_ns FROM syncs s "
                      "JOIN calls c ON c.id = s.api_call_id WHERE s.kind != 'stream_wait_event' UNION ALL "
                      "SELECT CASE WHEN m.async = 0 THEN 'memcpy_dtoh' ELSE 'memcpy_pageable' END, " GT_SITE_KEY("c") ", "
                      "m.api_end_ns - m.api_start_ns FROM memcpys m JOIN calls c ON c.id = m.api_call_id "
                      "WHERE m.captured = 0 AND ((m.kind = 'DtoH' AND m.async = 0) OR "
                      "(m.async = 1 AND m.host_mem = 'pageable'))",
                   &q) < 0)
        return -1;
    size_t cap = 0;
    while (sqlite3_step(q) == SQLITE_ROW) {
        const char *kind = (const char *)sqlite3_column_text(q, 0);
        const struct gt_site *site = gt_site_of(sites, sqlite3_column_int64(q, 1));
        uint64_t ns = (uint64_t)sqlite3_column_int64(q, 2);
        struct gt_sync_row *row = NULL;
        for (size_t i = 0; i < r->nsyncs && !row; i++)
            if (strcmp(r->syncs[i].kind, kind) == 0 && strcmp(r->syncs[i].site.text, site->text) == 0)
                row = &r->syncs[i];
        if (!row) {
            if (r->nsyncs == cap) {
                size_t ncap = cap ? cap * 2 : 16;
                struct gt_sync_row *g = realloc(r->syncs, ncap * sizeof(*g));
                if (!g)
                    break;
                r->syncs = g;
                cap = ncap;
            }
            row = &r->syncs[r->nsyncs++];
            memset(row, 0, sizeof(*row));
            snprintf(row->kind, sizeof(row->kind), "%s", kind);
            row->site = *site;
        }
        row->count++;
        row->blocked_ns += ns;
        r->summary.sync_ns += ns;
    }
    sqlite3_finalize(q);
    gt_sort(r->syncs, r->nsyncs, sizeof(*r->syncs), gt_sync_by_blocked);
    r->summary.sync_pct = gt_pct(r->summary.sync_ns, r->summary.span_ns);
    return 0;
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
    sqlite3_stmt *q;
    if (gt_prepare(t, "SELECT count(*), min(start_ns), max(end_ns) FROM calls", &q) < 0)
        return -1;
    if (sqlite3_step(q) == SQLITE_ROW) {
        r->summary.calls = (uint64_t)sqlite3_column_int64(q, 0);
        int64_t a = sqlite3_column_int64(q, 1), b = sqlite3_column_int64(q, 2);
        /* Unsigned: a damaged trace may hold any times at all. */
        r->summary.span_ns = b > a ? (uint64_t)b - (uint64_t)a : 0;
        r->summary.first_ns = (uint64_t)a;
    }
    sqlite3_finalize(q);
    struct gt_sites sites;
    if (gt_sites_init(&sites, t->db) < 0) {
        gt_trace_sql_error(t, "stacks");
        gt_sites_free(&sites);
        return -1;
    }
    int rc = gt_launch_overhead(t, &sites, r);
    if (rc == 0)
        rc = gt_h2d(t, &sites, r);
    if (rc == 0)
        rc = gt_gaps(t, o, &sites, r);
    if (rc == 0)
        rc = gt_syncs(t, &sites, r);
    gt_sites_free(&sites);
    if (rc < 0) {
        gt_report_free(r);
        return -1;
    }
    struct gt_summary *s = &r->summary;
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

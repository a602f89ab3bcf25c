/* gt_tables.c: the host-side tables (H2D hotspots, syncs, the API summary,
 * errors) and the transfers by kind and size, kept while the calls are
 * read, and their rows. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/gt_pass.h"

const char *const gt_xfer_kind_names[GT_XKINDS] = {"HtoD", "DtoH", "DtoD", "HtoH", "PtoP", "memset", "other"};
const char *const gt_xfer_band_names[GT_XBANDS] = {"<4KiB", "4KiB-64KiB", "64KiB-1MiB", "1MiB-16MiB", ">=16MiB"};

/* By enum gt_rec_sync, then the copies that block. */
static const char *const gt_sync_kind_names[] = {"device", "context", "stream", "event", "stream_wait_event",
                                                 "event_query", "stream_query", "unknown", "memcpy_dtoh",
                                                 "memcpy_pageable"};
enum { GT_SYNC_ROW_DTOH = GT_RSYNC_OTHER + 1, GT_SYNC_ROW_PAGEABLE = GT_RSYNC_OTHER + 2 };

struct gt_thread_acc *gt_thread_of(struct gt_pass *p, int64_t tid)
{
    if (p->last_thread && tid == p->last_tid)
        return &p->threads[p->last_thread - 1];
    int64_t *slot = gt_map_at(&p->thread_of, (uint64_t)tid);
    if (!slot) {
        p->failed = 1;
        return NULL;
    }
    if (!*slot) {
        if (p->nthreads == p->capthreads) {
            size_t cap = p->capthreads ? p->capthreads * 2 : 16;
            struct gt_thread_acc *t = realloc(p->threads, cap * sizeof(*t));
            if (!t) {
                p->failed = 1;
                return NULL;
            }
            p->threads = t;
            p->capthreads = cap;
        }
        memset(&p->threads[p->nthreads], 0, sizeof(p->threads[0]));
        *slot = (int64_t)++p->nthreads;
    }
    p->last_tid = tid;
    p->last_thread = (size_t)*slot;
    return &p->threads[*slot - 1];
}

/* calls: how many calls the row stands for (a run of polls: its polls). */
static void gt_sync_add(struct gt_pass *p, int kind, uint32_t site, int64_t tid, uint64_t ns, uint64_t calls)
{
    struct gt_report *r = p->r;
    int64_t *slot = gt_map_at(&p->sync_of, (uint64_t)site << 8 | (uint64_t)kind);
    struct gt_thread_acc *th = gt_thread_of(p, tid);
    if (!slot || !th) {
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
    row->count += calls;
    row->blocked_ns += ns;
    r->summary.sync_ns += ns;
    th->sync_ns += ns;
}

struct gt_graph_row *gt_graph_row_of(struct gt_pass *p, uint32_t site)
{
    struct gt_report *r = p->r;
    int64_t *slot = gt_map_at(&p->graph_of, site);
    if (!slot) {
        p->failed = 1;
        return NULL;
    }
    if (!*slot) {
        if (r->ngraphs == p->graph_cap) {
            size_t cap = p->graph_cap ? p->graph_cap * 2 : 8;
            struct gt_graph_row *g = realloc(r->graphs, cap * sizeof(*g));
            if (!g) {
                p->failed = 1;
                return NULL;
            }
            r->graphs = g;
            p->graph_cap = cap;
        }
        struct gt_graph_row *row = &r->graphs[r->ngraphs];
        memset(row, 0, sizeof(*row));
        row->site = *gt_site_by_index(p->sites, site);
        *slot = (int64_t)++r->ngraphs;
    }
    return &r->graphs[*slot - 1];
}

void gt_tables_call(struct gt_pass *p, const struct gt_rec *c)
{
    struct gt_summary *s = &p->r->summary;
    uint64_t dur = c->end > c->start ? c->end - c->start : 0;
    s->calls++;
    if (c->api >= p->napis) {
        size_t n = (size_t)c->api + 64;
        struct gt_api_acc *a = realloc(p->apis, n * sizeof(*a));
        if (!a) {
            p->failed = 1;
            return;
        }
        memset(a + p->napis, 0, (n - p->napis) * sizeof(*a));
        p->apis = a;
        p->napis = n;
    }
    struct gt_api_acc *a = &p->apis[c->api];
    a->count++;
    a->total += dur;
    if (dur > a->max)
        a->max = dur;
    if (c->result != 0) {
        s->failed_calls++;
        a->errors++;
        int64_t *n = gt_map_at(&p->error_of, (uint64_t)c->api << 32 | (uint32_t)c->result);
        if (!n) {
            p->failed = 1;
            return;
        }
        ++*n;
    }
    /* any call a stream capture took (version 8 flags them all; older
     * traces only launches, copies and memsets): it ran nothing */
    s->captured_calls += c->captured != 0;
    switch (c->cat) {
    case GT_RC_LAUNCH:
        if (!c->captured && c->result == 0) {
            struct gt_thread_acc *th = gt_thread_of(p, c->tid);
            if (!th)
                return;
            s->launches++;
            s->launch_host_ns += dur;
            th->launch_ns += dur;
        }
        break;
    case GT_RC_GRAPH:
        if (c->result == 0 && !c->captured) {
            uint32_t site = gt_site_index(p->sites, c->site_key);
            struct gt_graph_row *g = site == UINT32_MAX ? NULL : gt_graph_row_of(p, site);
            if (!g) {
                p->failed = 1;
                return;
            }
            s->graph_launches++;
            g->count++;
            g->api_total_ns += dur;
        }
        break;
    case GT_RC_MODULE:
        /* loading, linking, JIT-compiling modules: every call, whatever its result */
        s->module_ns += dur;
        s->module_jit += c->module_jit != 0;
        break;
    case GT_RC_SYNC:
        if (c->sync_kind != GT_RSYNC_WAIT_EVENT && !c->captured) {
            uint32_t site = gt_site_index(p->sites, c->site_key);
            if (site == UINT32_MAX)
                p->failed = 1;
            else
                gt_sync_add(p, c->sync_kind, site, c->tid, dur, c->polls ? c->polls : 1);
        }
        break;
    default:
        break;
    }
}

void gt_tables_copy_call(struct gt_pass *p, const struct gt_rec *c, uint32_t site, const uint64_t *bytes,
                         const uint64_t *gpu_ns, const int *mem, size_t nrows)
{
    if (c->captured)
        return;
    struct gt_report *r = p->r;
    uint64_t dur = c->end > c->start ? c->end - c->start : 0;
    int pageable = 0;
    for (size_t i = 0; i < nrows; i++)
        pageable |= mem[i] == GT_RMEM_PAGEABLE;
    if (c->copy_kind == GT_RCOPY_DTOH && !c->async)
        gt_sync_add(p, GT_SYNC_ROW_DTOH, site, c->tid, dur, 1);
    if (c->async && pageable)
        gt_sync_add(p, GT_SYNC_ROW_PAGEABLE, site, c->tid, dur, 1);
    if (c->copy_kind != GT_RCOPY_HTOD || c->result != 0)
        return;
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
    row->count++;
    row->host_ns += dur;
    for (size_t i = 0; i < nrows; i++) {
        row->bytes += bytes[i];
        row->gpu_ns += gpu_ns[i];
        r->summary.h2d_bytes += bytes[i];
        if (mem[i] == GT_RMEM_PAGEABLE) {
            row->pageable_bytes += bytes[i];
            r->summary.pageable_h2d_bytes += bytes[i];
        } else if (mem[i] == GT_RMEM_PINNED) {
            row->pinned_bytes += bytes[i];
        } else if (mem[i] == GT_RMEM_MAPPED) {
            row->mapped_bytes += bytes[i];
        }
    }
    if (pageable) {
        row->pageable_calls++;
        row->pageable_host_ns += dur;
    }
    if (!c->async || pageable)
        row->blocking++;
    if (c->async)
        row->async++;
    if (c->async && pageable)
        row->async_pageable++;
}

void gt_tables_xfer(struct gt_pass *p, int kind, uint64_t bytes, uint64_t ns)
{
    int band = bytes < 4096 ? 0 : bytes < 65536 ? 1 : bytes < (1u << 20) ? 2 : bytes < (16u << 20) ? 3 : 4;
    struct gt_xfer_acc *x[2] = {&p->xfer[kind][band], &p->xfer[kind][GT_XBANDS]};
    for (int i = 0; i < 2; i++) {
        x[i]->count++;
        x[i]->bytes += bytes;
        x[i]->total += ns;
    }
}

/* ---- rows ---- */

static int gt_h2d_by_host(const void *a, const void *b)
{
    const struct gt_h2d_row *x = a, *y = b;
    if (x->host_ns != y->host_ns)
        return x->host_ns > y->host_ns ? -1 : 1;
    return strcmp(x->site.text, y->site.text);
}

static int gt_graph_by_gpu(const void *a, const void *b)
{
    const struct gt_graph_row *x = a, *y = b;
    if (x->gpu_ns != y->gpu_ns)
        return x->gpu_ns > y->gpu_ns ? -1 : 1;
    return strcmp(x->site.text, y->site.text);
}

static int gt_sync_by_blocked(const void *a, const void *b)
{
    const struct gt_sync_row *x = a, *y = b;
    if (x->blocked_ns != y->blocked_ns)
        return x->blocked_ns > y->blocked_ns ? -1 : 1;
    int c = strcmp(x->kind, y->kind);
    return c ? c : strcmp(x->site.text, y->site.text);
}

static int gt_api_by_total(const void *a, const void *b)
{
    const struct gt_api_row *x = a, *y = b;
    if (x->total_ns != y->total_ns)
        return x->total_ns > y->total_ns ? -1 : 1;
    return strcmp(x->name, y->name);
}

static int gt_error_by_count(const void *a, const void *b)
{
    const struct gt_error_row *x = a, *y = b;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    int c = strcmp(x->api, y->api);
    return c ? c : strcmp(x->error, y->error);
}

static double gt_gbps(uint64_t bytes, uint64_t ns)
{
    return ns ? (double)bytes / (double)ns : 0.0;
}

int gt_tables_rows(struct gt_pass *p)
{
    struct gt_report *r = p->r;
    struct gt_summary *s = &r->summary;
    for (size_t i = 0; i < r->nh2d; i++) {
        struct gt_h2d_row *row = &r->h2d[i];
        row->bandwidth_gbps = gt_gbps(row->bytes, p->gpu_times ? row->gpu_ns : row->host_ns);
        row->small_storm = row->count >= 100 && row->bytes / row->count < 64 * 1024;
    }
    if (r->nh2d > 1)
        qsort(r->h2d, r->nh2d, sizeof(*r->h2d), gt_h2d_by_host);
    if (r->nsyncs > 1)
        qsort(r->syncs, r->nsyncs, sizeof(*r->syncs), gt_sync_by_blocked);
    if (r->ngraphs > 1)
        qsort(r->graphs, r->ngraphs, sizeof(*r->graphs), gt_graph_by_gpu);

    for (size_t i = 0; i < p->nthreads; i++) {
        const struct gt_thread_acc *th = &p->threads[i];
        s->launch_threads += th->launch_ns > 0;
        if (th->launch_ns > s->launch_host_max_ns)
            s->launch_host_max_ns = th->launch_ns;
        if (th->sync_ns > s->sync_max_ns)
            s->sync_max_ns = th->sync_ns;
    }

    size_t n = 0;
    for (size_t i = 0; i < p->napis; i++)
        n += p->apis[i].count > 0;
    if (n && !(r->api = calloc(n, sizeof(*r->api))))
        return -1;
    for (size_t i = 0; i < p->napis; i++) {
        const struct gt_api_acc *a = &p->apis[i];
        if (!a->count)
            continue;
        struct gt_api_row *row = &r->api[r->napi++];
        snprintf(row->name, sizeof(row->name), "%s", gt_scan_api_name(p->scan, (uint32_t)i));
        row->count = a->count;
        row->total_ns = a->total;
        row->mean_ns = a->total / a->count;
        row->max_ns = a->max;
        row->errors = a->errors;
    }
    if (r->napi > 1)
        qsort(r->api, r->napi, sizeof(*r->api), gt_api_by_total);

    if (p->error_of.n && !(r->errors = calloc(p->error_of.n, sizeof(*r->errors))))
        return -1;
    for (size_t i = 0; i < p->error_of.slots; i++) {
        if (!p->error_of.val[i])
            continue;
        struct gt_error_row *row = &r->errors[r->nerrors++];
        uint32_t api = (uint32_t)(p->error_of.key[i] >> 32);
        int result = (int)(uint32_t)p->error_of.key[i];
        snprintf(row->api, sizeof(row->api), "%s", gt_scan_api_name(p->scan, api));
        gt_scan_result_name(p->scan, api, result, row->error, sizeof(row->error));
        row->count = (uint64_t)p->error_of.val[i];
    }
    if (r->nerrors > 1)
        qsort(r->errors, r->nerrors, sizeof(*r->errors), gt_error_by_count);

    size_t nk = 0, nb = 0;
    for (int k = 0; k < GT_XKINDS; k++) {
        nk += p->xfer[k][GT_XBANDS].count > 0;
        for (int b = 0; b < GT_XBANDS; b++)
            nb += p->xfer[k][b].count > 0;
    }
    if ((nk && !(r->xfer_kind = calloc(nk, sizeof(*r->xfer_kind)))) ||
        (nb && !(r->xfer_size = calloc(nb, sizeof(*r->xfer_size)))))
        return -1;
    for (int k = 0; k < GT_XKINDS; k++) {
        for (int b = 0; b <= GT_XBANDS; b++) {
            const struct gt_xfer_acc *x = &p->xfer[k][b];
            if (!x->count)
                continue;
            struct gt_xfer_row *row = b == GT_XBANDS ? &r->xfer_kind[r->nxfer_kind++] : &r->xfer_size[r->nxfer_size++];
            row->kind = k;
            row->band = b == GT_XBANDS ? -1 : b;
            row->count = x->count;
            row->bytes = x->bytes;
            row->total_ns = x->total;
            row->bandwidth_gbps = gt_gbps(x->bytes, x->total);
        }
    }
    return 0;
}

void gt_tables_free(struct gt_pass *p)
{
    gt_map_free(&p->h2d_of);
    gt_map_free(&p->sync_of);
    gt_map_free(&p->graph_of);
    gt_map_free(&p->error_of);
    gt_map_free(&p->thread_of);
    free(p->apis);
    free(p->threads);
}

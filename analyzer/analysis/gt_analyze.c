/* gt_analyze.c: one trace's report (docs/report.md defines every figure).
 *
 * Read in three passes: the GPU records not kept with their call (usually
 * few), every call once (host-side tables, and each call's GPU work tied
 * to it), then the calls' host times again in start order beside the
 * operations sorted by start (gt_timeline.c: busy, gaps and their causes).
 * Memory grows with GPU operations (32 bytes each) and launches (8 bytes
 * each, for their percentiles), not with other calls or gaps. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/gt_pass.h"
#include "base/gt_fmt.h"

const char *const gt_cause_names[GT_CAUSES] = {
    "sync", "copy", "memset", "launch", "graph_launch", "alloc", "free", "event", "stream", "module", "other_cuda",
    "host", "startup", "teardown",
};

const char *const gt_cause_text[GT_CAUSES] = {
    "host blocked in a sync", "host inside a copy call", "host inside a memset call", "host busy launching",
    "host launching graphs", "host inside allocations", "host inside frees", "host inside event calls",
    "host inside stream calls", "host loading modules / JIT", "host inside other CUDA calls", "host outside CUDA",
    "start-up, before the first GPU work", "tear-down, after the last GPU work",
};

static void gt_span_add(struct gt_pass *p, uint64_t start, uint64_t end)
{
    if (!p->any || start < p->t0)
        p->t0 = start;
    if (!p->any || end > p->t1)
        p->t1 = end;
    p->any = 1;
}

/* The index of a kernel name; UINT32_MAX when out of memory. */
static uint32_t gt_kernel_index(struct gt_pass *p, const char *name)
{
    /* launches come in runs of the same kernel */
    if (p->nkernels && name == p->last_kernel_name)
        return p->last_kernel;
    p->last_kernel_name = name;
    int64_t *slot = gt_map_at(&p->kernel_of, (uint64_t)(uintptr_t)name);
    if (!slot) {
        p->failed = 1;
        return UINT32_MAX;
    }
    if (*slot)
        return p->last_kernel = (uint32_t)(*slot - 1);
    if (p->nkernels == p->capkernels) {
        size_t cap = p->capkernels ? p->capkernels * 2 : 64;
        struct gt_kernel_acc *k = realloc(p->kernels, cap * sizeof(*k));
        if (!k) {
            p->failed = 1;
            return UINT32_MAX;
        }
        p->kernels = k;
        p->capkernels = cap;
    }
    struct gt_kernel_acc *k = &p->kernels[p->nkernels];
    memset(k, 0, sizeof(*k));
    k->name = name ? name : "(unknown kernel)";
    k->first_op = -1;
    *slot = (int64_t)++p->nkernels;
    return p->last_kernel = (uint32_t)(p->nkernels - 1);
}

static int gt_xfer_kind_of(int op_kind, int copy_kind)
{
    if (op_kind == GT_OP_MEMSET)
        return GT_XK_MEMSET;
    return copy_kind >= GT_RCOPY_HTOD && copy_kind <= GT_RCOPY_PTOP ? copy_kind : GT_XK_OTHER;
}

/* A finished operation into the kernel and transfer sums. */
static void gt_op_done(struct gt_pass *p, const struct gt_op *x, uint64_t bytes)
{
    uint64_t dur = gt_op_dur(&p->ops, x);
    if (x->kind == GT_OP_KERNEL) {
        if (x->name >= p->nkernels)
            return;
        struct gt_kernel_acc *k = &p->kernels[x->name];
        if (!k->count || dur < k->min)
            k->min = dur;
        if (dur > k->max)
            k->max = dur;
        k->count++;
        k->graph_count += (x->flags & GT_OPF_GRAPH) != 0;
        k->total += dur;
        gt_kstats_add(p, x->name, dur);
    } else {
        gt_tables_xfer(p, gt_xfer_kind_of(x->kind, (int)x->name), bytes, dur);
    }
}

/* ---- pass 1: the GPU records table ---- */

static void gt_on_table_op(const struct gt_op_rec *o, void *arg)
{
    struct gt_pass *p = arg;
    if (p->failed)
        return;
    long i = gt_ops_add(&p->ops, o->kind, o->device, o->stream, o->start, o->end);
    if (i < 0) {
        p->failed = 1;
        return;
    }
    struct gt_op *x = &p->ops.v[i];
    x->name = o->kind == GT_OP_KERNEL ? gt_kernel_index(p, o->name) : o->kind == GT_OP_MEMCPY ? (uint32_t)o->copy_kind : 0;
    size_t n = (size_t)i + 1;
    uint64_t *b = realloc(p->table_bytes, n * sizeof(*b));
    if (b)
        p->table_bytes = b;
    uint8_t *s = realloc(p->table_src, n), *d = s ? realloc(p->table_dst, n) : NULL;
    if (s)
        p->table_src = s;
    if (d)
        p->table_dst = d;
    uint32_t *nx = realloc(p->table_next, n * sizeof(*nx));
    if (nx)
        p->table_next = nx;
    const char **kn = p->o->tap ? realloc(p->table_kname, n * sizeof(*kn)) : NULL;
    if (kn)
        p->table_kname = kn;
    if (!b || !s || !d || !nx || (p->o->tap && !kn)) {
        p->failed = 1;
        return;
    }
    if (kn)
        kn[i] = o->name;
    p->table_bytes[i] = o->bytes;
    p->table_src[i] = (uint8_t)o->src_mem;
    p->table_dst[i] = (uint8_t)o->dst_mem;
    p->table_next[i] = 0;
    if (o->link) {
        int64_t *first = gt_map_at(&p->link_first, (uint64_t)o->link);
        if (!first) {
            p->failed = 1;
            return;
        }
        p->table_next[i] = (uint32_t)*first;
        *first = i + 1;
    }
    p->ntable = n;
}

/* ---- pass 2: every call ---- */

/* The host memory a copy's row touched (the memcpys view's host_mem):
 * CUPTI's memory kind where its record gives one, else the call's. */
static int gt_row_mem(const struct gt_rec *c, int has_gpu, int src, int dst)
{
    static const int cupti_mem[16] = {[1] = GT_RMEM_PAGEABLE + 1, [2] = GT_RMEM_PINNED + 1,
                                      [5] = GT_RMEM_MANAGED + 1};
    if (c->host_mem == GT_RMEM_MAPPED)
        return GT_RMEM_MAPPED; /* CUPTI calls mapped memory pinned */
    if (has_gpu) {
        if ((c->copy_kind == GT_RCOPY_HTOD || c->copy_kind == GT_RCOPY_HTOH) && cupti_mem[src & 15])
            return cupti_mem[src & 15] - 1;
        if (c->copy_kind == GT_RCOPY_DTOH && cupti_mem[dst & 15])
            return cupti_mem[dst & 15] - 1;
    }
    return c->host_mem;
}

static void gt_copy_row(struct gt_pass *p, struct gt_copy_rows *rows, uint64_t bytes, uint64_t gpu_ns, int mem)
{
    if (rows->n == rows->cap) {
        size_t cap = rows->cap ? rows->cap * 2 : 16;
        uint64_t *b = realloc(rows->bytes, cap * sizeof(*b));
        if (b)
            rows->bytes = b;
        uint64_t *g = realloc(rows->gpu_ns, cap * sizeof(*g));
        if (g)
            rows->gpu_ns = g;
        int *m = realloc(rows->mem, cap * sizeof(*m));
        if (m)
            rows->mem = m;
        if (!b || !g || !m) {
            p->failed = 1;
            return;
        }
        rows->cap = cap;
    }
    rows->bytes[rows->n] = bytes;
    rows->gpu_ns[rows->n] = gpu_ns;
    rows->mem[rows->n++] = mem;
}

struct gt_call_ctx {
    struct gt_pass *p;
    const struct gt_rec *c;
    struct gt_pair *pair;   /* counted launches: its (kernel, site) */
    uint32_t site, kernel;
    int counted_launch;     /* a launch that succeeded and was not captured */
    long first_op;
    struct gt_copy_rows *rows;
};

/* A kernel to the on_kernel hook (the ranks' collectives). */
static void gt_seen(struct gt_pass *p, const struct gt_op *op, uint64_t launch, int64_t tid)
{
    if (!p->o->on_kernel || op->kind != GT_OP_KERNEL || op->name >= p->nkernels)
        return; /* (a kernel tied to a call of another kind, in a damaged trace, has no name) */
    struct gt_kernel_seen k = {.kernel = op->name, .name = p->kernels[op->name].name,
                               .device = p->ops.slot_device[op->slot], .stream = p->ops.slot_stream[op->slot],
                               .tid = tid, .launch = launch, .start = op->start, .end = gt_op_end(&p->ops, op)};
    p->o->on_kernel(p->o->on_kernel_arg, &k);
}

/* Ties operation i to the call being read. */
static void gt_attach(struct gt_call_ctx *x, long i, uint64_t bytes, int src, int dst)
{
    struct gt_pass *p = x->p;
    const struct gt_rec *c = x->c;
    struct gt_op *op = &p->ops.v[i];
    uint64_t dur = gt_op_dur(&p->ops, op);
    op->site = x->site;
    op->api = c->api < GT_OP_NO_API ? (uint16_t)c->api : GT_OP_NO_API - 1;
    op->flags |= GT_OPF_LINKED;
    if (x->first_op < 0)
        x->first_op = i;
    switch (c->cat) {
    case GT_RC_GRAPH:
        op->flags |= GT_OPF_GRAPH;
        if (c->result == 0) {
            struct gt_graph_row *g = gt_graph_row_of(p, x->site);
            if (g) {
                g->ops++;
                g->kernels += op->kind == GT_OP_KERNEL;
                g->gpu_ns += dur;
            }
        }
        break;
    case GT_RC_LAUNCH:
        op->name = x->kernel;
        if (gt_op_set_call_end(&p->ops, op, c->end) < 0)
            p->failed = 1;
        if (x->counted_launch && dur < c->end - c->start)
            op->flags |= GT_OPF_LB_CAND;
        if (x->pair)
            gt_pair_gpu(x->pair, dur, op->start > c->end ? op->start - c->end : 0);
        break;
    case GT_RC_MEMCPY:
        op->name = (uint32_t)c->copy_kind;
        gt_copy_row(p, x->rows, bytes, dur, gt_row_mem(c, 1, src, dst));
        break;
    default:
        break;
    }
    gt_seen(p, op, c->start, c->tid);
}

static void gt_call_ops(struct gt_pass *p, const struct gt_rec *c)
{
    struct gt_copy_rows *rows = &p->rows;
    rows->n = 0;
    if (p->o->win && !gt_window_has(p->o->win, c->start)) {
        /* not in the window: nor is the GPU work it made */
        int64_t first = p->gpu_times && c->link && p->link_first.n ? gt_map_get(&p->link_first, (uint64_t)c->link) : 0;
        for (uint32_t i1 = (uint32_t)first; i1; i1 = p->table_next[i1 - 1]) {
            if (p->ops.v[i1 - 1].flags & GT_OPF_LINKED)
                break;
            p->ops.v[i1 - 1].flags |= GT_OPF_DROP;
        }
        return;
    }
    if (p->o->tap)
        p->o->tap->call(c, gt_scan_api_name(p->scan, c->api), p->o->tap->arg);
    gt_span_add(p, c->start, c->end > c->start ? c->end : c->start);
    /* every call's site: a gap the host spent inside CUDA is its calls' */
    uint32_t site = gt_site_index(p->sites, c->site_key);
    if (site == UINT32_MAX) {
        p->failed = 1;
        return;
    }
    gt_spanlog_add(&p->spans, c->cat, c->start, c->end, site, c->api);
    gt_steps_call(p->steps, c);
    gt_tables_call(p, c);
    if (c->cat == GT_RC_ALLOC && c->result == 0 && c->alloc_kind == 5) {
        p->r->summary.mapped_host_allocs++;
        p->r->summary.mapped_host_bytes += c->bytes;
    }
    int makes_work = c->cat == GT_RC_LAUNCH || c->cat == GT_RC_MEMCPY || c->cat == GT_RC_MEMSET ||
                     c->cat == GT_RC_GRAPH;
    /* GPU records tied to a call of another kind still belong to it */
    if (!makes_work && !(p->gpu_times && c->link && p->link_first.n))
        return;
    struct gt_call_ctx x = {.p = p, .c = c, .first_op = -1, .rows = rows};
    x.site = site;
    x.counted_launch = c->cat == GT_RC_LAUNCH && c->result == 0 && !c->captured;
    if (c->cat == GT_RC_LAUNCH) {
        x.kernel = gt_kernel_index(p, c->kernel);
        if (x.kernel == UINT32_MAX)
            return;
    }
    if (x.counted_launch) {
        x.pair = gt_pair_of(&p->pairs, x.kernel, x.site);
        if (!x.pair || gt_pair_launch(&p->pairs, x.pair, c->end - c->start) < 0) {
            p->failed = 1;
            return;
        }
    }
    if (p->gpu_times) {
        if (c->has_op) {
            long i = gt_ops_add(&p->ops, c->op.kind, c->op.device, c->op.stream, c->op.start, c->op.end);
            if (i < 0) {
                p->failed = 1;
                return;
            }
            gt_attach(&x, i, c->op.bytes, c->op.src_mem, c->op.dst_mem);
            gt_op_done(p, &p->ops.v[i], c->op.bytes);
            gt_span_add(p, c->op.start, c->op.end > c->op.start ? c->op.end : c->op.start);
        }
        int64_t *first = c->link ? gt_map_at(&p->link_first, (uint64_t)c->link) : NULL;
        /* a damaged trace may give two calls one link: the first takes it */
        for (uint32_t i1 = first ? (uint32_t)*first : 0; i1; i1 = p->table_next[i1 - 1]) {
            if (p->ops.v[i1 - 1].flags & (GT_OPF_LINKED | GT_OPF_DROP))
                break;
            gt_attach(&x, (long)i1 - 1, p->table_bytes[i1 - 1], p->table_src[i1 - 1], p->table_dst[i1 - 1]);
        }
    } else if (c->result == 0 && !c->captured && c->cat != GT_RC_GRAPH) {
        /* without GPU times, the call's own interval stands in */
        int kind = c->cat == GT_RC_LAUNCH ? GT_OP_KERNEL : c->cat == GT_RC_MEMCPY ? GT_OP_MEMCPY : GT_OP_MEMSET;
        long i = gt_ops_add(&p->ops, kind, c->device, c->stream, c->start, c->end);
        if (i < 0) {
            p->failed = 1;
            return;
        }
        struct gt_op *op = &p->ops.v[i];
        op->site = x.site;
        op->api = c->api < GT_OP_NO_API ? (uint16_t)c->api : GT_OP_NO_API - 1;
        op->flags |= GT_OPF_LINKED;
        op->name = kind == GT_OP_KERNEL ? x.kernel : kind == GT_OP_MEMCPY ? (uint32_t)c->copy_kind : 0;
        gt_seen(p, op, c->start, c->tid);
        gt_op_done(p, op, c->bytes);
    }
    if (x.counted_launch) {
        struct gt_kernel_acc *k = &p->kernels[x.kernel];
        if (!k->has_first || c->start < k->first_start) {
            k->has_first = 1;
            k->first_start = c->start;
            k->first_api = c->end - c->start;
            /* the operation's number in the sort (gt_call_done) */
            k->first_op = !p->gpu_times || x.first_op < 0 ? -1
                          : (size_t)x.first_op < p->ntable ? x.first_op
                          : (long)(p->ncallops + (uint64_t)x.first_op);
        }
    }
    if (c->cat == GT_RC_MEMCPY) {
        if (!rows->n)
            gt_copy_row(p, rows, c->bytes, 0, c->host_mem);
        gt_tables_copy_call(p, c, x.site, rows->bytes, rows->gpu_ns, rows->mem, rows->n);
    }
}

/* Every call once: its tables, its GPU work; then the operations it made
 * (after the table's, in the array) go to the sort, numbered on from the
 * table's in the order they were made, and leave the array. */
static void gt_on_call(const struct gt_rec *c, void *arg)
{
    struct gt_pass *p = arg;
    if (p->failed)
        return;
    gt_call_ops(p, c);
    for (size_t i = p->ntable; i < p->ops.n; i++)
        gt_opsort_add(&p->sorted, &p->ops.v[i], p->ncallops + i);
    p->ncallops += p->ops.n - p->ntable;
    p->ops.n = p->ntable;
}

/* ---- pass 3: the timeline ---- */

static void gt_on_bound(const struct gt_op *op, void *arg)
{
    struct gt_pass *p = arg;
    struct gt_pair *pr = gt_pair_of(&p->pairs, op->name, op->site);
    if (!pr) {
        p->failed = 1;
        return;
    }
    /* only launches counted as launches are rows of the table */
    if (!pr->count)
        return;
    pr->bound++;
    p->r->summary.launch_bound++;
}

static double gt_pct(uint64_t part, uint64_t whole)
{
    return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static const char *gt_api_text(struct gt_pass *p, uint16_t api)
{
    return api == GT_OP_NO_API ? "" : gt_scan_api_name(p->scan, api);
}

static int gt_gap_by_dur(const void *a, const void *b)
{
    const struct gt_gap *x = a, *y = b;
    if (x->dur_ns != y->dur_ns)
        return x->dur_ns > y->dur_ns ? -1 : 1;
    return x->start_ns < y->start_ns ? -1 : x->start_ns > y->start_ns;
}

static int gt_idle_by_time(const void *a, const void *b)
{
    const struct gt_idle_site *x = a, *y = b;
    if (x->idle_ns != y->idle_ns)
        return x->idle_ns > y->idle_ns ? -1 : 1;
    return strcmp(x->site.text, y->site.text);
}

static int gt_stream_cmp(const void *a, const void *b)
{
    const struct gt_stream_row *x = a, *y = b;
    if (x->device != y->device)
        return x->device < y->device ? -1 : 1;
    return x->stream < y->stream ? -1 : x->stream > y->stream;
}

static int gt_timeline_rows(struct gt_pass *p, const struct gt_tl_result *tl)
{
    struct gt_report *r = p->r;
    struct gt_summary *s = &r->summary;
    uint64_t span = s->span_ns;
    s->devices = tl->ndevtime;
    s->device_ns = span * tl->ndevtime;
    s->busy_ns = tl->busy_ns;
    s->idle_ns = s->device_ns - (tl->busy_ns < s->device_ns ? tl->busy_ns : s->device_ns);
    s->idle_pct = gt_pct(s->idle_ns, s->device_ns);
    memcpy(s->idle_by_cause, tl->idle_by_cause, sizeof(s->idle_by_cause));

    if (tl->ndevices && !(r->devices = calloc(tl->ndevices, sizeof(*r->devices))))
        return -1;
    for (size_t i = 0; i < tl->ndevices; i++) {
        struct gt_device_row *d = &r->devices[r->ndevices++];
        const struct gt_tl_device *x = &tl->devices[i];
        d->device = x->device;
        d->busy_ns = x->busy_ns;
        d->idle_ns = span - (x->busy_ns < span ? x->busy_ns : span);
        d->idle_pct = gt_pct(d->idle_ns, span);
        memcpy(d->idle_by_cause, x->idle_by_cause, sizeof(d->idle_by_cause));
        d->compute_ns = x->compute_ns;
        d->copy_ns = x->copy_ns;
        d->overlap_ns = x->overlap_ns;
        d->overlap_pct = gt_pct(x->overlap_ns, x->copy_ns);
    }

    if (p->ops.nslots && !(r->streams = calloc(p->ops.nslots, sizeof(*r->streams))))
        return -1;
    for (size_t i = 0; i < p->ops.nslots; i++) {
        if (!tl->slot_ops[i])
            continue;
        struct gt_stream_row *x = &r->streams[r->nstreams++];
        x->device = p->ops.slot_device[i];
        x->stream = p->ops.slot_stream[i];
        x->ops = tl->slot_ops[i];
        x->busy_ns = tl->slot_busy[i];
        x->busy_pct = gt_pct(x->busy_ns, span);
    }
    if (r->nstreams > 1)
        qsort(r->streams, r->nstreams, sizeof(*r->streams), gt_stream_cmp);

    size_t n = 0;
    for (size_t i = 0; i < tl->nsites; i++)
        n += tl->site_gaps[i] > 0;
    if (n && !(r->idle_sites = calloc(n, sizeof(*r->idle_sites))))
        return -1;
    for (size_t i = 0; i < tl->nsites; i++) {
        if (!tl->site_gaps[i])
            continue;
        struct gt_idle_site *x = &r->idle_sites[r->nidle_sites++];
        x->site = *gt_site_by_index(p->sites, (uint32_t)i);
        x->idle_ns = tl->site_idle[i];
        x->gaps = tl->site_gaps[i];
    }
    if (r->nidle_sites > 1)
        qsort(r->idle_sites, r->nidle_sites, sizeof(*r->idle_sites), gt_idle_by_time);

    if (tl->ngaps && !(r->gaps = calloc(tl->ngaps, sizeof(*r->gaps))))
        return -1;
    for (size_t i = 0; i < tl->ngaps; i++) {
        const struct gt_tl_gap *g = &tl->gaps[i];
        struct gt_gap *out = &r->gaps[r->ngaps++];
        out->device = (int)g->device;
        out->start_ns = g->start;
        out->offset_ns = g->start > s->origin_ns ? g->start - s->origin_ns : 0;
        out->dur_ns = g->dur;
        out->cause = g->cause;
        out->has_before = g->before_site != UINT32_MAX;
        out->has_after = g->after_site != UINT32_MAX;
        if (out->has_before)
            out->before = *gt_site_by_index(p->sites, g->before_site);
        if (out->has_after)
            out->after = *gt_site_by_index(p->sites, g->after_site);
        snprintf(out->before_api, sizeof(out->before_api), "%s", gt_api_text(p, g->before_api));
        snprintf(out->after_api, sizeof(out->after_api), "%s", gt_api_text(p, g->after_api));
        out->has_spent = g->spent_site != UINT32_MAX;
        if (out->has_spent)
            out->spent = *gt_site_by_index(p->sites, g->spent_site);
        snprintf(out->spent_api, sizeof(out->spent_api), "%s", gt_api_text(p, g->spent_api));
    }
    if (r->ngaps > 1)
        qsort(r->gaps, r->ngaps, sizeof(*r->gaps), gt_gap_by_dur);
    return 0;
}

static int gt_launch_tables(struct gt_pass *p)
{
    struct gt_report *r = p->r;
    const char **names = malloc((p->nkernels + 1) * sizeof(*names));
    uint64_t *first = malloc((p->nkernels + 1) * sizeof(*first));
    int rc = -1;
    if (names && first) {
        for (size_t i = 0; i < p->nkernels; i++) {
            names[i] = p->kernels[i].name;
            first[i] = p->kernels[i].first_api;
        }
        long nk = gt_launch_rows(&p->pairs, p->sites, names, first, 0, &r->launch_kernels);
        long ns = nk < 0 ? -1 : gt_launch_rows(&p->pairs, p->sites, names, first, 1, &r->launch_sites);
        if (nk >= 0 && ns >= 0) {
            r->nlaunch_kernels = (size_t)nk;
            r->nlaunch_sites = (size_t)ns;
            rc = 0;
        }
    }
    free(names);
    free(first);
    return rc;
}

/* Without GPU times the report reads no operation records; a tap still
 * gets those that start in the window. */
static void gt_on_tap_op(const struct gt_op_rec *o, void *arg)
{
    struct gt_pass *p = arg;
    if (!p->o->win || gt_window_has(p->o->win, o->start))
        p->o->tap->op(o, p->o->tap->arg);
}

/* A table operation the report reads, to the tap as it was read. */
static void gt_tap_table_op(struct gt_pass *p, size_t i)
{
    const struct gt_op *op = &p->ops.v[i];
    struct gt_op_rec o = {
        .kind = op->kind, .device = p->ops.slot_device[op->slot], .stream = p->ops.slot_stream[op->slot],
        .start = op->start, .end = gt_op_end(&p->ops, op), .name = p->table_kname[i],
        .bytes = p->table_bytes[i], .copy_kind = op->kind == GT_OP_MEMCPY ? (int)op->name : 0,
        .src_mem = p->table_src[i], .dst_mem = p->table_dst[i],
    };
    p->o->tap->op(&o, p->o->tap->arg);
}

static int gt_analyze_passes(struct gt_pass *p)
{
    struct gt_report *r = p->r;
    if (p->gpu_times && gt_scan_ops(p->scan, gt_on_table_op, p) < 0)
        return -1;
    if (!p->gpu_times && p->o->tap && gt_scan_ops(p->scan, gt_on_tap_op, p) < 0)
        return -1;
    if (!p->failed && gt_scan_calls(p->scan, gt_on_call, p) < 0)
        return -1;
    if (p->failed)
        return -1;
    /* the GPU records no recorded call made, and each kernel's first launch */
    size_t dropped = 0;
    for (size_t i = 0; i < p->ntable; i++) {
        struct gt_op *op = &p->ops.v[i];
        if (!(op->flags & (GT_OPF_LINKED | GT_OPF_DROP)) && p->o->win && !gt_window_has(p->o->win, op->start))
            op->flags |= GT_OPF_DROP;
        if (op->flags & GT_OPF_DROP) {
            dropped++;
            continue;
        }
        if (p->o->tap)
            gt_tap_table_op(p, i);
        if (!(op->flags & GT_OPF_LINKED)) {
            op->site = p->site_nocall;
            gt_seen(p, op, op->start, -1);
        }
        gt_span_add(p, op->start, gt_op_end(&p->ops, op));
        gt_op_done(p, op, p->table_bytes[i]);
    }
    (void)dropped;
    for (size_t i = 0; i < p->ntable; i++)
        if (!(p->ops.v[i].flags & GT_OPF_DROP))
            gt_opsort_add(&p->sorted, &p->ops.v[i], i);
    p->ops.n = 0;
    /* each kernel's first launch is no launch-bound candidate */
    uint64_t *first = malloc((p->nkernels + 1) * sizeof(*first));
    size_t nfirst = 0;
    if (!first)
        return -1;
    for (size_t k = 0; k < p->nkernels; k++)
        if (p->kernels[k].first_op >= 0)
            first[nfirst++] = (uint64_t)p->kernels[k].first_op;
    int begun = gt_opsort_begin(&p->sorted, first, nfirst);
    free(first);
    if (begun < 0)
        return -1;
    free(p->table_bytes);
    free(p->table_src);
    free(p->table_dst);
    free(p->table_next);
    free(p->table_kname);
    p->table_kname = NULL;
    p->table_bytes = NULL;
    p->table_src = p->table_dst = NULL;
    p->table_next = NULL;
    gt_map_free(&p->link_first);

    /* a window's span covers the window itself, idle or not; only its
     * time inside the window counts */
    const struct gt_analyze_opts *o = p->o;
    const struct gt_window *w = o->win;
    uint64_t w0 = w && w->n ? w->a[0] : 0, w1 = w && w->n ? w->b[w->n - 1] : UINT64_MAX;
    if (w0 && (!p->any || w0 < p->t0))
        p->t0 = w0;
    if (w1 != UINT64_MAX && (!p->any || w1 > p->t1))
        p->t1 = w1;
    if (w && !p->any && w0 && w1 != UINT64_MAX)
        p->any = 1;
    if (p->any && p->t1 < p->t0)
        p->t1 = p->t0;
    r->summary.first_ns = p->any ? p->t0 : 0;
    /* one origin for every time said from a start: the one --from, --to
     * and export count from (win_origin: the trace's start) */
    uint64_t origin = p->o->win_origin > 0 ? (uint64_t)p->o->win_origin : 0;
    r->summary.origin_ns = origin && origin <= r->summary.first_ns ? origin : r->summary.first_ns;
    r->summary.span_ns = !p->any ? 0 : w ? gt_window_len(w, p->t0, p->t1) : p->t1 - p->t0;
    struct gt_sweep *sw = gt_sweep_new(&p->ops, &p->sorted, p->t0, p->t1, p->o->min_gap_ns, gt_site_count(p->sites),
                                       p->site_teardown, gt_on_bound, p);
    if (!sw)
        return -1;
    if (p->steps)
        gt_sweep_on_gap(sw, gt_steps_gap, p->steps);
    if (o->busy_slices) {
        if (gt_busy_init(&r->busy, o->busy_slices, r->summary.first_ns, r->summary.span_ns, p->ops.slot_device,
                         p->ops.nslots) < 0) {
            gt_sweep_free(sw);
            return -1;
        }
        gt_sweep_on_run(sw, gt_busy_run, &r->busy);
    }
    if (w)
        gt_sweep_window(sw, w);
    struct gt_tl_result tl;
    memset(&tl, 0, sizeof(tl));
    /* the calls again, in start order: from the log made while reading
     * them, unless it ran out of memory or would need seconds of calls
     * held to put them in order; then sorted by SQLite */
    int rc = !p->spans.failed && p->spans.lateness <= 1000000000ull
                 ? gt_spanlog_replay(&p->spans, gt_sweep_call, sw)
                 : gt_spans_scan(p->scan, p->sites, gt_sweep_call, sw);
    gt_spanlog_free(&p->spans);
    if (rc == 0)
        rc = gt_sweep_finish(sw, &tl);
    gt_sweep_free(sw);
    if (rc == 0 && !p->failed)
        rc = gt_timeline_rows(p, &tl);
    if (rc == 0 && !p->failed)
        rc = gt_steps_finish(p->steps, p->t0, p->t1, p->sorted.n > 0, r);
    if (rc == 0 && !p->failed &&
        (gt_kstats_rows(p) < 0 || gt_launch_tables(p) < 0 || gt_tables_rows(p) < 0))
        rc = -1;
    if (rc == 0 && !p->failed) {
        struct gt_summary *s = &r->summary;
        s->launch_bound_pct = gt_pct(s->launch_bound, s->launches);
        s->launch_host_pct = gt_pct(s->launch_host_max_ns, s->span_ns);
        s->sync_pct = gt_pct(s->sync_max_ns, s->span_ns);
        gt_notes(p);
        rc = gt_findings(p, tl.site_cause_idle, tl.nsites);
    }
    gt_tl_result_free(&tl);
    return rc < 0 || p->failed ? -1 : 0;
}

/* The first line says which window the report read. */
static void gt_window_note(struct gt_report *r, const struct gt_analyze_opts *o)
{
    char a[32], b[32], n[48] = "";
    const struct gt_window *w = o->win;
    r->windowed = 1;
    r->win_intervals = w->n;
    r->win_from = w->n ? w->a[0] : 0;
    r->win_to = w->n ? w->b[w->n - 1] : 0;
    uint64_t origin = o->win_origin > 0 ? (uint64_t)o->win_origin : 0;
    gt_fmt_duration((int64_t)(r->win_from > origin ? r->win_from - origin : 0), a, sizeof(a));
    if (r->win_to == UINT64_MAX)
        snprintf(b, sizeof(b), "the end");
    else
        gt_fmt_duration((int64_t)(r->win_to > origin ? r->win_to - origin : 0), b, sizeof(b));
    if (w->n > 1)
        snprintf(n, sizeof(n), " (in %zu ranges)", w->n);
    if (r->nnotes < GT_MAX_NOTES)
        snprintf(r->notes[r->nnotes++], sizeof(r->notes[0]),
                 "window: from %s to %s after the trace's start%s: the calls made in it, their GPU work, busy and "
                 "idle time inside it", a, b, n);
}

/* Keeps the first `top` rows of each table, counting what it leaves out. */
#define GT_KEEP(n, more) do { if (top && (n) > top) { (more) = (n) - top; (n) = top; } } while (0)

static void gt_truncate(struct gt_report *r, size_t top)
{
    struct gt_more *m = &r->more;
    GT_KEEP(r->nfindings, m->findings);
    GT_KEEP(r->ngaps, m->gaps);
    GT_KEEP(r->nidle_sites, m->idle_sites);
    GT_KEEP(r->nkernels, m->kernels);
    GT_KEEP(r->nlaunch_kernels, m->launch_kernels);
    GT_KEEP(r->nlaunch_sites, m->launch_sites);
    GT_KEEP(r->ngraphs, m->graphs);
    GT_KEEP(r->ngnodes, m->graph_nodes);
    GT_KEEP(r->nxfer_kind, m->xfer_kind);
    GT_KEEP(r->nxfer_size, m->xfer_size);
    GT_KEEP(r->nh2d, m->h2d);
    GT_KEEP(r->nsyncs, m->syncs);
    GT_KEEP(r->nstreams, m->streams);
    GT_KEEP(r->napi, m->api);
    GT_KEEP(r->nerrors, m->errors);
    GT_KEEP(r->nphases, m->phases);
    GT_KEEP(r->nhost_stacks, m->host_stacks);
}

int gt_analyze(struct gt_trace *t, const struct gt_analyze_opts *o, struct gt_report *r)
{
    memset(r, 0, sizeof(*r));
    char *timing = gt_trace_meta(t, "gpu_timing");
    r->summary.gpu_times = timing && strcmp(timing, "cupti") == 0;
    free(timing);
    r->partial = gt_trace_meta_int(t, "complete", 0) != 1;
    int64_t startup = gt_trace_meta_int(t, "tracer_startup_ns", 0);
    r->summary.tracer_startup_ns = startup > 0 ? (uint64_t)startup : 0;
    struct gt_sites sites;
    if (gt_sites_init(&sites, t->db, t->schema_version) < 0) {
        gt_trace_sql_error(t, "stacks");
        gt_sites_free(&sites);
        return -1;
    }
    struct gt_pass p;
    memset(&p, 0, sizeof(p));
    p.r = r;
    p.t = t;
    p.o = o;
    p.sites = &sites;
    p.gpu_times = r->summary.gpu_times;
    p.scan = gt_scan_open(t);
    p.site_nocall = gt_site_pseudo(&sites, "(no recorded call)");
    p.site_teardown = gt_site_pseudo(&sites, "(no GPU work after)");
    gt_opsort_init(&p.sorted, &p.ops);
    gt_kstats_init(&p);
    int rc = -1;
    if (!p.scan)
        fprintf(stderr, "gputrace: %s: cannot read the trace's tables\n", t->path);
    else if (p.site_nocall == UINT32_MAX || p.site_teardown == UINT32_MAX)
        p.failed = 1;
    else if (gt_steps_open(t, o->step_glob, &sites, o->win, &p.steps) < 0)
        rc = -1;
    else
        rc = gt_analyze_passes(&p);
    if (rc == 0 && gt_phases(t, p.gpu_times, o, r) < 0)
        rc = -1;
    if (rc == 0 && gt_graph_nodes(t, &sites, p.site_nocall, r) < 0)
        rc = -1;
    if (rc == 0 && gt_host_samples(t, r) < 0)
        rc = -1;
    if (rc == 0 && o->win)
        gt_window_note(r, o);
    if (rc < 0 && p.failed)
        fprintf(stderr, "gputrace: %s: out of memory\n", t->path);
    gt_opsort_free(&p.sorted);
    gt_kstats_free(&p);
    gt_ops_free(&p.ops);
    free(p.table_bytes);
    free(p.table_src);
    free(p.table_dst);
    free(p.table_next);
    free(p.table_kname);
    gt_map_free(&p.link_first);
    gt_map_free(&p.kernel_of);
    free(p.kernels);
    gt_pairs_free(&p.pairs);
    gt_tables_free(&p);
    gt_spanlog_free(&p.spans);
    free(p.rows.bytes);
    free(p.rows.gpu_ns);
    free(p.rows.mem);
    gt_scan_close(p.scan);
    gt_steps_free(p.steps);
    gt_sites_free(&sites);
    if (rc < 0) {
        gt_report_free(r);
        return -1;
    }
    gt_truncate(r, o->top);
    return 0;
}

void gt_report_free(struct gt_report *r)
{
    free(r->findings);
    free(r->gaps);
    free(r->idle_sites);
    free(r->kernels);
    free(r->launch_kernels);
    free(r->launch_sites);
    free(r->xfer_kind);
    free(r->xfer_size);
    free(r->graphs);
    free(r->gnodes);
    free(r->h2d);
    free(r->syncs);
    free(r->streams);
    free(r->devices);
    free(r->api);
    free(r->errors);
    free(r->phases);
    free(r->phase_spans);
    free(r->steps.slowest);
    free(r->host_stacks);
    gt_busy_free(&r->busy);
    free(r->flame);
    free(r->flame_text);
    memset(r, 0, sizeof(*r));
}

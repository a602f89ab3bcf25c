/* gt_analyze.c: one trace's report (docs/report.md defines every figure).
 *
 * Read in three passes: the GPU records not kept with their call (usually
 * few), every call once (host-side tables, and each call's GPU work tied
 * to it), then the calls' host times again in start order beside the
 * operations sorted by start (gt_timeline.c: busy, gaps and their causes);
 * the tables become rows in gt_analyze_rows.c.
 *
 * Memory does not grow with the calls: what needs every call or operation
 * in an order (the operations by start for the sweep, kernel durations for
 * medians, launch host times for percentiles, the calls' host times for
 * the second read) goes through sorts and logs that spill to temporary
 * files past a fixed size (gt_opsort, gt_extsort, gt_spans); the rest is
 * per kernel, site, stream or thread. The GPU records table's operations
 * (the few not kept in their call's row) stay in memory while the calls
 * are read, to be tied to them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/gt_pass.h"
#include "base/gt_fmt.h"

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
    /* the GPU records no recorded call made; then into the sort, numbered
     * by their place in the table (before every call's) */
    for (size_t i = 0; i < p->ntable; i++) {
        struct gt_op *op = &p->ops.v[i];
        if (!(op->flags & (GT_OPF_LINKED | GT_OPF_DROP)) && p->o->win && !gt_window_has(p->o->win, op->start))
            op->flags |= GT_OPF_DROP;
        if (op->flags & GT_OPF_DROP)
            continue;
        if (p->o->tap)
            gt_tap_table_op(p, i);
        if (!(op->flags & GT_OPF_LINKED)) {
            op->site = p->site_nocall;
            gt_seen(p, op, op->start, -1);
        }
        gt_span_add(p, op->start, gt_op_end(&p->ops, op));
        gt_op_done(p, op, p->table_bytes[i]);
        gt_opsort_add(&p->sorted, op, i);
    }
    /* the table's operations are in the sort now */
    free(p->ops.v);
    p->ops.v = NULL;
    p->ops.n = p->ops.cap = 0;
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
        rc = gt_rows_timeline(p, &tl);
    if (rc == 0 && !p->failed)
        rc = gt_steps_finish(p->steps, p->t0, p->t1, p->sorted.n > 0, r);
    if (rc == 0 && !p->failed &&
        (gt_kstats_rows(p) < 0 || gt_rows_launch(p) < 0 || gt_tables_rows(p) < 0))
        rc = -1;
    if (rc == 0 && !p->failed) {
        struct gt_summary *s = &r->summary;
        s->launch_bound_pct = gt_pct_of(s->launch_bound, s->launches);
        s->launch_host_pct = gt_pct_of(s->launch_host_max_ns, s->span_ns);
        s->sync_pct = gt_pct_of(s->sync_max_ns, s->span_ns);
        gt_notes(p);
        rc = gt_findings(p, tl.site_cause_idle, tl.nsites);
    }
    gt_tl_result_free(&tl);
    return rc < 0 || p->failed ? -1 : 0;
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
    if (rc == 0 && gt_categories(t, p.gpu_times, o, r) < 0)
        rc = -1;
    if (rc == 0 && o->win)
        gt_report_window_note(r, o);
    /* a sort that failed has said why (its temporary file, or memory) */
    int sort_failed = p.sorted.xs.failed || p.kdur.failed || p.pairs.by_kernel.failed || p.pairs.by_site.failed;
    if (rc < 0 && p.failed && !sort_failed)
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
    gt_report_truncate(r, o->top);
    return 0;
}

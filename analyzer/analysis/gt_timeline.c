/* gt_timeline.c: the sweep (see gt_timeline.h).
 *
 * Times inside are relative to the span's start, so the running sums of
 * host time fit 64 bits however many calls are active. */
#include <stdlib.h>
#include <string.h>

#include "analysis/gt_timeline.h"
#include "trace/gt_scan.h"

int gt_cause_of_category(int cat)
{
    static const int causes[GT_RC_COUNT] = {
        [GT_RC_OTHER] = GT_CAUSE_OTHER, [GT_RC_LAUNCH] = GT_CAUSE_LAUNCH, [GT_RC_MEMCPY] = GT_CAUSE_COPY,
        [GT_RC_MEMSET] = GT_CAUSE_MEMSET, [GT_RC_SYNC] = GT_CAUSE_SYNC, [GT_RC_ALLOC] = GT_CAUSE_ALLOC,
        [GT_RC_FREE] = GT_CAUSE_FREE, [GT_RC_STREAM] = GT_CAUSE_STREAM, [GT_RC_EVENT] = GT_CAUSE_EVENT,
        [GT_RC_GRAPH] = GT_CAUSE_GRAPH, [GT_RC_MODULE] = GT_CAUSE_MODULE,
    };
    return cat >= 0 && cat < GT_RC_COUNT ? causes[cat] : GT_CAUSE_OTHER;
}

/* A call still running: when it ends, its whole length joins `done`. */
struct gt_active {
    uint64_t end, start;
    int cause;
    uint32_t site;
    uint16_t api;
};

/* The time calls of one site and category spent inside a timeline's
 * open gap (calls that have ended), and its longest call's entry point. */
struct gt_cover {
    uint32_t site;
    int cause;
    uint16_t api;
    uint64_t ns, longest;
};

/* One timeline: a device's operations, or all of them. */
struct gt_tl {
    int64_t device;          /* -1: the GPU as a whole */
    int whole, listed;       /* the GPU as a whole (any device busy) / a device's, its gaps listed */
    int counts;              /* adds to device time: each device's, or the one timeline of no device */
    int has_run;
    uint64_t run_start;      /* the busy run the sweep is in (relative) */
    uint64_t run_end;
    uint32_t end_site;       /* the operation that ends that run */
    uint16_t end_api;
    int open;                /* F at run_end is taken: the time has passed it */
    uint64_t f_open[GT_CALL_CAUSES];
    /* the calls that ended inside the gap the timeline is in, by site and
     * category: a few entries (the sites a gap's calls come from) */
    struct gt_cover *cov;
    size_t ncov, capcov;
    uint64_t busy, idle_by_cause[GT_CAUSES];
    /* compute/copy overlap: kernels' and copies' run ends, the last time */
    uint64_t k_end, c_end, t_prev, compute, copy, overlap;
};

struct gt_sweep {
    const struct gt_ops *ops;    /* the slots and long durations */
    struct gt_opsort *src;       /* the operations, in start order */
    uint64_t t0, t1, min_gap;
    uint32_t teardown_site;
    gt_tl_bound_fn bound;
    void *arg;
    struct gt_tl *tl;        /* devices, then the whole GPU when more than one device */
    size_t ntl, ndev;
    size_t *tl_of_slot;      /* the device timeline of each slot */
    uint64_t *slot_end;      /* each stream's run end (relative) */
    /* F: per cause, host time of calls ended, and of calls running the
     * count and the sum of their starts */
    uint64_t done[GT_CALL_CAUSES], nrun[GT_CALL_CAUSES], srun[GT_CALL_CAUSES];
    struct gt_active *heap;
    size_t nheap, capheap;
    struct gt_tl_result r;
    gt_tl_gap_fn gap_fn;     /* each gap of the whole GPU's timeline, for the steps */
    int lead_inner, trail_inner;  /* a window's edges: the gaps there get a cause like any other */
    const struct gt_window *win;  /* a window's report: busy and idle time inside it only */
    void *gap_arg;
    gt_tl_run_fn run_fn;     /* each device's busy runs, for the HTML overview */
    void *run_arg;
    size_t capgaps;
    int failed;
};

void gt_tl_result_free(struct gt_tl_result *r)
{
    free(r->devices);
    free(r->slot_busy);
    free(r->slot_ops);
    free(r->site_idle);
    free(r->site_gaps);
    free(r->site_cause_idle);
    free(r->gaps);
    memset(r, 0, sizeof(*r));
}

void gt_sweep_free(struct gt_sweep *s)
{
    if (!s)
        return;
    for (size_t i = 0; s->tl && i < s->ntl; i++)
        free(s->tl[i].cov);
    free(s->tl);
    free(s->tl_of_slot);
    free(s->slot_end);
    free(s->heap);
    gt_tl_result_free(&s->r);
    free(s);
}

static int gt_dev_cmp(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

void gt_sweep_window(struct gt_sweep *s, const struct gt_window *w)
{
    s->win = w;
    s->lead_inner = w->n && w->a[0] != 0;
    s->trail_inner = w->n && w->b[w->n - 1] != UINT64_MAX;
}

void gt_sweep_on_run(struct gt_sweep *s, gt_tl_run_fn fn, void *arg)
{
    s->run_fn = fn;
    s->run_arg = arg;
}

/* A device's busy run has ended: to the run callback. */
static void gt_run_done(struct gt_sweep *s, const struct gt_tl *tl)
{
    if (s->run_fn && tl->listed && tl->has_run)
        s->run_fn(tl->device, s->t0 + tl->run_start, s->t0 + tl->run_end, s->run_arg);
}

/* The time of [a, b) (relative) that counts: inside the window, if any. */
static uint64_t gt_wlen(const struct gt_sweep *s, uint64_t a, uint64_t b)
{
    if (b <= a)
        return 0;
    return s->win ? gt_window_len(s->win, s->t0 + a, s->t0 + b) : b - a;
}

void gt_sweep_on_gap(struct gt_sweep *s, gt_tl_gap_fn fn, void *arg)
{
    s->gap_fn = fn;
    s->gap_arg = arg;
}

struct gt_sweep *gt_sweep_new(const struct gt_ops *ops, struct gt_opsort *src, uint64_t t0, uint64_t t1,
                              uint64_t min_gap_ns, size_t nsites, uint32_t teardown_site, gt_tl_bound_fn bound,
                              void *arg)
{
    struct gt_sweep *s = calloc(1, sizeof(*s));
    if (!s)
        return NULL;
    s->ops = ops;
    s->src = src;
    s->t0 = t0;
    s->t1 = t1 > t0 ? t1 : t0;
    s->min_gap = min_gap_ns;
    s->teardown_site = teardown_site;
    s->bound = bound;
    s->arg = arg;
    size_t nslots = ops->nslots;
    int64_t *devs = malloc((nslots + 1) * sizeof(*devs));
    s->tl_of_slot = calloc(nslots + 1, sizeof(*s->tl_of_slot));
    s->slot_end = calloc(nslots + 1, sizeof(*s->slot_end));
    s->r.slot_busy = calloc(nslots + 1, sizeof(*s->r.slot_busy));
    s->r.slot_ops = calloc(nslots + 1, sizeof(*s->r.slot_ops));
    s->r.site_idle = calloc(nsites + 1, sizeof(*s->r.site_idle));
    s->r.site_gaps = calloc(nsites + 1, sizeof(*s->r.site_gaps));
    s->r.site_cause_idle = calloc((nsites + 1) * GT_CAUSES, sizeof(*s->r.site_cause_idle));
    s->r.nsites = nsites;
    if (!devs || !s->tl_of_slot || !s->slot_end || !s->r.slot_busy || !s->r.slot_ops || !s->r.site_idle ||
        !s->r.site_gaps || !s->r.site_cause_idle) {
        free(devs);
        gt_sweep_free(s);
        return NULL;
    }
    /* the devices, in order */
    size_t nd = 0;
    for (size_t i = 0; i < nslots; i++)
        devs[nd++] = ops->slot_device[i];
    if (nd > 1)
        qsort(devs, nd, sizeof(*devs), gt_dev_cmp);
    size_t u = 0;
    for (size_t i = 0; i < nd; i++)
        if (!u || devs[u - 1] != devs[i])
            devs[u++] = devs[i];
    s->ndev = u;
    s->ntl = u > 1 ? u + 1 : 1;
    s->tl = calloc(s->ntl, sizeof(*s->tl));
    if (!s->tl) {
        free(devs);
        gt_sweep_free(s);
        return NULL;
    }
    for (size_t i = 0; i < u; i++) {
        s->tl[i].device = devs[i];
        s->tl[i].listed = 1;
        s->tl[i].counts = 1;
        s->tl[i].whole = u == 1;
    }
    if (u > 1) {
        s->tl[u].device = -1;
        s->tl[u].whole = 1;
    } else if (u == 0) {
        /* no operations at all: the whole GPU's timeline is all gap */
        s->tl[0].device = -1;
        s->tl[0].whole = 1;
        s->tl[0].counts = 1;
    }
    for (size_t i = 0; i < nslots; i++)
        for (size_t k = 0; k < u; k++)
            if (s->tl[k].device == ops->slot_device[i])
                s->tl_of_slot[i] = k;
    free(devs);
    return s;
}

/* ---- F: host time per cause before x ---- */

static void gt_heap_push(struct gt_sweep *s, struct gt_active a)
{
    if (s->nheap == s->capheap) {
        size_t cap = s->capheap ? s->capheap * 2 : 64;
        struct gt_active *h = realloc(s->heap, cap * sizeof(*h));
        if (!h) {
            s->failed = 1;
            return;
        }
        s->heap = h;
        s->capheap = cap;
    }
    size_t i = s->nheap++;
    while (i > 0 && s->heap[(i - 1) / 2].end > a.end) {
        s->heap[i] = s->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    s->heap[i] = a;
}

static struct gt_active gt_heap_pop(struct gt_sweep *s)
{
    struct gt_active top = s->heap[0], last = s->heap[--s->nheap];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= s->nheap)
            break;
        if (c + 1 < s->nheap && s->heap[c + 1].end < s->heap[c].end)
            c++;
        if (last.end <= s->heap[c].end)
            break;
        s->heap[i] = s->heap[c];
        i = c;
    }
    if (s->nheap)
        s->heap[i] = last;
    return top;
}

/* Whether the timeline is inside a gap whose calls count (docs/report.md:
 * a gap's site), and where that gap started. */
static int gt_in_gap(const struct gt_sweep *s, const struct gt_tl *tl, uint64_t *from)
{
    *from = tl->has_run ? tl->run_end : 0;
    return tl->has_run ? tl->open : s->lead_inner;
}

static void gt_cover_add(struct gt_sweep *s, struct gt_tl *tl, const struct gt_active *a, uint64_t ns)
{
    if (!ns || a->site == UINT32_MAX)
        return;
    struct gt_cover *c = NULL;
    for (size_t i = 0; i < tl->ncov; i++)
        if (tl->cov[i].site == a->site && tl->cov[i].cause == a->cause) {
            c = &tl->cov[i];
            break;
        }
    if (!c) {
        if (tl->ncov == tl->capcov) {
            size_t cap = tl->capcov ? tl->capcov * 2 : 8;
            struct gt_cover *v = realloc(tl->cov, cap * sizeof(*v));
            if (!v) {
                s->failed = 1;
                return;
            }
            tl->cov = v;
            tl->capcov = cap;
        }
        c = &tl->cov[tl->ncov++];
        *c = (struct gt_cover){.site = a->site, .cause = a->cause, .api = a->api};
    }
    c->ns += ns;
    if (ns > c->longest) {
        c->longest = ns;
        c->api = a->api;
    }
}

/* A call has ended: its time inside each open gap counts for its site. */
static void gt_cover_ended(struct gt_sweep *s, const struct gt_active *a)
{
    for (size_t i = 0; i < s->ntl; i++) {
        uint64_t from;
        if (gt_in_gap(s, &s->tl[i], &from) && a->end > from)
            gt_cover_add(s, &s->tl[i], a, a->end - (a->start > from ? a->start : from));
    }
}

/* The gap [from, to) of tl has the call cause `cause`: the site whose calls
 * of that category spent the most time inside it (the calls still running
 * count up to `to`), and that site's longest such call's entry point.
 * UINT32_MAX: none. The timeline's coverage is cleared for its next gap. */
static uint32_t gt_spent_site(struct gt_sweep *s, struct gt_tl *tl, int cause, uint64_t from, uint64_t to,
                              uint16_t *api)
{
    for (size_t i = 0; i < s->nheap; i++) {
        const struct gt_active *a = &s->heap[i];
        if (a->cause == cause && a->start < to && a->end > from)
            gt_cover_add(s, tl, a, (a->end < to ? a->end : to) - (a->start > from ? a->start : from));
    }
    uint32_t site = UINT32_MAX;
    uint64_t best = 0;
    for (size_t i = 0; i < tl->ncov; i++) {
        const struct gt_cover *c = &tl->cov[i];
        if (c->cause == cause && (c->ns > best || (c->ns == best && c->site < site))) {
            best = c->ns;
            site = c->site;
            *api = c->api;
        }
    }
    tl->ncov = 0;
    return site;
}

/* F(x) into f, x relative; every call that started before x has been
 * given, none that started after. */
static void gt_f(struct gt_sweep *s, uint64_t x, uint64_t *f)
{
    while (s->nheap && s->heap[0].end <= x) {
        struct gt_active a = gt_heap_pop(s);
        gt_cover_ended(s, &a);
        s->done[a.cause] += a.end - a.start;
        s->nrun[a.cause]--;
        s->srun[a.cause] -= a.start;
    }
    for (int c = 0; c < GT_CALL_CAUSES; c++)
        f[c] = s->done[c] + s->nrun[c] * x - s->srun[c];
}

/* The time reaches t: every timeline whose run ended before t is now in a
 * gap, and F at the gap's start is taken (ascending, as F needs). */
static void gt_advance(struct gt_sweep *s, uint64_t t)
{
    for (;;) {
        struct gt_tl *first = NULL;
        for (size_t i = 0; i < s->ntl; i++) {
            struct gt_tl *tl = &s->tl[i];
            if (tl->has_run && !tl->open && tl->run_end < t && (!first || tl->run_end < first->run_end))
                first = tl;
        }
        if (!first)
            return;
        gt_f(s, first->run_end, first->f_open);
        first->open = 1;
        first->ncov = 0;
    }
}

/* ---- gaps ---- */

enum { GT_GAP_LEAD, GT_GAP_INNER, GT_GAP_TRAIL };

static int gt_inner_cause(struct gt_sweep *s, struct gt_tl *tl, uint64_t end)
{
    uint64_t f[GT_CALL_CAUSES];
    gt_f(s, end, f);
    uint64_t len = end - tl->run_end, best = 0;
    int cause = -1;
    for (int c = 0; c < GT_CALL_CAUSES; c++) {
        uint64_t cover = f[c] - tl->f_open[c];
        if (cause < 0 || cover > best) {
            best = cover;
            cause = c;
        }
    }
    return best >= len - len / 2 && best > 0 ? cause : GT_CAUSE_HOST;
}

static void gt_gap(struct gt_sweep *s, struct gt_tl *tl, int where, uint64_t start, uint64_t end,
                   const struct gt_op *after)
{
    if (end <= start)
        return;
    int cause = where == GT_GAP_LEAD && !s->lead_inner     ? GT_CAUSE_STARTUP
              : where == GT_GAP_TRAIL && !s->trail_inner ? GT_CAUSE_TEARDOWN
                                                         : gt_inner_cause(s, tl, end);
    /* the gap's site: the calls that spent it when the host was inside
     * CUDA, else the call whose work ended it */
    uint16_t spent_api = GT_OP_NO_API;
    uint32_t spent = cause < GT_CALL_CAUSES ? gt_spent_site(s, tl, cause, start, end, &spent_api) : UINT32_MAX;
    tl->ncov = 0;
    uint32_t site = spent != UINT32_MAX ? spent : after ? after->site : s->teardown_site;
    if (tl->whole && s->gap_fn)
        s->gap_fn(s->t0 + start, end - start, cause, site, s->gap_arg);
    uint64_t len = gt_wlen(s, start, end);
    if (!len)
        return;
    tl->idle_by_cause[cause] += len;
    if (tl->counts && site < s->r.nsites) {
        s->r.site_idle[site] += len;
        s->r.site_gaps[site]++;
        s->r.site_cause_idle[(size_t)site * GT_CAUSES + (size_t)cause] += len;
    }
    if (tl->listed && len >= s->min_gap) {
        if (s->r.ngaps == s->capgaps) {
            size_t cap = s->capgaps ? s->capgaps * 2 : 64;
            struct gt_tl_gap *g = realloc(s->r.gaps, cap * sizeof(*g));
            if (!g) {
                s->failed = 1;
                return;
            }
            s->r.gaps = g;
            s->capgaps = cap;
        }
        struct gt_tl_gap *g = &s->r.gaps[s->r.ngaps++];
        g->device = tl->device;
        g->start = s->win ? gt_window_next(s->win, s->t0 + start) : s->t0 + start;
        g->dur = len;
        g->cause = cause;
        g->before_site = where == GT_GAP_LEAD ? UINT32_MAX : tl->end_site;
        g->before_api = where == GT_GAP_LEAD ? GT_OP_NO_API : tl->end_api;
        g->after_site = after ? after->site : UINT32_MAX;
        g->after_api = after ? after->api : GT_OP_NO_API;
        g->spent_site = spent;
        g->spent_api = spent_api;
    }
}

static void gt_tl_op(struct gt_sweep *s, struct gt_tl *tl, const struct gt_op *x, uint64_t st, uint64_t en)
{
    uint64_t from;
    if (!tl->has_run || st > tl->run_end) {
        gt_run_done(s, tl);
        gt_gap(s, tl, tl->has_run ? GT_GAP_INNER : GT_GAP_LEAD, tl->has_run ? tl->run_end : 0, st, x);
        tl->has_run = 1;
        tl->run_start = st;
        from = st;
    } else {
        from = tl->run_end;
    }
    /* the operation that ends the run last is the one before its gap */
    if (en > from || from == st) {
        tl->busy += gt_wlen(s, from, en);
        tl->run_end = en > from ? en : from;
        tl->end_site = x->site;
        tl->end_api = x->api;
        tl->open = 0;
    }
    if (tl->whole && !tl->listed)
        return;
    /* kernels against copies: both ran in [t_prev, min(st, k_end, c_end)) */
    uint64_t both = tl->k_end < tl->c_end ? tl->k_end : tl->c_end;
    if (both > st)
        both = st;
    if (both > tl->t_prev)
        tl->overlap += gt_wlen(s, tl->t_prev, both);
    tl->t_prev = st;
    uint64_t *run = x->kind == GT_OP_KERNEL ? &tl->k_end : x->kind == GT_OP_MEMCPY ? &tl->c_end : NULL;
    uint64_t *sum = x->kind == GT_OP_KERNEL ? &tl->compute : &tl->copy;
    if (run) {
        uint64_t from = st > *run ? st : *run;
        if (en > from)
            *sum += gt_wlen(s, from, en);
        if (en > *run)
            *run = en;
    }
}

static void gt_op_step(struct gt_sweep *s, const struct gt_op *x)
{
    const struct gt_ops *o = s->ops;
    uint64_t st = x->start - s->t0, en = gt_op_end(o, x) - s->t0;
    gt_advance(s, st);
    /* launch-bound: the stream had drained by the time the call returned */
    uint64_t *slot_end = &s->slot_end[x->slot];
    if ((x->flags & (GT_OPF_LAUNCH | GT_OPF_LB_CAND)) == (GT_OPF_LAUNCH | GT_OPF_LB_CAND) &&
        (!s->r.slot_ops[x->slot] || *slot_end + s->t0 <= gt_op_call_end(o, x)) && s->bound)
        s->bound(x, s->arg);
    if (!s->r.slot_ops[x->slot] || st > *slot_end) {
        s->r.slot_busy[x->slot] += gt_wlen(s, st, en);
        *slot_end = en;
    } else if (en > *slot_end) {
        s->r.slot_busy[x->slot] += gt_wlen(s, *slot_end, en);
        *slot_end = en;
    }
    s->r.slot_ops[x->slot]++;
    if (s->ndev)
        gt_tl_op(s, &s->tl[s->tl_of_slot[x->slot]], x, st, en);
    if (s->ntl > s->ndev && s->ndev)
        gt_tl_op(s, &s->tl[s->ndev], x, st, en);
}

void gt_sweep_call(int cat, uint64_t start, uint64_t end, uint32_t site, uint32_t api, void *sweep)
{
    struct gt_sweep *s = sweep;
    /* operations that start at or before this call come first: F at their
     * start must not count calls that start later */
    for (const struct gt_op *x; (x = gt_opsort_peek(s->src)) && x->start <= start; gt_opsort_pop(s->src))
        gt_op_step(s, x);
    if (start < s->t0)
        start = s->t0;
    if (end < start)
        end = start;
    uint64_t st = start - s->t0, en = end - s->t0;
    gt_advance(s, st);
    if (en <= st)
        return;
    int cause = gt_cause_of_category(cat);
    s->nrun[cause]++;
    s->srun[cause] += st;
    gt_heap_push(s, (struct gt_active){en, st, cause, site, api < GT_OP_NO_API ? (uint16_t)api : GT_OP_NO_API});
}

int gt_sweep_finish(struct gt_sweep *s, struct gt_tl_result *out)
{
    for (const struct gt_op *x; (x = gt_opsort_peek(s->src)); gt_opsort_pop(s->src))
        gt_op_step(s, x);
    if (gt_opsort_failed(s->src))
        s->failed = 1;
    uint64_t span = s->t1 - s->t0;
    /* every call is in: F at each run's end can be taken now */
    if (s->trail_inner)
        gt_advance(s, UINT64_MAX);
    for (size_t i = 0; i < s->ntl; i++) {
        struct gt_tl *tl = &s->tl[i];
        gt_run_done(s, tl);
        if (!tl->has_run)
            gt_gap(s, tl, GT_GAP_LEAD, 0, span, NULL);
        else if (tl->run_end < span)
            gt_gap(s, tl, GT_GAP_TRAIL, tl->run_end, span, NULL);
        uint64_t both = tl->k_end < tl->c_end ? tl->k_end : tl->c_end;
        if (both > tl->t_prev)
            tl->overlap += gt_wlen(s, tl->t_prev, both);
    }
    if (s->ndev) {
        s->r.devices = calloc(s->ndev, sizeof(*s->r.devices));
        if (!s->r.devices)
            s->failed = 1;
        else
            s->r.ndevices = s->ndev;
    }
    for (size_t i = 0; i < s->r.ndevices; i++) {
        struct gt_tl_device *d = &s->r.devices[i];
        const struct gt_tl *tl = &s->tl[i];
        d->device = tl->device;
        d->busy_ns = tl->busy;
        memcpy(d->idle_by_cause, tl->idle_by_cause, sizeof(d->idle_by_cause));
        d->compute_ns = tl->compute;
        d->copy_ns = tl->copy;
        d->overlap_ns = tl->overlap;
    }
    /* device time: every device's timeline adds its busy and idle time */
    for (size_t i = 0; i < s->ntl; i++) {
        if (!s->tl[i].counts)
            continue;
        s->r.busy_ns += s->tl[i].busy;
        for (int c = 0; c < GT_CAUSES; c++)
            s->r.idle_by_cause[c] += s->tl[i].idle_by_cause[c];
    }
    s->r.ndevtime = s->ndev ? s->ndev : 1;
    if (s->failed)
        return -1;
    *out = s->r;
    memset(&s->r, 0, sizeof(s->r));
    return 0;
}

/* gt_rank_sum.c: one rank's summary from its trace: report's figures, its
 * collectives (kernels whose names match the patterns, gathered during the
 * report's own pass over the trace) numbered by stream and place on the
 * stream, where each was in the program (its top-level NVTX range and its
 * step), and its longest idle gaps (docs/ranks.md). */
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/gt_ranks.h"
#include "analysis/gt_steps.h"
#include "base/gt_err.h"
#include "trace/gt_trace.h"

const char *const gt_rank_default_patterns[] = {"ncclDevKernel_*", "ncclKernel_*", "*ncclDevKernel_*",
                                                "*ncclKernel_*", "rcclKernel*", "*oneccl*", NULL};

int gt_rank_is_summary_path(const char *path)
{
    size_t n = strlen(path), m = strlen(".json");
    return n > m && strcmp(path + n - m, ".json") == 0;
}

int gt_rank_patterns_parse(char *s, struct gt_rank_patterns *p)
{
    p->n = 0;
    for (char *save = NULL, *tok = strtok_r(s, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (!*tok)
            continue;
        if (p->n == GT_RANK_MAX_PATTERNS)
            return -1;
        p->p[p->n++] = tok;
    }
    return p->n ? 0 : -1;
}

int gt_rank_name_is_collective(const struct gt_rank_patterns *pat, const char *name)
{
    if (!pat || !pat->n) {
        for (int i = 0; gt_rank_default_patterns[i]; i++)
            if (fnmatch(gt_rank_default_patterns[i], name, 0) == 0)
                return 1;
        return 0;
    }
    for (int i = 0; i < pat->n; i++)
        if (fnmatch(pat->p[i], name, 0) == 0)
            return 1;
    return 0;
}

/* Top-level push ranges, by thread then start, each with its index among
 * the thread's ranges of its name. */
struct gt_top_range {
    int64_t tid;
    uint64_t start, end;
    char name[128];
    int64_t index;
};

static int gt_top_cmp(const void *a, const void *b)
{
    const struct gt_top_range *x = a, *y = b;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    return x->start < y->start ? -1 : x->start > y->start;
}

static int gt_load_ranges(struct gt_trace *t, struct gt_top_range **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    if (t->schema_version < 6)
        return 0;
    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(t->db,
                           "SELECT tid, start_ns, end_ns, COALESCE(name, '') FROM ranges "
                           "WHERE kind = 'push' AND depth = 0 AND end_ns IS NOT NULL ORDER BY tid, start_ns",
                           -1, &q, NULL) != SQLITE_OK) {
        gt_trace_sql_error(t, "reading NVTX ranges");
        return -1;
    }
    size_t cap = 0;
    while (sqlite3_step(q) == SQLITE_ROW) {
        if (*n == cap) {
            cap = cap ? cap * 2 : 256;
            struct gt_top_range *v = realloc(*out, cap * sizeof(*v));
            if (!v) {
                sqlite3_finalize(q);
                gt_err("%s: out of memory", t->path);
                return -1;
            }
            *out = v;
        }
        struct gt_top_range *r = &(*out)[(*n)++];
        r->tid = sqlite3_column_int64(q, 0);
        r->start = (uint64_t)sqlite3_column_int64(q, 1);
        r->end = (uint64_t)sqlite3_column_int64(q, 2);
        snprintf(r->name, sizeof(r->name), "%s", (const char *)sqlite3_column_text(q, 3));
        r->index = 0;
        /* ranges of one thread in order: count the earlier ones of its name */
        for (size_t j = *n - 1; j-- > 0 && (*out)[j].tid == r->tid;)
            if (strcmp((*out)[j].name, r->name) == 0) {
                r->index = (*out)[j].index + 1;
                break;
            }
    }
    sqlite3_finalize(q);
    if (*n)
        qsort(*out, *n, sizeof(**out), gt_top_cmp);
    return 0;
}

/* The top-level ranges, by (thread, start), and by start with the latest
 * end so far: a time's range on any thread without a scan of them all. */
struct gt_tops {
    struct gt_top_range *v;
    size_t n;
    size_t *by_start;
    uint64_t *maxend;               /* the latest end of by_start[0..i] */
};

/* for qsort's comparator; per thread: report -j reads traces on several */
static __thread const struct gt_top_range *gt_tops_v;

static int gt_by_start(const void *a, const void *b)
{
    const struct gt_top_range *x = &gt_tops_v[*(const size_t *)a], *y = &gt_tops_v[*(const size_t *)b];
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return *(const size_t *)a < *(const size_t *)b ? -1 : 1;
}

static int gt_tops_load(struct gt_trace *t, struct gt_tops *r)
{
    memset(r, 0, sizeof(*r));
    if (gt_load_ranges(t, &r->v, &r->n) < 0)
        return -1;
    if (!r->n)
        return 0;
    r->by_start = malloc(r->n * sizeof(*r->by_start));
    r->maxend = malloc(r->n * sizeof(*r->maxend));
    if (!r->by_start || !r->maxend) {
        gt_err("%s: out of memory", t->path);
        return -1;
    }
    for (size_t i = 0; i < r->n; i++)
        r->by_start[i] = i;
    gt_tops_v = r->v;
    qsort(r->by_start, r->n, sizeof(*r->by_start), gt_by_start);
    for (size_t i = 0; i < r->n; i++) {
        uint64_t e = r->v[r->by_start[i]].end;
        r->maxend[i] = i && r->maxend[i - 1] > e ? r->maxend[i - 1] : e;
    }
    return 0;
}

static void gt_tops_free(struct gt_tops *r)
{
    free(r->v);
    free(r->by_start);
    free(r->maxend);
}

/* The range of thread tid holding time at, else (tid < 0, or none on tid:
 * collectives may be launched by a thread other than the one that marks
 * the steps, as PyTorch's autograd threads do) the first by start of any
 * thread's that holds it. */
static void gt_where(const struct gt_tops *r, int64_t tid, uint64_t at, struct gt_rank_where *w)
{
    const struct gt_top_range *v = r->v, *hit = NULL;
    w->range[0] = 0;
    w->index = -1;
    if (tid >= 0) {
        size_t lo = 0, hi = r->n; /* first range of tid starting after at */
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (v[mid].tid < tid || (v[mid].tid == tid && v[mid].start <= at))
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo > 0 && v[lo - 1].tid == tid && v[lo - 1].start <= at && at <= v[lo - 1].end)
            hit = &v[lo - 1];
    }
    if (!hit) {
        size_t lo = 0, hi = r->n; /* the first by start starting after at */
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (v[r->by_start[mid]].start <= at)
                lo = mid + 1;
            else
                hi = mid;
        }
        /* back from there while something earlier may still hold at */
        for (size_t j = lo; j-- > 0 && r->maxend[j] >= at;)
            if (at <= v[r->by_start[j]].end)
                hit = &v[r->by_start[j]];
    }
    if (hit) {
        snprintf(w->range, sizeof(w->range), "%s", hit->name);
        w->index = hit->index;
    }
}

/* ---- the collectives, from report's pass ---- */

struct gt_rank_seen {
    uint32_t name;                  /* index into the collector's names */
    int64_t device, stream, tid;
    uint64_t launch, start, end;
};

struct gt_rank_collector {
    const struct gt_rank_patterns *pat;
    int8_t *is;                     /* per kernel number: 0 not yet seen, 1 a collective, -1 not */
    uint32_t *name_of;              /* per kernel number: its index in names */
    size_t nk;
    char **names;
    size_t nnames;
    struct gt_rank_seen *v;
    size_t n, cap;
    int failed;
};

struct gt_rank_collector *gt_rank_collector_new(const struct gt_rank_patterns *pat)
{
    struct gt_rank_collector *c = calloc(1, sizeof(*c));
    if (c)
        c->pat = pat;
    return c;
}

void gt_rank_collector_free(struct gt_rank_collector *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->nnames; i++)
        free(c->names[i]);
    free(c->names);
    free(c->is);
    free(c->name_of);
    free(c->v);
    free(c);
}

void gt_rank_on_kernel(void *arg, const struct gt_kernel_seen *k)
{
    struct gt_rank_collector *c = arg;
    if (c->failed)
        return;
    if (k->kernel >= c->nk) { /* a kernel number not seen yet: grow to it */
        size_t nk = (size_t)k->kernel + 1 > 2 * c->nk ? (size_t)k->kernel + 1 : 2 * c->nk;
        int8_t *is = realloc(c->is, nk);
        if (is)
            c->is = is;
        uint32_t *no = is ? realloc(c->name_of, nk * sizeof(*no)) : NULL;
        if (!is || !no) {
            c->failed = 1;
            return;
        }
        c->name_of = no;
        memset(c->is + c->nk, 0, nk - c->nk);
        c->nk = nk;
    }
    /* the name test once per kernel name, not once per launch */
    if (!c->is[k->kernel]) {
        c->is[k->kernel] = k->name && gt_rank_name_is_collective(c->pat, k->name) ? 1 : -1;
        if (c->is[k->kernel] > 0) {
            char **v = realloc(c->names, (c->nnames + 1) * sizeof(*v));
            if (v)
                c->names = v;
            if (!v || !(v[c->nnames] = strdup(k->name))) {
                c->is[k->kernel] = 0;
                c->failed = 1;
                return;
            }
            c->name_of[k->kernel] = (uint32_t)c->nnames++;
        }
    }
    if (c->is[k->kernel] < 0)
        return;
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 256;
        struct gt_rank_seen *v = realloc(c->v, cap * sizeof(*v));
        if (!v) {
            c->failed = 1;
            return;
        }
        c->v = v;
        c->cap = cap;
    }
    c->v[c->n++] = (struct gt_rank_seen){c->name_of[k->kernel], k->device, k->stream, k->tid, k->launch,
                                         k->start, k->end};
}

/* By GPU start (then end, thread, launch): the order that numbers them. */
static int gt_seen_cmp(const void *a, const void *b)
{
    const struct gt_rank_seen *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    if (x->end != y->end)
        return x->end < y->end ? -1 : 1;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    return x->launch < y->launch ? -1 : x->launch > y->launch;
}

static int gt_name_index(struct gt_rank_sum *s, const char *name, uint32_t *idx)
{
    for (size_t i = 0; i < s->nnames; i++)
        if (strcmp(s->names[i], name) == 0) {
            *idx = (uint32_t)i;
            return 0;
        }
    char **v = realloc(s->names, (s->nnames + 1) * sizeof(*v));
    if (!v)
        return -1;
    s->names = v;
    if (!(v[s->nnames] = strdup(name)))
        return -1;
    *idx = (uint32_t)s->nnames++;
    return 0;
}

/* The collectives gathered, numbered: streams by their first collective,
 * collectives by GPU start on each; each with its NVTX range and step. */
static int gt_load_collectives(struct gt_trace *t, struct gt_rank_collector *col, struct gt_rank_sum *s,
                               const struct gt_tops *tops, const struct gt_stepper *steps)
{
    if (col->failed) {
        gt_err("%s: out of memory", t->path);
        return -1;
    }
    qsort(col->v, col->n, sizeof(*col->v), gt_seen_cmp);
    /* streams by their first collective: (device, stream) -> index, count */
    struct { int64_t dev, stream; uint32_t n; } streams[64];
    size_t nstreams = 0, cap = 0;
    for (size_t i = 0; i < col->n; i++) {
        const struct gt_rank_seen *x = &col->v[i];
        s->coll_ns += x->end > x->start ? x->end - x->start : 0;
        s->ncoll_all++;
        if (s->ncoll >= GT_RANK_MAX_COLL)
            continue;
        size_t si = 0;
        while (si < nstreams && (streams[si].dev != x->device || streams[si].stream != x->stream))
            si++;
        if (si == nstreams) {
            if (nstreams == sizeof(streams) / sizeof(streams[0]))
                continue; /* more communicator streams than that: the rest are left out */
            streams[nstreams].dev = x->device;
            streams[nstreams].stream = x->stream;
            streams[nstreams++].n = 0;
        }
        if (s->ncoll == cap) {
            cap = cap ? cap * 2 : 256;
            struct gt_rank_coll *v = realloc(s->coll, cap * sizeof(*v));
            if (!v)
                goto oom;
            s->coll = v;
        }
        struct gt_rank_coll *c = &s->coll[s->ncoll];
        if (gt_name_index(s, col->names[x->name], &c->name) < 0)
            goto oom;
        s->ncoll++;
        c->stream = (uint32_t)si;
        c->ordinal = streams[si].n++;
        c->launch_ns = x->launch;
        c->start_ns = x->start;
        c->end_ns = x->end;
        gt_where(tops, x->tid, c->launch_ns, &c->where);
        if (!gt_steps_at(steps, x->tid, c->launch_ns, &c->step))
            c->step = -1;
    }
    return 0;
oom:
    gt_err("%s: out of memory", t->path);
    return -1;
}

int gt_rank_sum_from_trace(struct gt_trace *t, const struct gt_rank_patterns *pat, struct gt_rank_sum *s)
{
    struct gt_rank_collector *c = gt_rank_collector_new(pat);
    if (!c) {
        gt_err("%s: out of memory", t->path);
        return -1;
    }
    struct gt_analyze_opts o = {.min_gap_ns = 1000000, .top = GT_RANK_GAPS, .on_kernel = gt_rank_on_kernel,
                                .on_kernel_arg = c, .step_glob = pat ? pat->step_glob : NULL};
    struct gt_report r;
    int rc = -1;
    if (gt_analyze(t, &o, &r) == 0) {
        rc = gt_rank_sum_from_report(t, pat, &r, c, s);
        gt_report_free(&r);
    }
    gt_rank_collector_free(c);
    return rc;
}

int gt_rank_sum_from_report(struct gt_trace *t, const struct gt_rank_patterns *pat, const struct gt_report *rp,
                            struct gt_rank_collector *col, struct gt_rank_sum *s)
{
    const struct gt_report r = *rp;
    memset(s, 0, sizeof(*s));
    snprintf(s->path, sizeof(s->path), "%s", t->path);
    s->pid = (long long)gt_trace_meta_int(t, "pid", 0);
    char *v = gt_trace_meta(t, "rank");
    if (v) {
        snprintf(s->rank, sizeof(s->rank), "%s", v);
        s->has_rank = 1;
    } else {
        snprintf(s->rank, sizeof(s->rank), "pid %lld", s->pid);
    }
    free(v);
    v = gt_trace_meta(t, "host");
    snprintf(s->host, sizeof(s->host), "%s", v ? v : "");
    free(v);
    s->complete = gt_trace_meta_int(t, "complete", 0) == 1;
    s->start_ns = gt_trace_meta_int(t, "start_ns", 0);
    s->start_unix_ns = gt_trace_meta_int(t, "start_time_unix_ns", 0);
    s->s = r.summary;
    s->first_ns = r.summary.first_ns;
    s->gpu_times = r.summary.gpu_times;
    struct gt_tops tops;
    int rc = gt_tops_load(t, &tops);
    for (size_t i = 0; rc == 0 && i < r.ngaps && s->ngaps < GT_RANK_GAPS; i++) {
        const struct gt_gap *g = &r.gaps[i];
        struct gt_rank_gap *x = &s->gaps[s->ngaps++];
        x->start_ns = g->start_ns;
        x->dur_ns = g->dur_ns;
        x->cause = g->cause;
        snprintf(x->after, sizeof(x->after), "%s", g->has_after ? g->after.text : "");
        snprintf(x->before, sizeof(x->before), "%s", g->has_before ? g->before.text : "");
        snprintf(x->after_api, sizeof(x->after_api), "%s", g->has_after ? g->after_api : "");
        gt_where(&tops, -1, g->start_ns + g->dur_ns, &x->where);
    }
    /* the report's steps, by its rule: collectives are matched across
     * ranks by step where there are steps (gt_ranks.c) */
    struct gt_stepper *steps = NULL;
    if (rc == 0 && gt_steps_open(t, pat ? pat->step_glob : NULL, NULL, NULL, &steps) < 0)
        rc = -1;
    if (rc == 0)
        rc = gt_load_collectives(t, col, s, &tops, steps);
    gt_steps_free(steps);
    gt_tops_free(&tops);
    if (rc < 0)
        gt_rank_sum_free(s);
    return rc;
}

void gt_rank_sum_free(struct gt_rank_sum *s)
{
    for (size_t i = 0; i < s->nnames; i++)
        free(s->names[i]);
    free(s->names);
    free(s->coll);
    s->names = NULL;
    s->coll = NULL;
    s->nnames = s->ncoll = 0;
}

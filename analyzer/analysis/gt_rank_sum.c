/* gt_rank_sum.c: one rank's summary from its trace: report's figures, its
 * collectives (kernels whose names match the patterns) numbered by stream
 * and place on the stream, where each was in the program (its top-level
 * NVTX range), and its longest idle gaps (docs/ranks.md). */
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/gt_ranks.h"
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

/* The range of thread tid (any thread when tid < 0) holding time at. */
static void gt_where(const struct gt_top_range *v, size_t n, int64_t tid, uint64_t at, struct gt_rank_where *w)
{
    w->range[0] = 0;
    w->index = -1;
    if (tid >= 0) {
        size_t lo = 0, hi = n; /* first range of tid starting after at */
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (v[mid].tid < tid || (v[mid].tid == tid && v[mid].start <= at))
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo > 0 && v[lo - 1].tid == tid && v[lo - 1].start <= at && at <= v[lo - 1].end) {
            snprintf(w->range, sizeof(w->range), "%s", v[lo - 1].name);
            w->index = v[lo - 1].index;
        }
        return;
    }
    for (size_t i = 0; i < n; i++)
        if (v[i].start <= at && at <= v[i].end) {
            snprintf(w->range, sizeof(w->range), "%s", v[i].name);
            w->index = v[i].index;
            return;
        }
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

static void gt_sql_is_collective(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    (void)argc;
    const char *name = (const char *)sqlite3_value_text(argv[0]);
    sqlite3_result_int(ctx, name && gt_rank_name_is_collective(sqlite3_user_data(ctx), name));
}

static int gt_load_collectives(struct gt_trace *t, const struct gt_rank_patterns *pat, struct gt_rank_sum *s,
                               const struct gt_top_range *rv, size_t rn)
{
    sqlite3_stmt *q;
    /* the name test in SQL, so only collectives are sorted and looked up */
    if (sqlite3_create_function(t->db, "gt_is_collective", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, (void *)pat,
                                gt_sql_is_collective, NULL, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(t->db,
                           "SELECT k.name, COALESCE(k.device, -1), COALESCE(k.gpu_stream, k.stream, -1), "
                           "COALESCE(k.api_start_ns, k.start_ns), k.start_ns, k.end_ns, "
                           "COALESCE((SELECT c.tid FROM calls c WHERE c.id = k.api_call_id), -1) "
                           "FROM kernels k WHERE k.start_ns IS NOT NULL AND k.end_ns IS NOT NULL "
                           "AND gt_is_collective(k.name) ORDER BY k.start_ns",
                           -1, &q, NULL) != SQLITE_OK) {
        gt_trace_sql_error(t, "reading collectives");
        return -1;
    }
    /* streams by their first collective: (device, stream) -> index, count */
    struct { int64_t dev, stream; uint32_t n; } streams[64];
    size_t nstreams = 0, cap = 0;
    int rc = 0;
    while (sqlite3_step(q) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(q, 0);
        if (!name || !gt_rank_name_is_collective(pat, name))
            continue;
        uint64_t start = (uint64_t)sqlite3_column_int64(q, 4), end = (uint64_t)sqlite3_column_int64(q, 5);
        s->coll_ns += end > start ? end - start : 0;
        s->ncoll_all++;
        if (s->ncoll >= GT_RANK_MAX_COLL)
            continue;
        int64_t dev = sqlite3_column_int64(q, 1), stream = sqlite3_column_int64(q, 2);
        size_t si = 0;
        while (si < nstreams && (streams[si].dev != dev || streams[si].stream != stream))
            si++;
        if (si == nstreams) {
            if (nstreams == sizeof(streams) / sizeof(streams[0]))
                continue; /* more communicator streams than that: the rest are left out */
            streams[nstreams].dev = dev;
            streams[nstreams].stream = stream;
            streams[nstreams++].n = 0;
        }
        if (s->ncoll == cap) {
            cap = cap ? cap * 2 : 256;
            struct gt_rank_coll *v = realloc(s->coll, cap * sizeof(*v));
            if (!v) {
                rc = -1;
                break;
            }
            s->coll = v;
        }
        struct gt_rank_coll *c = &s->coll[s->ncoll];
        if (gt_name_index(s, name, &c->name) < 0) {
            rc = -1;
            break;
        }
        s->ncoll++;
        c->stream = (uint32_t)si;
        c->ordinal = streams[si].n++;
        c->launch_ns = (uint64_t)sqlite3_column_int64(q, 3);
        c->start_ns = start;
        c->end_ns = end;
        gt_where(rv, rn, sqlite3_column_int64(q, 6), c->launch_ns, &c->where);
    }
    sqlite3_finalize(q);
    if (rc < 0)
        gt_err("%s: out of memory", t->path);
    return rc;
}

int gt_rank_sum_from_trace(struct gt_trace *t, const struct gt_rank_patterns *pat, struct gt_rank_sum *s)
{
    struct gt_analyze_opts o = {.min_gap_ns = 1000000, .top = GT_RANK_GAPS};
    struct gt_report r;
    if (gt_analyze(t, &o, &r) < 0)
        return -1;
    int rc = gt_rank_sum_from_report(t, pat, &r, s);
    gt_report_free(&r);
    return rc;
}

int gt_rank_sum_from_report(struct gt_trace *t, const struct gt_rank_patterns *pat, const struct gt_report *rp,
                            struct gt_rank_sum *s)
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
    struct gt_top_range *rv;
    size_t rn;
    int rc = gt_load_ranges(t, &rv, &rn);
    for (size_t i = 0; rc == 0 && i < r.ngaps && s->ngaps < GT_RANK_GAPS; i++) {
        const struct gt_gap *g = &r.gaps[i];
        struct gt_rank_gap *x = &s->gaps[s->ngaps++];
        x->start_ns = g->start_ns;
        x->dur_ns = g->dur_ns;
        x->cause = g->cause;
        snprintf(x->after, sizeof(x->after), "%s", g->has_after ? g->after.text : "");
        snprintf(x->before, sizeof(x->before), "%s", g->has_before ? g->before.text : "");
        snprintf(x->after_api, sizeof(x->after_api), "%s", g->has_after ? g->after_api : "");
        gt_where(rv, rn, -1, g->start_ns + g->dur_ns, &x->where);
    }
    if (rc == 0)
        rc = gt_load_collectives(t, pat, s, rv, rn);
    free(rv);
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

/* gt_phases.c: the report's "by phase" section (docs/report.md, Phases):
 * for each name of a top-level NVTX range (a push range at depth 0 that
 * ended), its wall time, the GPU's busy and idle time inside it, and the
 * launches, host-to-device bytes and syncs its ranges' threads made in it.
 *
 * Read with SQL over the public views, apart from the report's main
 * passes: phases are few next to calls, and each range's calls are found
 * through the calls' start-time index. Traces before schema version 6 have
 * no ranges, and so no phases. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/gt_analyze.h"

struct gt_iv {
    uint64_t a, b;
};

struct gt_prange {
    int64_t id;
    char *name;
    uint64_t start, end;
    size_t phase;      /* its phase, in name order */
};

/* qsort has no argument: the rows a permutation is sorted by. */
static __thread const struct gt_phase_row *gt_sort_rows; /* per thread: report -j analyses traces on several */

static int gt_iv_cmp(const void *x, const void *y)
{
    const struct gt_iv *a = x, *b = y;
    return a->a < b->a ? -1 : a->a > b->a;
}

/* Sorts and merges in place; returns the count left. */
static size_t gt_iv_union(struct gt_iv *v, size_t n)
{
    if (!n)
        return 0;
    qsort(v, n, sizeof(*v), gt_iv_cmp);
    size_t k = 0;
    for (size_t i = 1; i < n; i++) {
        if (v[i].a <= v[k].b) {
            if (v[i].b > v[k].b)
                v[k].b = v[i].b;
        } else {
            v[++k] = v[i];
        }
    }
    return k + 1;
}

/* Length of the intersection of two merged, sorted interval lists. */
static uint64_t gt_iv_overlap(const struct gt_iv *a, size_t na, const struct gt_iv *b, size_t nb)
{
    uint64_t total = 0;
    size_t i = 0, j = 0;
    while (i < na && j < nb) {
        uint64_t lo = a[i].a > b[j].a ? a[i].a : b[j].a;
        uint64_t hi = a[i].b < b[j].b ? a[i].b : b[j].b;
        if (hi > lo)
            total += hi - lo;
        if (a[i].b < b[j].b)
            i++;
        else
            j++;
    }
    return total;
}

static int gt_has_ranges(struct gt_trace *t)
{
    int64_t n = 0;
    if (t->schema_version < 6 ||
        gt_trace_int(t, "SELECT count(*) FROM sqlite_master WHERE type = 'view' AND name = 'ranges'", &n) < 0)
        return 0;
    return n > 0;
}

/* The operations of the whole-GPU timeline (docs/report.md, Calls and
 * operations), merged. */
static int gt_busy(struct gt_trace *t, int gpu_times, const struct gt_analyze_opts *o, struct gt_iv **out,
                   size_t *nout)
{
    /* a windowed report's GPU work: that of the calls made in the window,
     * and the work of no recorded call that started in it */
    static const char *const windowed[2] = {
        "SELECT x.start_ns, x.end_ns, COALESCE(c.start_ns, x.start_ns) FROM (SELECT api_call_id, start_ns, end_ns "
        "FROM kernels WHERE time_source = 'host' AND result = 0 AND captured = 0 UNION ALL "
        "SELECT api_call_id, start_ns, end_ns FROM memcpys WHERE time_source = 'host' AND result = 0 "
        "AND captured = 0 UNION ALL SELECT api_call_id, start_ns, end_ns FROM memsets WHERE time_source = 'host' "
        "AND result = 0 AND captured = 0) x LEFT JOIN api_calls c ON c.id = x.api_call_id",
        "SELECT x.start_ns, x.end_ns, COALESCE(c.start_ns, x.start_ns) FROM (SELECT api_call_id, start_ns, end_ns "
        "FROM kernels "
        "WHERE time_source = 'gpu' UNION ALL SELECT api_call_id, start_ns, end_ns FROM memcpys "
        "WHERE time_source = 'gpu' UNION ALL SELECT api_call_id, start_ns, end_ns FROM memsets "
        "WHERE time_source = 'gpu') x LEFT JOIN api_calls c ON c.id = x.api_call_id",
    };
    const char *sql = o->win ? windowed[gpu_times != 0] : gpu_times
        ? "SELECT start_ns, end_ns FROM kernels WHERE time_source = 'gpu' UNION ALL "
          "SELECT start_ns, end_ns FROM memcpys WHERE time_source = 'gpu' UNION ALL "
          "SELECT start_ns, end_ns FROM memsets WHERE time_source = 'gpu'"
        : "SELECT start_ns, end_ns FROM kernels WHERE time_source = 'host' AND result = 0 AND captured = 0 "
          "UNION ALL SELECT start_ns, end_ns FROM memcpys WHERE time_source = 'host' AND result = 0 AND captured = 0 "
          "UNION ALL SELECT start_ns, end_ns FROM memsets WHERE time_source = 'host' AND result = 0 AND captured = 0";
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(t->db, sql, -1, &st, NULL) != SQLITE_OK)
        return -1;
    size_t n = 0, cap = 0;
    struct gt_iv *v = NULL;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (n == cap) {
            cap = cap ? cap * 2 : 1024;
            struct gt_iv *g = realloc(v, cap * sizeof(*v));
            if (!g) {
                free(v);
                sqlite3_finalize(st);
                return -1;
            }
            v = g;
        }
        /* a window's: by its call's start, or its own without one */
        if (o->win && !gt_window_has(o->win, (uint64_t)sqlite3_column_int64(st, 2)))
            continue;
        v[n].a = (uint64_t)sqlite3_column_int64(st, 0);
        v[n].b = (uint64_t)sqlite3_column_int64(st, 1);
        if (v[n].b > v[n].a)
            n++;
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        free(v);
        return -1;
    }
    *out = v;
    *nout = gt_iv_union(v, n);
    return 0;
}

/* The top-level ranges: push ranges at depth 0 that ended. */
#define GT_TOP_RANGES "FROM ranges r "
#define GT_TOP_WHERE "r.kind = 'push' AND r.depth = 0 AND r.end_ns IS NOT NULL"

/* Each phase's per-range sums: `sql` yields (range id, count, sum). */
static int gt_phase_sums(struct gt_trace *t, const char *sql, const struct gt_prange *rs, size_t nr,
                         const size_t *phase_of, struct gt_phase_row *rows, int which)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(t->db, sql, -1, &st, NULL) != SQLITE_OK)
        return -1;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(st, 0);
        size_t lo = 0, hi = nr; /* rs sorted by id */
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (rs[mid].id < id)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo == nr || rs[lo].id != id)
            continue;
        struct gt_phase_row *p = &rows[phase_of[lo]];
        uint64_t cnt = (uint64_t)sqlite3_column_int64(st, 1), sum = (uint64_t)sqlite3_column_int64(st, 2);
        if (which == 0) {
            p->launches += cnt;
            p->launch_host_ns += sum;
        } else if (which == 1) {
            p->h2d_bytes += sum;
        } else {
            p->syncs += cnt;
            p->sync_ns += sum;
        }
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : -1;
}

static int gt_range_by_id(const void *x, const void *y)
{
    const struct gt_prange *a = x, *b = y;
    return a->id < b->id ? -1 : a->id > b->id;
}

static int gt_range_by_name(const void *x, const void *y)
{
    const struct gt_prange *a = x, *b = y;
    int c = strcmp(a->name, b->name);
    if (c)
        return c;
    return a->start < b->start ? -1 : a->start > b->start;
}

static int gt_range_by_start_keep(const void *x, const void *y)
{
    const struct gt_prange *a = x, *b = y;
    return a->start < b->start ? -1 : a->start > b->start;
}

static int gt_phase_perm_cmp(const void *x, const void *y)
{
    const struct gt_phase_row *a = &gt_sort_rows[*(const size_t *)x], *b = &gt_sort_rows[*(const size_t *)y];
    if (a->first_ns != b->first_ns)
        return a->first_ns < b->first_ns ? -1 : 1;
    return strcmp(a->name, b->name);
}

int gt_phases(struct gt_trace *t, int gpu_times, const struct gt_analyze_opts *o, struct gt_report *r)
{
    if (!gt_has_ranges(t))
        return 0;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(t->db, "SELECT r.id, COALESCE(r.name, '(unnamed)'), r.start_ns, r.end_ns " GT_TOP_RANGES
                           "WHERE " GT_TOP_WHERE,
                           -1, &st, NULL) != SQLITE_OK) {
        gt_trace_sql_error(t, "ranges");
        return -1;
    }
    struct gt_prange *rs = NULL;
    size_t nr = 0, cap = 0;
    int rc, failed = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (nr == cap) {
            cap = cap ? cap * 2 : 64;
            struct gt_prange *g = realloc(rs, cap * sizeof(*rs));
            if (!g) {
                failed = 1;
                break;
            }
            rs = g;
        }
        /* a windowed report: the ranges inside the window */
        if (o->win && !gt_window_inside(o->win, (uint64_t)sqlite3_column_int64(st, 2),
                                        (uint64_t)sqlite3_column_int64(st, 3)))
            continue;
        rs[nr].id = sqlite3_column_int64(st, 0);
        rs[nr].name = strdup((const char *)sqlite3_column_text(st, 1));
        rs[nr].start = (uint64_t)sqlite3_column_int64(st, 2);
        rs[nr].end = (uint64_t)sqlite3_column_int64(st, 3);
        if (!rs[nr].name) {
            failed = 1;
            break;
        }
        nr++;
    }
    sqlite3_finalize(st);
    struct gt_iv *busy = NULL, *iv = NULL;
    size_t nbusy = 0, *phase_of = NULL;
    struct gt_phase_row *rows = NULL;
    size_t nphases = 0;
    if (failed || (rc != SQLITE_ROW && rc != SQLITE_DONE))
        goto fail;
    if (!nr)
        goto done;
    if (gt_busy(t, gpu_times, o, &busy, &nbusy) < 0)
        goto fail;
    /* Phases: ranges grouped by name; each phase's ranges merged. */
    qsort(rs, nr, sizeof(*rs), gt_range_by_name);
    rows = calloc(nr, sizeof(*rows));
    iv = malloc(nr * sizeof(*iv));
    phase_of = malloc(nr * sizeof(*phase_of));
    if (!rows || !iv || !phase_of)
        goto fail;
    for (size_t i = 0; i < nr;) {
        size_t j = i;
        struct gt_phase_row *p = &rows[nphases];
        snprintf(p->name, sizeof(p->name), "%s", rs[i].name);
        p->first_ns = rs[i].start;
        for (; j < nr && strcmp(rs[j].name, rs[i].name) == 0; j++) {
            iv[j - i].a = rs[j].start;
            iv[j - i].b = rs[j].end;
        }
        p->ranges = j - i;
        size_t m = gt_iv_union(iv, j - i);
        for (size_t k = 0; k < m; k++)
            p->wall_ns += iv[k].b - iv[k].a;
        p->gpu_busy_ns = gt_iv_overlap(iv, m, busy, nbusy);
        p->gpu_idle_ns = p->wall_ns - p->gpu_busy_ns;
        p->gpu_idle_pct = p->wall_ns ? 100.0 * (double)p->gpu_idle_ns / (double)p->wall_ns : 0;
        for (size_t k = i; k < j; k++) {
            phase_of[k] = nphases;
            rs[k].phase = nphases;
        }
        nphases++;
        i = j;
    }
    /* The calls in each range: by its thread, started inside it. */
    {
        /* phase_of follows rs; sort both by id together. */
        size_t *idx = malloc(nr * sizeof(*idx));
        struct gt_prange *byid = malloc(nr * sizeof(*byid));
        if (!idx || !byid) {
            free(idx);
            free(byid);
            goto fail;
        }
        for (size_t k = 0; k < nr; k++) {
            byid[k] = rs[k];
            byid[k].start = phase_of[k]; /* carried through the sort */
        }
        qsort(byid, nr, sizeof(*byid), gt_range_by_id);
        for (size_t k = 0; k < nr; k++)
            idx[k] = (size_t)byid[k].start;
        static const char *const sums[3] = {
            "SELECT r.id, count(*), sum(c.end_ns - c.start_ns) " GT_TOP_RANGES " JOIN api_calls c "
            "ON c.tid = r.tid AND c.start_ns >= r.start_ns AND c.start_ns < r.end_ns "
            "WHERE " GT_TOP_WHERE " AND c.category = 'launch' AND c.result = 0 AND c.captured = 0 GROUP BY r.id",
            "SELECT r.id, count(*), sum(m.bytes) " GT_TOP_RANGES " JOIN api_calls c "
            "ON c.tid = r.tid AND c.start_ns >= r.start_ns AND c.start_ns < r.end_ns "
            "JOIN copy_args a ON a.call_id = c.id AND a.kind = 'HtoD' JOIN memcpys m ON m.api_call_id = c.id "
            "WHERE " GT_TOP_WHERE " AND c.category = 'memcpy' AND c.result = 0 AND c.captured = 0 GROUP BY r.id",
            "SELECT r.id, count(*), sum(c.end_ns - c.start_ns) " GT_TOP_RANGES " JOIN api_calls c "
            "ON c.tid = r.tid AND c.start_ns >= r.start_ns AND c.start_ns < r.end_ns "
            "JOIN sync_args s ON s.call_id = c.id AND s.kind != 'stream_wait_event' "
            "WHERE " GT_TOP_WHERE " AND c.category = 'sync' GROUP BY r.id",
        };
        int bad = 0;
        for (int w = 0; w < 3 && !bad; w++)
            bad = gt_phase_sums(t, sums[w], byid, nr, idx, rows, w) < 0;
        free(idx);
        free(byid);
        if (bad)
            goto fail;
    }
    /* By first start; the ranges' phase indexes follow the rows. */
    {
        size_t *perm = malloc(nphases * sizeof(*perm)), *inv = malloc(nphases * sizeof(*inv));
        struct gt_phase_row *sorted = malloc(nphases * sizeof(*sorted));
        struct gt_phase_span *spans = malloc((nr < GT_PHASE_SPANS ? nr : GT_PHASE_SPANS) * sizeof(*spans));
        if (!perm || !inv || !sorted || !spans) {
            free(perm);
            free(inv);
            free(sorted);
            free(spans);
            goto fail;
        }
        gt_sort_rows = rows;
        for (size_t k = 0; k < nphases; k++)
            perm[k] = k;
        qsort(perm, nphases, sizeof(*perm), gt_phase_perm_cmp);
        for (size_t k = 0; k < nphases; k++) {
            sorted[k] = rows[perm[k]];
            inv[perm[k]] = k;
        }
        free(rows);
        rows = sorted;
        /* the earliest ranges, for the HTML timeline */
        qsort(rs, nr, sizeof(*rs), gt_range_by_start_keep);
        size_t ns = 0;
        for (size_t k = 0; k < nr && ns < GT_PHASE_SPANS; k++) {
            spans[ns].phase = inv[rs[k].phase];
            spans[ns].start_ns = rs[k].start;
            spans[ns].end_ns = rs[k].end;
            ns++;
        }
        r->phase_spans = spans;
        r->nphase_spans = ns;
        free(perm);
        free(inv);
    }
done:
    for (size_t k = 0; k < nr; k++)
        free(rs[k].name);
    free(rs);
    free(busy);
    free(iv);
    free(phase_of);
    r->phases = rows;
    r->nphases = nphases;
    return 0;
fail:
    gt_trace_sql_error(t, "phases");
    for (size_t k = 0; k < nr; k++)
        free(rs[k].name);
    free(rs);
    free(busy);
    free(iv);
    free(phase_of);
    free(rows);
    return -1;
}

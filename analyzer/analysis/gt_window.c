/* gt_window.c: --from, --to and --range resolved on one trace
 * (docs/report.md, Windows). */
#include <fnmatch.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/gt_steps.h"
#include "analysis/gt_window.h"
#include "base/gt_err.h"
#include "base/gt_fmt.h"

int gt_window_on(const struct gt_window_spec *w)
{
    return w && (w->from || w->to || w->range);
}

/* step:N: 1 and *n; 0: not a step; -1: step: with no number. */
static int gt_step_ref(const char *s, int64_t *n)
{
    if (strncmp(s, "step:", 5) != 0)
        return 0;
    char *end;
    long long v = strtoll(s + 5, &end, 10);
    if (!s[5] || *end || v < 0)
        return -1;
    *n = v;
    return 1;
}

static int gt_check_one(const char *v, const char *opt, const char *cmd)
{
    int64_t n;
    uint64_t ns;
    int k = gt_step_ref(v, &n);
    if (k < 0 || (k == 0 && gt_parse_duration(v, &ns) < 0)) {
        gt_usage_error(cmd, "--%s must be a time from the trace's start such as 1.5s or 200ms, or a step such "
                       "as step:10, not '%s'", opt, v);
        return -1;
    }
    return 0;
}

int gt_window_check(const struct gt_window_spec *w, const char *cmd)
{
    if (w->from && gt_check_one(w->from, "from", cmd) < 0)
        return -1;
    if (w->to && gt_check_one(w->to, "to", cmd) < 0)
        return -1;
    if (w->range && !*w->range) {
        gt_usage_error(cmd, "--range needs a range name (a glob such as 'data*')");
        return -1;
    }
    return 0;
}

/* One bound: a time from origin, or step N's start (from) or end (to). */
static int gt_bound(struct gt_trace *t, const struct gt_window_spec *w, const char *v, int is_to,
                    int64_t origin_ns, uint64_t *out)
{
    int64_t n;
    if (gt_step_ref(v, &n) == 1) {
        struct gt_stepper *s;
        if (gt_steps_open(t, w->step_glob, NULL, NULL, &s) < 0)
            return -1;
        uint64_t a, b;
        int64_t lo, hi;
        int found = gt_steps_bounds(s, n, &a, &b, &lo, &hi);
        gt_steps_free(s);
        if (found < 0) {
            gt_err("%s: --%s %s: the trace has no steps (NVTX ranges named %s)", t->path, is_to ? "to" : "from", v,
                   w->step_glob ? w->step_glob : "like step, train_step or ProfilerStep#N");
            return -1;
        }
        if (!found) {
            gt_err("%s: --%s %s: no step %" PRId64 " (its steps are numbered %" PRId64 " to %" PRId64 ")", t->path,
                   is_to ? "to" : "from", v, n, lo, hi);
            return -1;
        }
        *out = is_to ? b : a;
        return 0;
    }
    uint64_t ns = 0;
    gt_parse_duration(v, &ns);
    *out = (uint64_t)origin_ns + ns;
    return 0;
}

/* The ranges `glob` names inside [from, to], as intervals. */
static int gt_range_union(struct gt_trace *t, const char *glob, uint64_t from, uint64_t to, struct gt_window *out)
{
    int64_t nview = 0;
    if (t->schema_version < 6 ||
        gt_trace_int(t, "SELECT count(*) FROM sqlite_master WHERE type = 'view' AND name = 'ranges'", &nview) < 0 ||
        !nview) {
        gt_err("%s: --range %s: the trace has no NVTX ranges (schema version %d)", t->path, glob, t->schema_version);
        return -1;
    }
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(t->db, "SELECT name, start_ns, end_ns FROM ranges WHERE end_ns IS NOT NULL AND "
                           "name IS NOT NULL AND end_ns > start_ns AND start_ns >= ?1 AND end_ns <= ?2",
                           -1, &st, NULL) != SQLITE_OK) {
        gt_trace_sql_error(t, "ranges");
        return -1;
    }
    sqlite3_bind_int64(st, 1, (int64_t)(from > INT64_MAX ? INT64_MAX : from));
    sqlite3_bind_int64(st, 2, (int64_t)(to > INT64_MAX ? INT64_MAX : to));
    uint64_t *iv = NULL;
    size_t n = 0, cap = 0;
    int rc, oom = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (fnmatch(glob, (const char *)sqlite3_column_text(st, 0), 0) != 0)
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            uint64_t *g = realloc(iv, 2 * cap * sizeof(*iv));
            if (!g) {
                oom = 1;
                break;
            }
            iv = g;
        }
        iv[2 * n] = (uint64_t)sqlite3_column_int64(st, 1);
        iv[2 * n + 1] = (uint64_t)sqlite3_column_int64(st, 2);
        n++;
    }
    sqlite3_finalize(st);
    if (oom || (rc != SQLITE_DONE && rc != SQLITE_ROW)) {
        free(iv);
        gt_trace_sql_error(t, "ranges");
        return -1;
    }
    if (!n) {
        free(iv);
        gt_err("%s: --range %s: no range of that name ended%s", t->path, glob,
               from || to != UINT64_MAX ? " inside --from/--to" : "");
        return -1;
    }
    rc = gt_window_set(out, iv, n);
    free(iv);
    if (rc < 0)
        gt_err("%s: out of memory", t->path);
    return rc;
}

/* 1 when w lies wholly outside the run: before its first call or GPU
 * work starts, or after the last ends (a window inside the run where
 * nothing starts is the GPU's idle time there, not empty). A view a trace
 * lacks counts as holding nothing. */
static int gt_window_holds_nothing(struct gt_trace *t, const struct gt_window *w)
{
    static const char *const sql[] = {"SELECT min(start_ns), max(end_ns) FROM api_calls",
                                      "SELECT min(start_ns), max(end_ns) FROM gpu_activity"};
    for (size_t k = 0; k < sizeof(sql) / sizeof(sql[0]); k++) {
        sqlite3_stmt *q;
        if (sqlite3_prepare_v2(t->db, sql[k], -1, &q, NULL) != SQLITE_OK)
            continue;
        if (sqlite3_step(q) == SQLITE_ROW && sqlite3_column_type(q, 0) != SQLITE_NULL) {
            uint64_t lo = (uint64_t)sqlite3_column_int64(q, 0);
            uint64_t hi = sqlite3_column_type(q, 1) == SQLITE_NULL ? UINT64_MAX : (uint64_t)sqlite3_column_int64(q, 1);
            for (size_t i = 0; i < w->n; i++)
                if (w->a[i] <= hi && w->b[i] > lo) {
                    sqlite3_finalize(q);
                    return 0;
                }
        }
        sqlite3_finalize(q);
    }
    return 1;
}

int gt_window_resolve(struct gt_trace *t, const struct gt_window_spec *w, int64_t origin_ns, struct gt_window *out)
{
    memset(out, 0, sizeof(*out));
    uint64_t from = 0, to = UINT64_MAX;
    if (w->from && gt_bound(t, w, w->from, 0, origin_ns, &from) < 0)
        return -1;
    if (w->to && gt_bound(t, w, w->to, 1, origin_ns, &to) < 0)
        return -1;
    if (to <= from) {
        gt_err("%s: the window is empty: --to comes at or before --from", t->path);
        return -1;
    }
    if (w->range) {
        if (gt_range_union(t, w->range, from, to, out) < 0)
            return -1;
    } else {
        uint64_t iv[2] = {from, to};
        if (gt_window_set(out, iv, 1) < 0) {
            gt_err("%s: out of memory", t->path);
            return -1;
        }
    }
    if (gt_window_holds_nothing(t, out)) {
        gt_err("%s: the window is empty: it lies before the first CUDA call or after the run's end (its times "
               "count from the trace's start, as report's +TIME does)", t->path);
        gt_window_free(out);
        return -1;
    }
    return 0;
}

/* A trace's meta.start_ns, read quietly (INT64_MAX: none): without a
 * window the origin only places +TIME, and a trace that cannot be read is
 * said once, when the report reads it. */
static int64_t gt_quiet_start(const char *path)
{
    sqlite3 *db = NULL;
    int64_t s = INT64_MAX;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK) {
        sqlite3_stmt *q;
        if (sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = 'start_ns'", -1, &q, NULL) == SQLITE_OK) {
            if (sqlite3_step(q) == SQLITE_ROW && sqlite3_column_type(q, 0) != SQLITE_NULL)
                s = sqlite3_column_int64(q, 0);
            sqlite3_finalize(q);
        }
    }
    sqlite3_close(db);
    return s;
}

int64_t gt_window_origin(char *const *paths, int n, const struct gt_window_spec *w)
{
    int64_t origin = INT64_MAX;
    for (int i = 0; i < n; i++) {
        int64_t s = INT64_MAX;
        if (!gt_window_on(w)) {
            s = gt_quiet_start(paths[i]);
        } else {
            struct gt_trace t;
            if (gt_trace_open(&t, paths[i]) != 0)
                continue; /* said again when the trace is read */
            s = gt_trace_meta_int(&t, "start_ns", INT64_MAX);
            gt_trace_close(&t);
        }
        if (s < origin)
            origin = s;
    }
    return origin == INT64_MAX ? 0 : origin;
}

/* gt_export_chrome.c: the Chrome trace event JSON that ui.perfetto.dev and
 * chrome://tracing open.
 *
 * Tracks: one per host thread (its CUDA calls, with their arguments and
 * call site, and its NVTX push ranges and marks), one per GPU stream
 * (kernels, copies, memsets, under a "GPU N" process), and one of idle
 * gaps per GPU; NVTX start/end ranges, which may end on another thread,
 * and push ranges of a domain other than the default, which may cross the
 * thread's other slices, are async slices; host samples (schema 7) are instant
 * events on their thread's track. A flow arrow runs from
 * each call to the GPU work it caused. Rows are streamed from SQL to the
 * file: memory does not grow with the trace. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/gt_analyze.h"
#include "base/gt_err.h"
#include "output/gt_export_chrome.h"
#include "base/gt_fmt.h"
#include "analysis/gt_site.h"
#include "trace/gt_trace.h"

#define GT_GPU_PID_BASE 1000000000LL /* GPU "processes": apart from any real pid */
#define GT_IDLE_TID     2147483647LL /* the idle-gap track of a GPU */

int gt_export_in_window(const struct gt_export *x, int64_t ns)
{
    uint64_t at = ns > x->origin_ns ? (uint64_t)ns - (uint64_t)x->origin_ns : 0;
    return at >= x->from_ns && at < x->to_ns && (!x->win || gt_window_has(x->win, (uint64_t)ns));
}

static void gt_ev_begin(struct gt_export *x)
{
    fputs(x->first ? "\n" : ",\n", x->out);
    x->first = 0;
    x->events++;
}

/* a - b, held within int64 (a damaged trace may hold any times). */
static int64_t gt_sub_sat(int64_t a, int64_t b)
{
    int64_t d;
    if (__builtin_sub_overflow(a, b, &d))
        return a < b ? INT64_MIN + 1 : INT64_MAX;
    return d == INT64_MIN ? INT64_MIN + 1 : d;
}

static void gt_ts(struct gt_export *x, const char *key, int64_t ns)
{
    int64_t d = gt_sub_sat(ns, x->origin_ns);
    fprintf(x->out, ",\"%s\":%s%" PRId64 ".%03" PRId64, key, d < 0 ? "-" : "", (d < 0 ? -d : d) / 1000,
            (d < 0 ? -d : d) % 1000);
}

static void gt_dur(struct gt_export *x, int64_t start, int64_t end)
{
    int64_t d = end > start ? gt_sub_sat(end, start) : 0;
    fprintf(x->out, ",\"dur\":%" PRId64 ".%03" PRId64, d / 1000, d % 1000);
}

static void gt_meta_name(struct gt_export *x, const char *what, int64_t pid, int64_t tid, const char *name)
{
    gt_ev_begin(x);
    fprintf(x->out, "{\"ph\":\"M\",\"name\":\"%s\",\"pid\":%" PRId64 ",\"tid\":%" PRId64 ",\"args\":{\"name\":",
            what, pid, tid);
    gt_put_json_string(x->out, name);
    fputs("}}", x->out);
}

/* A GPU's "process": one per traced process and device. */
static int64_t gt_gpu_track_pid(int64_t pid, int64_t device)
{
    return GT_GPU_PID_BASE + pid * 64 + (device & 63);
}

/* ---- host calls ---- */

static int gt_export_calls(struct gt_trace *t, struct gt_export *x, struct gt_sites *sites, int64_t pid)
{
    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(t->db,
                           "SELECT c.id, c.tid, c.name, c.category, c.start_ns, c.end_ns, c.result, c.stream, "
                           GT_SITE_KEY("c") ", COALESCE(s.demangled, s.value), l.grid_x, l.block_x, a.kind, "
                           "a.bytes, a.host_mem, a.async, ms.bytes, y.kind, c.captured "
                           "FROM api_calls c LEFT JOIN launch_args l ON l.call_id = c.id "
                           "LEFT JOIN strings s ON s.id = l.name_id LEFT JOIN copy_args a ON a.call_id = c.id "
                           "LEFT JOIN memset_args ms ON ms.call_id = c.id LEFT JOIN sync_args y ON y.call_id = c.id "
                           "ORDER BY c.start_ns",
                           -1, &q, NULL) != SQLITE_OK) {
        gt_err("%s: %s", t->path, sqlite3_errmsg(t->db));
        return -1;
    }
    while (sqlite3_step(q) == SQLITE_ROW) {
        if (!gt_export_in_window(x, sqlite3_column_int64(q, 4)))
            continue;
        gt_ev_begin(x);
        fprintf(x->out, "{\"ph\":\"X\",\"pid\":%" PRId64 ",\"tid\":%lld,\"name\":", pid,
                (long long)sqlite3_column_int64(q, 1));
        gt_put_json_string(x->out, (const char *)sqlite3_column_text(q, 2));
        fputs(",\"cat\":", x->out);
        gt_put_json_string(x->out, (const char *)sqlite3_column_text(q, 3));
        gt_ts(x, "ts", sqlite3_column_int64(q, 4));
        gt_dur(x, sqlite3_column_int64(q, 4), sqlite3_column_int64(q, 5));
        fprintf(x->out, ",\"args\":{\"call_id\":%lld,\"result\":%d", (long long)sqlite3_column_int64(q, 0),
                sqlite3_column_int(q, 6));
        if (sqlite3_column_type(q, 7) != SQLITE_NULL)
            fprintf(x->out, ",\"stream\":%lld", (long long)sqlite3_column_int64(q, 7));
        if (sqlite3_column_type(q, 9) != SQLITE_NULL) {
            fputs(",\"kernel\":", x->out);
            gt_put_json_string(x->out, (const char *)sqlite3_column_text(q, 9));
            fprintf(x->out, ",\"grid_x\":%d,\"block_x\":%d", sqlite3_column_int(q, 10), sqlite3_column_int(q, 11));
        }
        if (sqlite3_column_type(q, 12) != SQLITE_NULL) {
            fputs(",\"copy\":", x->out);
            gt_put_json_string(x->out, (const char *)sqlite3_column_text(q, 12));
            fprintf(x->out, ",\"bytes\":%lld,\"host_mem\":", (long long)sqlite3_column_int64(q, 13));
            gt_put_json_string(x->out, (const char *)sqlite3_column_text(q, 14));
            fprintf(x->out, ",\"async\":%d", sqlite3_column_int(q, 15));
        }
        if (sqlite3_column_type(q, 16) != SQLITE_NULL)
            fprintf(x->out, ",\"bytes\":%lld", (long long)sqlite3_column_int64(q, 16));
        if (sqlite3_column_type(q, 17) != SQLITE_NULL) {
            fputs(",\"sync\":", x->out);
            gt_put_json_string(x->out, (const char *)sqlite3_column_text(q, 17));
        }
        if (sqlite3_column_int(q, 18))
            fputs(",\"captured\":1", x->out);
        int64_t key = sqlite3_column_int64(q, 8);
        /* The whole stacks are a query away (stack_frames, py_stack_frames). */
        if (key & 0xffffffff)
            fprintf(x->out, ",\"stack_id\":%lld", (long long)(key & 0xffffffff));
        if (key >> 32)
            fprintf(x->out, ",\"pystack_id\":%lld", (long long)(key >> 32));
        const struct gt_site *site = gt_site_of(sites, key);
        if (site->nframes) {
            fputs(",\"site\":", x->out);
            gt_site_put_json(x->out, site);
        }
        fputs("}}", x->out);
    }
    sqlite3_finalize(q);
    return 0;
}

/* ---- NVTX (schema 6): ranges and marks ---- */

static void gt_nvtx_args(struct gt_export *x, sqlite3_stmt *q, int col)
{
    /* domain, category_name, category, payload, then id */
    fputs(",\"args\":{", x->out);
    int any = 0;
    if (sqlite3_column_type(q, col) != SQLITE_NULL) {
        fputs("\"domain\":", x->out);
        gt_put_json_string(x->out, (const char *)sqlite3_column_text(q, col));
        any = 1;
    }
    if (sqlite3_column_int64(q, col + 2)) {
        fprintf(x->out, "%s\"category\":%lld", any ? "," : "", (long long)sqlite3_column_int64(q, col + 2));
        any = 1;
        if (sqlite3_column_type(q, col + 1) != SQLITE_NULL) {
            fputs(",\"category_name\":", x->out);
            gt_put_json_string(x->out, (const char *)sqlite3_column_text(q, col + 1));
        }
    }
    if (sqlite3_column_type(q, col + 3) == SQLITE_INTEGER) {
        fprintf(x->out, "%s\"payload\":%lld", any ? "," : "", (long long)sqlite3_column_int64(q, col + 3));
        any = 1;
    } else if (sqlite3_column_type(q, col + 3) == SQLITE_FLOAT) {
        fprintf(x->out, "%s\"payload\":%.17g", any ? "," : "", sqlite3_column_double(q, col + 3));
        any = 1;
    }
    fprintf(x->out, "%s\"nvtx_id\":%lld}", any ? "," : "", (long long)sqlite3_column_int64(q, col + 4));
}

static int gt_export_nvtx(struct gt_trace *t, struct gt_export *x, int64_t pid)
{
    if (t->schema_version < 6)
        return 0;
    /* A range still open when the trace was finished is drawn to its end. */
    int64_t end_ns = gt_trace_meta_int(t, "end_ns", 0);
    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(t->db,
                           "SELECT kind, tid, COALESCE(name, '(unnamed)'), start_ns, end_ns, domain, category_name, "
                           "category, payload, id FROM ranges ORDER BY start_ns, id",
                           -1, &q, NULL) != SQLITE_OK) {
        gt_err("%s: %s", t->path, sqlite3_errmsg(t->db));
        return -1;
    }
    while (sqlite3_step(q) == SQLITE_ROW) {
        int push = strcmp((const char *)sqlite3_column_text(q, 0), "push") == 0;
        int64_t start = sqlite3_column_int64(q, 3);
        int open = sqlite3_column_type(q, 4) == SQLITE_NULL;
        int64_t end = open ? (end_ns > start ? end_ns : start) : sqlite3_column_int64(q, 4);
        long long id = (long long)sqlite3_column_int64(q, 9);
        if (!gt_export_in_window(x, start)) /* --from/--to: ranges that start in the window */
            continue;
        /* Push ranges of another domain than the default keep a stack of
         * their own and may cross the thread's other slices, which "X"
         * slices on one thread must not: they go as async slices too. */
        if (push && sqlite3_column_type(q, 5) == SQLITE_NULL) {
            gt_ev_begin(x);
            fprintf(x->out, "{\"ph\":\"X\",\"pid\":%" PRId64 ",\"tid\":%lld,\"cat\":\"nvtx\",\"name\":", pid,
                    (long long)sqlite3_column_int64(q, 1));
            gt_put_json_string(x->out, (const char *)sqlite3_column_text(q, 2));
            gt_ts(x, "ts", start);
            gt_dur(x, start, end);
            gt_nvtx_args(x, q, 5);
            fputs("}", x->out);
            continue;
        }
        /* start/end (or another domain's push): an async slice, begun and ended by its id */
        for (int e = 0; e < 2; e++) {
            gt_ev_begin(x);
            fprintf(x->out, "{\"ph\":\"%s\",\"pid\":%" PRId64 ",\"tid\":%lld,\"cat\":\"nvtx\",\"id\":%lld,"
                            "\"name\":", e ? "e" : "b", pid, (long long)sqlite3_column_int64(q, 1), id);
            gt_put_json_string(x->out, (const char *)sqlite3_column_text(q, 2));
            gt_ts(x, "ts", e ? end : start);
            if (!e)
                gt_nvtx_args(x, q, 5);
            fputs("}", x->out);
        }
    }
    sqlite3_finalize(q);
    if (sqlite3_prepare_v2(t->db,
                           "SELECT tid, COALESCE(name, '(unnamed)'), ns, domain, category_name, category, payload, id "
                           "FROM marks ORDER BY ns, id",
                           -1, &q, NULL) != SQLITE_OK) {
        gt_err("%s: %s", t->path, sqlite3_errmsg(t->db));
        return -1;
    }
    while (sqlite3_step(q) == SQLITE_ROW) {
        if (!gt_export_in_window(x, sqlite3_column_int64(q, 2)))
            continue;
        gt_ev_begin(x);
        fprintf(x->out, "{\"ph\":\"i\",\"s\":\"t\",\"pid\":%" PRId64 ",\"tid\":%lld,\"cat\":\"nvtx\",\"name\":",
                pid, (long long)sqlite3_column_int64(q, 0));
        gt_put_json_string(x->out, (const char *)sqlite3_column_text(q, 1));
        gt_ts(x, "ts", sqlite3_column_int64(q, 2));
        gt_nvtx_args(x, q, 3);
        fputs("}", x->out);
    }
    sqlite3_finalize(q);
    return 0;
}

/* ---- host samples (schema 7) ---- */

/* An instant event each on its thread's track, named as the report names
 * them ("train.py:45 in __next__ (blocked in read)"), as in the Perfetto
 * export; the row's fields in args, its stacks a query away. */
static int gt_export_samples(struct gt_trace *t, struct gt_export *x, int64_t pid)
{
    if (t->schema_version < 7)
        return 0;
    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(t->db, "SELECT tid, ns, state, syscall, COALESCE(pystack_id, 0), COALESCE(stack_id, 0), "
                                  "id FROM host_samples ORDER BY ns, id",
                           -1, &q, NULL) != SQLITE_OK) {
        gt_err("%s: host samples: %s", t->path, sqlite3_errmsg(t->db));
        return -1;
    }
    struct gt_sample_names names = {0};
    int rc = 0;
    while (sqlite3_step(q) == SQLITE_ROW) {
        int64_t ns = sqlite3_column_int64(q, 1);
        if (!gt_export_in_window(x, ns))
            continue;
        const char *state = (const char *)sqlite3_column_text(q, 2);
        const char *sc = (const char *)sqlite3_column_text(q, 3);
        int64_t py = sqlite3_column_int64(q, 4), nat = sqlite3_column_int64(q, 5);
        const char *name = gt_sample_name(&names, t->db, state, sc, py, nat);
        if (!name) {
            gt_err("%s: host samples: out of memory", t->path);
            rc = -1;
            break;
        }
        gt_ev_begin(x);
        fprintf(x->out, "{\"ph\":\"i\",\"s\":\"t\",\"pid\":%" PRId64 ",\"tid\":%lld,\"cat\":\"host_sample\","
                        "\"name\":", pid, (long long)sqlite3_column_int64(q, 0));
        gt_put_json_string(x->out, name);
        gt_ts(x, "ts", ns);
        fprintf(x->out, ",\"args\":{\"sample_id\":%lld,\"state\":", (long long)sqlite3_column_int64(q, 6));
        gt_put_json_string(x->out, state);
        if (sc) {
            fputs(",\"syscall\":", x->out);
            gt_put_json_string(x->out, sc);
        }
        if (py)
            fprintf(x->out, ",\"pystack_id\":%lld", (long long)py);
        if (nat)
            fprintf(x->out, ",\"stack_id\":%lld", (long long)nat);
        fputs("}}", x->out);
    }
    sqlite3_finalize(q);
    gt_sample_names_free(&names);
    return rc;
}

/* ---- GPU work and the arrows to it ---- */

static int gt_export_gpu(struct gt_trace *t, struct gt_export *x, int64_t pid)
{
    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(t->db,
                           "SELECT g.id, g.kind, g.device, g.stream, g.start_ns, g.end_ns, g.name, g.bytes, "
                           "g.copy_kind, g.api_call_id, c.tid, c.start_ns, g.correlation_id "
                           "FROM gpu_activity g LEFT JOIN calls c ON c.id = g.api_call_id ORDER BY g.start_ns",
                           -1, &q, NULL) != SQLITE_OK) {
        gt_err("%s: %s", t->path, sqlite3_errmsg(t->db));
        return -1;
    }
    /* Streams named once each, as first seen. */
    int64_t named[512];
    size_t nnamed = 0;
    while (sqlite3_step(q) == SQLITE_ROW) {
        if (!gt_export_in_window(x, sqlite3_column_int64(q, 4)))
            continue;
        int64_t dev = sqlite3_column_int64(q, 2), stream = sqlite3_column_int64(q, 3);
        int64_t gpid = gt_gpu_track_pid(pid, dev);
        int seen = 0;
        for (size_t i = 0; i < nnamed && !seen; i++)
            seen = named[i] == (dev << 32 | (stream & 0xffffffff));
        if (!seen && nnamed < sizeof(named) / sizeof(named[0])) {
            named[nnamed++] = dev << 32 | (stream & 0xffffffff);
            char name[64];
            snprintf(name, sizeof(name), "stream %lld", (long long)stream);
            gt_meta_name(x, "thread_name", gpid, stream, name);
        }
        const char *kind = (const char *)sqlite3_column_text(q, 1);
        const char *name = (const char *)sqlite3_column_text(q, 6);
        char label[96];
        if (kind && strcmp(kind, "memcpy") == 0)
            snprintf(label, sizeof(label), "memcpy %s", sqlite3_column_text(q, 8) ? (const char *)sqlite3_column_text(q, 8) : "");
        else if (kind && strcmp(kind, "memset") == 0)
            snprintf(label, sizeof(label), "memset");
        else
            label[0] = 0;
        gt_ev_begin(x);
        fprintf(x->out, "{\"ph\":\"X\",\"pid\":%" PRId64 ",\"tid\":%" PRId64 ",\"name\":", gpid, stream);
        gt_put_json_string(x->out, label[0] ? label : name ? name : "kernel");
        fputs(",\"cat\":", x->out);
        gt_put_json_string(x->out, kind ? kind : "gpu");
        gt_ts(x, "ts", sqlite3_column_int64(q, 4));
        gt_dur(x, sqlite3_column_int64(q, 4), sqlite3_column_int64(q, 5));
        fputs(",\"args\":{", x->out);
        /* A GPU record kept in its call's row (schema 3) has no ids of its own. */
        if (sqlite3_column_type(q, 12) != SQLITE_NULL)
            fprintf(x->out, "\"correlation_id\":%lld,", (long long)sqlite3_column_int64(q, 12));
        if (sqlite3_column_type(q, 7) != SQLITE_NULL && sqlite3_column_int64(q, 7))
            fprintf(x->out, "\"bytes\":%lld,", (long long)sqlite3_column_int64(q, 7));
        if (sqlite3_column_type(q, 9) != SQLITE_NULL)
            fprintf(x->out, "\"call_id\":%lld", (long long)sqlite3_column_int64(q, 9));
        else
            fputs("\"call_id\":null", x->out);
        fputs("}}", x->out);
        /* The arrow: from the call (bound to the slice around its start) to
         * the GPU slice (bound to the one enclosing its start). */
        if (sqlite3_column_type(q, 9) != SQLITE_NULL && gt_export_in_window(x, sqlite3_column_int64(q, 11))) {
            /* Unique per arrow: the GPU record's id, or its call's where
             * the record has none (kept in the call's row). */
            long long id = sqlite3_column_type(q, 0) != SQLITE_NULL ? 2 * (long long)sqlite3_column_int64(q, 0)
                                                                     : 2 * (long long)sqlite3_column_int64(q, 9) + 1;
            gt_ev_begin(x);
            fprintf(x->out, "{\"ph\":\"s\",\"id\":%lld,\"name\":\"launch\",\"cat\":\"flow\",\"pid\":%" PRId64
                            ",\"tid\":%lld",
                    id, pid, (long long)sqlite3_column_int64(q, 10));
            gt_ts(x, "ts", sqlite3_column_int64(q, 11));
            fputs("}", x->out);
            gt_ev_begin(x);
            fprintf(x->out, "{\"ph\":\"f\",\"bp\":\"e\",\"id\":%lld,\"name\":\"launch\",\"cat\":\"flow\",\"pid\":%" PRId64
                            ",\"tid\":%" PRId64,
                    id, gpid, stream);
            gt_ts(x, "ts", sqlite3_column_int64(q, 4));
            fputs("}", x->out);
        }
    }
    sqlite3_finalize(q);
    return 0;
}

/* ---- idle gaps, from the same analysis as the report ---- */

static int gt_export_gaps(struct gt_trace *t, struct gt_export *x, int64_t pid)
{
    struct gt_analyze_opts o = {.min_gap_ns = x->min_gap_ns, .top = 0};
    struct gt_report r;
    if (gt_analyze(t, &o, &r) < 0)
        return -1;
    int named[64] = {0};
    for (size_t i = 0; i < r.ngaps; i++) {
        const struct gt_gap *g = &r.gaps[i];
        if (!gt_export_in_window(x, (int64_t)g->start_ns))
            continue;
        int64_t gpid = gt_gpu_track_pid(pid, g->device);
        if (!named[g->device & 63]) {
            named[g->device & 63] = 1;
            gt_meta_name(x, "thread_name", gpid, GT_IDLE_TID, "idle gaps");
        }
        char dur[32], name[96];
        snprintf(name, sizeof(name), "idle %s (%s)", gt_fmt_duration((int64_t)g->dur_ns, dur, sizeof(dur)),
                 gt_cause_names[g->cause]);
        gt_ev_begin(x);
        fprintf(x->out, "{\"ph\":\"X\",\"pid\":%" PRId64 ",\"tid\":%lld,\"name\":", gpid, GT_IDLE_TID);
        gt_put_json_string(x->out, name);
        fputs(",\"cat\":\"idle\"", x->out);
        gt_ts(x, "ts", (int64_t)g->start_ns);
        gt_dur(x, (int64_t)g->start_ns, (int64_t)(g->start_ns + g->dur_ns));
        fputs(",\"args\":{\"cause\":", x->out);
        gt_put_json_string(x->out, gt_cause_names[g->cause]);
        fprintf(x->out, ",\"idle_ns\":%" PRIu64 ",\"before\":", g->dur_ns);
        gt_site_put_json(x->out, &g->before);
        fputs(",\"after\":", x->out);
        gt_site_put_json(x->out, &g->after);
        fputs("}}", x->out);
    }
    gt_report_free(&r);
    return 0;
}

int gt_export_chrome_trace(struct gt_trace *t, struct gt_export *x)
{
    int64_t pid = gt_trace_meta_int(t, "pid", 0);
    char name[1100], *cmd = gt_trace_meta(t, "cmdline");
    snprintf(name, sizeof(name), "%s (pid %lld)", cmd && *cmd ? cmd : "process", (long long)pid);
    free(cmd);
    gt_meta_name(x, "process_name", pid, 0, name);
    sqlite3_stmt *q;
    /* Threads that made calls, (schema 6) NVTX ranges or marks, and
     * (schema 7) host samples; the name NVTX gave a thread before the one
     * the system knows. */
    const char *threads = t->schema_version >= 7
        ? "SELECT x.tid, COALESCE((SELECT n.name FROM thread_names n WHERE n.tid = x.tid), th.name) FROM "
          "(SELECT tid FROM calls UNION SELECT tid FROM nvtx_ranges UNION SELECT tid FROM nvtx_marks "
          "UNION SELECT tid FROM samples) x LEFT JOIN threads th ON th.tid = x.tid"
        : t->schema_version >= 6
        ? "SELECT x.tid, COALESCE((SELECT n.name FROM thread_names n WHERE n.tid = x.tid), th.name) FROM "
          "(SELECT tid FROM calls UNION SELECT tid FROM nvtx_ranges UNION SELECT tid FROM nvtx_marks) x "
          "LEFT JOIN threads th ON th.tid = x.tid"
        : "SELECT DISTINCT c.tid, th.name FROM calls c LEFT JOIN threads th ON th.tid = c.tid";
    if (sqlite3_prepare_v2(t->db, threads, -1, &q, NULL) == SQLITE_OK) {
        while (sqlite3_step(q) == SQLITE_ROW) {
            char tname[320];
            const char *n = (const char *)sqlite3_column_text(q, 1);
            snprintf(tname, sizeof(tname), "%s (tid %lld)", n && *n ? n : "thread",
                     (long long)sqlite3_column_int64(q, 0));
            gt_meta_name(x, "thread_name", pid, sqlite3_column_int64(q, 0), tname);
        }
        sqlite3_finalize(q);
    }
    if (sqlite3_prepare_v2(t->db, "SELECT DISTINCT device FROM gpu_activity", -1, &q, NULL) == SQLITE_OK) {
        while (sqlite3_step(q) == SQLITE_ROW) {
            char gname[64];
            int64_t dev = sqlite3_column_int64(q, 0);
            snprintf(gname, sizeof(gname), "GPU %lld (pid %lld)", (long long)dev, (long long)pid);
            gt_meta_name(x, "process_name", gt_gpu_track_pid(pid, dev), 0, gname);
        }
        sqlite3_finalize(q);
    }
    struct gt_sites sites;
    if (gt_sites_init(&sites, t->db, t->schema_version) < 0) {
        gt_err("%s: %s", t->path, sqlite3_errmsg(t->db));
        gt_sites_free(&sites);
        return -1;
    }
    int rc = gt_export_calls(t, x, &sites, pid);
    gt_sites_free(&sites);
    if (rc == 0)
        rc = gt_export_nvtx(t, x, pid);
    if (rc == 0)
        rc = gt_export_samples(t, x, pid);
    if (rc == 0)
        rc = gt_export_gpu(t, x, pid);
    if (rc == 0)
        rc = gt_export_gaps(t, x, pid);
    return rc;
}


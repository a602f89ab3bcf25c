/* gt_flight.c: the lines that say where a flight recorder's window was
 * triggered, which calls it caught still running, and what a size bound
 * kept (gt_flight.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/gt_flight.h"
#include "base/gt_fmt.h"

static int gt_flight_window(struct gt_trace *t, char *line, size_t len)
{
    int64_t ws = gt_trace_meta_int(t, "window_start_ns", -1), we = gt_trace_meta_int(t, "window_end_ns", -1);
    int64_t fired = gt_trace_meta_int(t, "trigger_ns", -1);
    if (ws < 0 || fired < ws)
        return 0;
    char *why = gt_trace_meta(t, "window_trigger");
    char a[32], b[32], c[32];
    gt_fmt_duration(fired - ws, a, sizeof(a));
    if (we >= fired) {
        gt_fmt_duration(we - ws, b, sizeof(b));
        gt_fmt_duration(we - fired, c, sizeof(c));
        snprintf(line, len, "flight recorder window: its trigger fired %s into it (of %s: %s before, %s after): %s",
                 a, b, a, c, why ? why : "?");
    } else {
        snprintf(line, len, "flight recorder window: its trigger fired %s into it: %s", a, why ? why : "?");
    }
    free(why);
    return 1;
}

static int gt_flight_stuck(struct gt_trace *t, char *line, size_t len)
{
    sqlite3_stmt *q = NULL;
    int n = 0;
    if (sqlite3_prepare_v2(t->db,
                           "SELECT count(*), (SELECT name FROM api_calls WHERE result = -1 ORDER BY start_ns LIMIT 1), "
                           "(SELECT tid FROM api_calls WHERE result = -1 ORDER BY start_ns LIMIT 1), "
                           "(SELECT end_ns - start_ns FROM api_calls WHERE result = -1 ORDER BY start_ns LIMIT 1) "
                           "FROM api_calls WHERE result = -1",
                           -1, &q, NULL) == SQLITE_OK &&
        sqlite3_step(q) == SQLITE_ROW && sqlite3_column_int64(q, 0) > 0) {
        char d[32];
        const char *name = (const char *)sqlite3_column_text(q, 1);
        gt_fmt_duration(sqlite3_column_int64(q, 3), d, sizeof(d));
        long long cnt = sqlite3_column_int64(q, 0);
        snprintf(line, len,
                 "%lld call%s still running when the window closed (result -1, its end the window's): the first, "
                 "%s on thread %lld, for at least %s",
                 cnt, cnt == 1 ? " was" : "s were", name ? name : "?", (long long)sqlite3_column_int64(q, 2), d);
        n = 1;
    }
    sqlite3_finalize(q);
    return n;
}

static int gt_flight_bound(struct gt_trace *t, char *line, size_t len)
{
    char *mode = gt_trace_meta(t, "max_size_mode");
    int n = 0;
    if (mode && strcmp(mode, "last") == 0) {
        char *from = gt_trace_meta(t, "flight_complete_from");
        char b[32];
        gt_fmt_bytes(gt_trace_meta_int(t, "max_size_bytes", 0), b, sizeof(b));
        if (from && strcmp(from, "overwritten") == 0)
            snprintf(line, len, "GPUTRACE_MAX_SIZE=%s:last: the trace keeps the last part of the run, from its "
                                "window's start; what came before was dropped", b);
        else
            snprintf(line, len, "GPUTRACE_MAX_SIZE=%s:last: the whole run fit, nothing was dropped", b);
        free(from);
        n = 1;
    }
    free(mode);
    return n;
}

/* GPU times come from CUPTI, which runs from the window's opening only. */
static int gt_flight_no_gpu(struct gt_trace *t, char *line, size_t len)
{
    char *gpu = gt_trace_meta(t, "gpu_timing");
    int64_t ws = gt_trace_meta_int(t, "window_start_ns", -1), fired = gt_trace_meta_int(t, "trigger_ns", -1);
    int n = 0;
    if (gpu && strcmp(gpu, "cupti") == 0 && ws >= 0 && fired > ws) {
        char a[32];
        gt_fmt_duration(fired - ws, a, sizeof(a));
        snprintf(line, len, "the window's first %s (the flight recorder's, before its trigger) have no GPU times: "
                            "GPU figures count that part as idle", a);
        n = 1;
    }
    free(gpu);
    return n;
}

int gt_flight_lines(struct gt_trace *t, char out[][GT_FLIGHT_LINE], int max)
{
    int n = 0;
    char *has = gt_trace_meta(t, "flight_start_ns");
    if (has && n < max && gt_flight_bound(t, out[n], GT_FLIGHT_LINE))
        n++;
    char *mode = gt_trace_meta(t, "max_size_mode");
    int last = mode && strcmp(mode, "last") == 0;
    free(mode);
    if (has && !last && n < max && gt_flight_window(t, out[n], GT_FLIGHT_LINE))
        n++;
    if (has && n < max && gt_flight_stuck(t, out[n], GT_FLIGHT_LINE))
        n++;
    if (has && !last && n < max && gt_flight_no_gpu(t, out[n], GT_FLIGHT_LINE))
        n++;
    free(has);
    return n;
}

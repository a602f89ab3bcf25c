/* gt_record_summary.c: the few lines `gputrace record` ends with: where
 * each trace went, what it holds, the top finding, and the command that
 * shows more. Each traced process appends its trace's path to the file
 * named by GPUTRACE_RECORD_LIST (set by record), so children and exec'd
 * programs are found too. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/gt_analyze.h"
#include "cmd/gt_cmds.h"
#include "base/gt_fmt.h"
#include "cmd/gt_record_summary.h"
#include "trace/gt_trace.h"

#define GT_SUMMARY_LISTED 5
#define GT_SUMMARY_ALL_MAX 64 /* traces named one by one on the "more:" line */

static int gt_seen(char **paths, size_t n, const char *p)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(paths[i], p) == 0)
            return 1;
    return 0;
}

/* One line about one trace; its top finding, if any, into `finding`. */
/* Where the listed gaps' launching threads waited while other threads
 * ran, the top such stack (docs/report.md, "Host during the gap"),
 * appended to the finding: the thread to act on is the one that ran. */
static void gt_summary_waited(const struct gt_report *r, char *finding, size_t finding_len)
{
    if (!r->waited_idle_ns || !r->host_idle_ns)
        return;
    size_t k = strlen(GT_HOST_WAITED);
    for (size_t i = 0; i < r->nhost_stacks; i++) {
        const struct gt_host_stack_row *x = &r->host_stacks[i];
        size_t len = strlen(x->text), n = strlen(finding);
        if (len <= k + 1 || strcmp(x->text + len - k, GT_HOST_WAITED) != 0)
            continue;
        snprintf(finding + n, finding_len - n,
                 "; the launching thread waited in %.1f%% of the listed idle while other threads ran, most of "
                 "it (%.1f%%) %.*s",
                 100.0 * (double)r->waited_idle_ns / (double)r->host_idle_ns, x->pct, (int)(len - k - 1), x->text);
        return;
    }
}

static void gt_summary_line(const char *path, char *finding, size_t finding_len, uint64_t *best_calls)
{
    struct gt_trace t;
    char b1[32], b2[32];
    struct gt_report r;
    /* A trace that cannot be read says why itself, in one line. */
    if (gt_trace_open(&t, path) != 0)
        return;
    char *complete = gt_trace_meta(&t, "complete");
    int done = complete && strcmp(complete, "1") == 0;
    free(complete);
    struct gt_analyze_opts o = {.min_gap_ns = 1000000, .top = 1};
    int64_t calls = 0;
    gt_trace_int(&t, "SELECT count(*) FROM calls", &calls);
    if (!done || calls == 0) {
        char *stopped = done ? NULL : gt_trace_stop_reason(&t);
        gt_err("wrote %s: %lld CUDA calls%s%s", path, (long long)calls,
               done ? "" : stopped ? ", recording stopped early: " : ", process did not finish", stopped ? stopped : "");
        free(stopped);
        gt_trace_close(&t);
        return;
    }
    if (gt_analyze(&t, &o, &r) < 0) {
        gt_err("wrote %s: %lld CUDA calls", path, (long long)calls);
        gt_trace_close(&t);
        return;
    }
    const struct gt_summary *s = &r.summary;
    gt_err("wrote %s: %llu CUDA calls, %llu kernel launches, %s host-to-device, GPU idle %.1f%% of %s", path,
           (unsigned long long)s->calls, (unsigned long long)s->launches,
           gt_fmt_bytes((int64_t)s->h2d_bytes, b1, sizeof(b1)), s->idle_pct,
           gt_fmt_duration((int64_t)s->span_ns, b2, sizeof(b2)));
    /* module loading and JIT: time users pay before any work, said when it
     * was a large share (a tenth) of the run */
    if (s->module_ns && s->module_ns * 10 >= s->span_ns)
        gt_err("loading modules took %s (%.1f%% of the run), %llu compiled PTX",
               gt_fmt_duration((int64_t)s->module_ns, b1, sizeof(b1)),
               s->span_ns ? 100.0 * (double)s->module_ns / (double)s->span_ns : 0.0,
               (unsigned long long)s->module_jit);
    if (s->calls > *best_calls) {
        *best_calls = s->calls;
        /* the finding that cost the most time, and where */
        if (r.nfindings) {
            const struct gt_finding *f = &r.findings[0];
            int n = snprintf(finding, finding_len, "%s", f->title);
            if (f->has_site && f->site.nframes && n >= 0 && (size_t)n < finding_len)
                snprintf(finding + n, finding_len - (size_t)n, ", at %.200s", f->site.frames[0]);
            gt_summary_waited(&r, finding, finding_len);
        } else {
            finding[0] = 0;
        }
    }
    gt_report_free(&r);
    gt_trace_close(&t);
}

void gt_record_summary(const char *list_path, int say_none, const char *capture_range)
{
    FILE *f = fopen(list_path, "r");
    if (!f)
        return;
    char **paths = NULL, line[4200];
    size_t n = 0, cap = 0, unwritten = 0;
    while (fgets(line, sizeof(line), f)) {
        line[strcspn(line, "\n")] = 0;
        if (line[0] == '!') {
            unwritten++; /* a process that could not create its trace, and said why */
            continue;
        }
        if (!line[0] || gt_seen(paths, n, line))
            continue;
        if (n == cap) {
            char **g = realloc(paths, (cap = cap ? cap * 2 : 8) * sizeof(*paths));
            if (!g)
                break;
            paths = g;
        }
        if (!(paths[n] = strdup(line)))
            break;
        n++;
    }
    fclose(f);
    char finding[600] = "";
    uint64_t best = 0;
    for (size_t i = 0; i < n && i < GT_SUMMARY_LISTED; i++)
        gt_summary_line(paths[i], finding, sizeof(finding), &best);
    if (n > GT_SUMMARY_LISTED)
        gt_err("and %zu more traces", n - GT_SUMMARY_LISTED);
    if (finding[0])
        gt_err("top finding: %s", finding);
    /* always a closing line: a process that made no call the tracer
     * records (none at all, or only ones it does not record) writes none */
    if (n == 0 && unwritten)
        ; /* it had CUDA calls, and its own line said why there is no trace */
    else if (n == 0 && say_none && capture_range)
        gt_err("no capture range (%s) was entered, no trace written", capture_range);
    else if (n == 0 && say_none)
        gt_err("no recorded calls, no trace written");
    if (n) {
        /* Every trace, so the line runs as it is; past what a line can
         * hold, the folder's traces by a glob. */
        size_t len = 32;
        for (size_t i = 0; i < n; i++)
            len += strlen(paths[i]) + 1;
        char *more = malloc(len);
        if (more && n <= GT_SUMMARY_ALL_MAX) {
            size_t off = (size_t)snprintf(more, len, "more: gputrace report");
            for (size_t i = 0; i < n; i++)
                off += (size_t)snprintf(more + off, len - off, " %s", paths[i]);
            gt_err("%s", more);
        } else {
            const char *slash = strrchr(paths[0], '/');
            gt_err("more: gputrace report %.*s/*.db", slash ? (int)(slash - paths[0]) : 1, slash ? paths[0] : ".");
        }
        free(more);
    }
    for (size_t i = 0; i < n; i++)
        free(paths[i]);
    free(paths);
}

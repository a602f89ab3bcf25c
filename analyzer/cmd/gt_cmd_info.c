/* gt_cmd_info.c: `gputrace info`: what a trace holds, at a glance. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analysis/gt_flight.h"
#include "base/gt_utf8.h"
#include "cmd/gt_cmds.h"
#include "base/gt_fmt.h"
#include "base/gt_map.h"
#include "trace/gt_scan.h"
#include "trace/gt_trace.h"

#define GT_WIDTH 80
#define GT_TOP_KERNELS 5
#define GT_MAX_KINDS 16

void gt_cmd_info_usage(FILE *out)
{
    fprintf(out, "usage: gputrace info [--format text|json] TRACE.db...\n"
                 "\n"
                 "Summarizes each trace: the command, pid, host and duration, whether the\n"
                 "process finished, counts of API calls, kernel launches (those captured\n"
                 "into CUDA Graphs apart), graph launches, kernels the GPU ran, copies (bytes\n"
                 "by direction), memsets, syncs, allocations, stacks and threads, the\n"
                 "Python version and how many calls Python made (when Python stacks were\n"
                 "recorded), dropped events, and the most launched kernels. Traces are\n"
                 "opened read-only and never modified.\n"
                 "\n"
                 "options:\n"
                 "  --format text  an 80-column report (default)\n"
                 "  --format json  one JSON object per trace, one per line\n"
                 "  -h, --help     show this help\n"
                 "\n"
                 "Trace file names come from GPUTRACE_OUTPUT at record time (default\n"
                 "gputrace-%%n-%%p.db). Dropped events mean a thread's ring of\n"
                 "GPUTRACE_BUFFER_EVENTS slots filled faster than it was written out;\n"
                 "dropped stacks mean the stack table was full.\n"
                 "\n"
                 "exit status: 0; 2 if any file is missing or not a readable gputrace\n"
                 "trace (the others are still reported); 1 if a query failed or the\n"
                 "output cannot be written.\n");
}

struct gt_kind {
    char *name;
    int64_t count, bytes;
};

struct gt_info {
    char *cmdline, *host, *tracer_version, *gpu_timing, *cuda_version;
    char *python;         /* meta.python: NULL before schema 2, "" when not recorded */
    int64_t pid, ppid, start_ns, end_ns, start_unix_ns, stack_depth;
    int64_t duration_ns;
    int64_t span_ns;      /* first CUDA call or GPU work to the last end, as report and record say; -1: none */
    int duration_partial; /* end_ns missing: duration runs to the last call */
    int complete;
    int64_t dropped_events, dropped_stacks;
    int64_t calls, failed, threads, launches, captured, graph_launches, kernels_run, memcpys, memcpy_bytes,
        memsets, memset_bytes, syncs,
        allocs, alloc_bytes, frees, stacks, python_calls, python_stacks;
    int64_t frames, frames_with_lines; /* call instructions, and those with a source line (schema 6); -1 before */
    /* host sampling (schema 7): the rate asked, the rounds made and those
     * the sampler's budget slowed (-1: not recorded), the samples and
     * their threads; the budget, a percentage of a core */
    int64_t sample_hz, sample_rounds, sample_slowed, samples, sample_tids;
    char *sample_budget;
    struct gt_kind copy_kinds[GT_MAX_KINDS], sync_kinds[GT_MAX_KINDS], top[GT_TOP_KERNELS];
    int ncopy, nsync, ntop;
};

static void gt_info_free(struct gt_info *in)
{
    free(in->cmdline);
    free(in->host);
    free(in->python);
    free(in->tracer_version);
    free(in->gpu_timing);
    free(in->cuda_version);
    free(in->sample_budget);
    for (int i = 0; i < in->ncopy; i++)
        free(in->copy_kinds[i].name);
    for (int i = 0; i < in->nsync; i++)
        free(in->sync_kinds[i].name);
    for (int i = 0; i < in->ntop; i++)
        free(in->top[i].name);
}

/* ---- the counts: one pass over the calls ---- */

/* A count per key (thread id, kernel name pointer); -1: out of memory. */
static int gt_count(struct gt_map *m, uint64_t key)
{
    int64_t *c = gt_map_at(m, key);
    if (!c)
        return -1;
    ++*c;
    return 0;
}

struct gt_info_pass {
    struct gt_info *in;
    struct gt_map tids, kernels;
    int64_t copy_count[GT_RCOPY_OTHER + 1], copy_bytes[GT_RCOPY_OTHER + 1], sync_count[GT_RSYNC_OTHER + 1];
    int64_t last_end;
    int failed;
};

/* Byte totals: a damaged trace may hold any sizes at all. */
static void gt_add_bytes(int64_t *total, uint64_t bytes)
{
    uint64_t sum = (uint64_t)*total + bytes;
    *total = sum < (uint64_t)*total || sum > INT64_MAX ? INT64_MAX : (int64_t)sum;
}

static void gt_info_on_call(const struct gt_rec *c, void *arg)
{
    struct gt_info_pass *p = arg;
    struct gt_info *in = p->in;
    in->calls++;
    in->failed += c->result != 0;
    in->python_calls += c->has_python;
    if (gt_count(&p->tids, (uint64_t)c->tid) < 0)
        p->failed = 1;
    if ((int64_t)c->end > p->last_end)
        p->last_end = (int64_t)c->end;
    in->kernels_run += c->has_op && c->op.kind == GT_OP_KERNEL;
    in->captured += c->captured != 0;
    switch (c->cat) {
    case GT_RC_LAUNCH:
        /* a launch captured into a graph ran nothing: its graph's launches did */
        if (c->captured)
            break;
        in->launches++;
        if (gt_count(&p->kernels, (uint64_t)(uintptr_t)c->kernel) < 0)
            p->failed = 1;
        break;
    case GT_RC_GRAPH:
        in->graph_launches++;
        break;
    case GT_RC_MEMCPY:
        in->memcpys++;
        gt_add_bytes(&in->memcpy_bytes, c->bytes);
        p->copy_count[c->copy_kind]++;
        gt_add_bytes(&p->copy_bytes[c->copy_kind], c->bytes);
        break;
    case GT_RC_MEMSET:
        in->memsets++;
        gt_add_bytes(&in->memset_bytes, c->bytes);
        break;
    case GT_RC_SYNC:
        in->syncs++;
        p->sync_count[c->sync_kind]++;
        break;
    case GT_RC_ALLOC:
        in->allocs++;
        gt_add_bytes(&in->alloc_bytes, c->bytes);
        break;
    case GT_RC_FREE:
        in->frees++;
        break;
    default:
        break;
    }
}

/* The GPU records not kept in their call's row: kernels a graph ran, late
 * records, records of no recorded call. */
static void gt_info_on_op(const struct gt_op_rec *o, void *arg)
{
    struct gt_info *in = arg;
    in->kernels_run += o->kind == GT_OP_KERNEL;
}

static int gt_kind_by_count(const void *a, const void *b)
{
    const struct gt_kind *x = a, *y = b;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* Counts, the copies by direction, the syncs by kind, the most launched
 * kernels and when the last call ended. */
static int gt_info_count(struct gt_trace *t, struct gt_info *in, int64_t *last_end)
{
    static const char *const copy_names[] = {"HtoD", "DtoH", "DtoD", "HtoH", "PtoP", "(unknown)"};
    static const char *const sync_names[] = {"device", "context", "stream", "event", "stream_wait_event",
                                             "event_query", "stream_query", "(unknown)"};
    struct gt_info_pass p = {.in = in};
    struct gt_scan *scan = gt_scan_open(t);
    int rc = scan ? gt_scan_calls(scan, gt_info_on_call, &p) : -1;
    if (rc == 0)
        rc = gt_scan_ops(scan, gt_info_on_op, in);
    if (rc == 0 && p.failed) {
        fprintf(stderr, "gputrace: %s: out of memory\n", t->path);
        rc = -1;
    }
    if (rc == 0) {
        in->threads = (int64_t)p.tids.n;
        *last_end = p.last_end;
        for (int k = 0; k <= GT_RCOPY_OTHER && in->ncopy < GT_MAX_KINDS; k++)
            if (p.copy_count[k])
                in->copy_kinds[in->ncopy++] = (struct gt_kind){strdup(copy_names[k]), p.copy_count[k],
                                                               p.copy_bytes[k]};
        for (int k = 0; k <= GT_RSYNC_OTHER && in->nsync < GT_MAX_KINDS; k++)
            if (p.sync_count[k])
                in->sync_kinds[in->nsync++] = (struct gt_kind){strdup(sync_names[k]), p.sync_count[k], 0};
        qsort(in->sync_kinds, (size_t)in->nsync, sizeof(in->sync_kinds[0]), gt_kind_by_count);
        struct gt_kind *all = calloc(p.kernels.n + 1, sizeof(*all));
        size_t n = 0;
        for (size_t i = 0; all && i < p.kernels.slots; i++)
            if (p.kernels.val[i])
                all[n++] = (struct gt_kind){(char *)(uintptr_t)p.kernels.key[i], p.kernels.val[i], 0};
        if (n > 1)
            qsort(all, n, sizeof(*all), gt_kind_by_count);
        for (size_t i = 0; i < n && in->ntop < GT_TOP_KERNELS; i++)
            in->top[in->ntop++] = (struct gt_kind){strdup(all[i].name), all[i].count, 0};
        free(all);
    }
    gt_map_free(&p.tids);
    gt_map_free(&p.kernels);
    gt_scan_close(scan);
    return rc;
}

static int gt_info_collect(struct gt_trace *t, struct gt_info *in)
{
    memset(in, 0, sizeof(*in));
    in->cmdline = gt_trace_meta(t, "cmdline");
    in->host = gt_trace_meta(t, "host");
    in->tracer_version = gt_trace_meta(t, "tracer_version");
    in->python = gt_trace_meta(t, "python");
    in->gpu_timing = gt_trace_meta(t, "gpu_timing");
    in->cuda_version = gt_trace_meta(t, "cuda_runtime_version");
    in->pid = gt_trace_meta_int(t, "pid", -1);
    in->ppid = gt_trace_meta_int(t, "ppid", -1);
    in->start_ns = gt_trace_meta_int(t, "start_ns", -1);
    in->end_ns = gt_trace_meta_int(t, "end_ns", -1);
    in->start_unix_ns = gt_trace_meta_int(t, "start_time_unix_ns", -1);
    in->stack_depth = gt_trace_meta_int(t, "stack_depth", -1);
    in->complete = gt_trace_meta_int(t, "complete", 0) == 1;
    in->dropped_events = gt_trace_meta_int(t, "dropped_events", 0);
    in->dropped_stacks = gt_trace_meta_int(t, "dropped_stacks", 0);

    in->sample_hz = gt_trace_meta_int(t, "sample_hz", 0);
    in->sample_rounds = gt_trace_meta_int(t, "samples_rounds", -1);
    in->sample_slowed = gt_trace_meta_int(t, "samples_slowed", -1);
    in->sample_budget = gt_trace_meta(t, "sample_budget_pct");
    in->samples = in->sample_tids = -1;
    if (t->schema_version >= 7 && in->sample_hz > 0 &&
        (gt_trace_int(t, "SELECT count(*) FROM host_samples", &in->samples) < 0 ||
         gt_trace_int(t, "SELECT count(DISTINCT tid) FROM host_samples", &in->sample_tids) < 0))
        return -1;
    if (gt_trace_int(t, "SELECT count(DISTINCT stack_id) FROM stacks", &in->stacks) < 0 ||
        gt_trace_int(t, "SELECT count(DISTINCT pystack_id) FROM py_stacks", &in->python_stacks) < 0)
        return -1;
    /* One frames row per call instruction that is not an inlined function. */
    in->frames = in->frames_with_lines = -1;
    if (t->schema_version >= 6 &&
        (gt_trace_int(t, "SELECT count(*) FROM frames WHERE inlined = 0", &in->frames) < 0 ||
         gt_trace_int(t, "SELECT count(*) FROM frames WHERE inlined = 0 AND line IS NOT NULL",
                      &in->frames_with_lines) < 0))
        return -1;
    int64_t last = 0;
    if (gt_info_count(t, in, &last) < 0)
        return -1;

    /* A process that died never wrote end_ns; its last committed call is
     * the best lower bound we have. */
    if (in->start_ns >= 0 && in->end_ns < 0) {
        if (last > 0)
            in->end_ns = last;
        in->duration_partial = 1;
    }
    in->duration_ns = (in->start_ns >= 0 && in->end_ns >= in->start_ns) ? in->end_ns - in->start_ns : -1;
    /* The span report's summary and record's last line say: the process's
     * duration less what ran before its first CUDA call and after the
     * last (the tracer's start-up among it). */
    int64_t views = 0;
    in->span_ns = -1;
    if (gt_trace_int(t, "SELECT count(*) FROM sqlite_master WHERE name = 'gpu_activity'", &views) < 0)
        return -1;
    if (gt_trace_int(t,
                     views ? "SELECT coalesce(max(e) - min(s), -1) FROM (SELECT start_ns s, end_ns e FROM api_calls "
                             "UNION ALL SELECT start_ns, end_ns FROM gpu_activity)"
                           : "SELECT coalesce(max(end_ns) - min(start_ns), -1) FROM api_calls",
                     &in->span_ns) < 0)
        return -1;
    return 0;
}

/* "label:" padded so values line up; "GPU times:" is the widest label. */
static void gt_label(const char *label)
{
    printf("%-10s ", label);
}

/* The command line can be long; wrapped under its label rather than cut,
 * since it is how the user tells traces apart. */
static void gt_print_wrapped(const char *s, int indent)
{
    int room = GT_WIDTH - indent;
    size_t len = strlen(s);
    for (size_t off = 0;;) {
        size_t n = len - off;
        if ((int)n > room) {
            n = room;
            /* Break at the last space in the chunk when there is one. */
            for (size_t k = n; k > (size_t)room / 2; k--)
                if (s[off + k] == ' ') {
                    n = k;
                    break;
                }
        }
        char chunk[GT_WIDTH + 1];
        memcpy(chunk, s + off, n);
        chunk[n] = 0;
        gt_put_text(stdout, chunk, 0);
        putchar('\n');
        off += n;
        while (s[off] == ' ')
            off++;
        if (!s[off])
            break;
        printf("%*s", indent, "");
    }
}

static void gt_cuda_version(const char *v, char *buf, size_t len)
{
    /* CUDA encodes versions as 1000*major + 10*minor. */
    char *end;
    long n = strtol(v, &end, 10);
    if (*v && !*end && n >= 1000)
        snprintf(buf, len, "%ld.%ld", n / 1000, n % 1000 / 10);
    else
        snprintf(buf, len, "%s", v);
}

static void gt_row(const char *name, int64_t count, const char *extra)
{
    printf("%-16s %10lld", name, (long long)count);
    if (extra && *extra)
        printf("   %s", extra);
    putchar('\n');
}

/* Rounds a second over the recording, from meta alone (-1: unknown). */
static double gt_sample_rate(const struct gt_info *in)
{
    if (in->sample_rounds < 0 || in->duration_ns <= 0 || in->duration_partial)
        return -1;
    return (double)in->sample_rounds * 1e9 / (double)in->duration_ns;
}

/* "samples:", where the trace was sampled: how many, of how many
 * threads, and the rate made against the rate asked; when the sampler's
 * budget slowed it, by how many rounds. */
static void gt_info_samples_text(const struct gt_info *in)
{
    if (in->samples < 0)
        return;
    gt_label("samples:");
    printf("%lld host samples of %lld thread%s", (long long)in->samples, (long long)in->sample_tids,
           in->sample_tids == 1 ? "" : "s");
    double rate = gt_sample_rate(in);
    if (rate >= 0)
        printf(", %lld rounds: %.1f a second of %lld asked", (long long)in->sample_rounds, rate,
               (long long)in->sample_hz);
    putchar('\n');
    if (in->sample_slowed > 0) {
        printf("%11sthe sampler's budget (", "");
        gt_put_text(stdout, in->sample_budget ? in->sample_budget : "?", 8);
        printf("%% of a core, GPUTRACE_SAMPLE_BUDGET) slowed %lld of them\n", (long long)in->sample_slowed);
    }
}

static void gt_info_text(struct gt_trace *t, const struct gt_info *in)
{
    char b1[64], b2[64];
    gt_label("trace:");
    gt_put_text(stdout, t->path, GT_WIDTH - 11);
    putchar('\n');
    gt_label("command:");
    gt_print_wrapped(in->cmdline && *in->cmdline ? in->cmdline : "(unknown)", 11);
    gt_label("process:");
    printf("pid %lld", (long long)in->pid);
    if (in->ppid >= 0)
        printf(" (parent %lld)", (long long)in->ppid);
    if (in->host) {
        printf(" on ");
        gt_put_text(stdout, in->host, 40);
    }
    putchar('\n');
    if (in->start_unix_ns > 0) {
        time_t secs = (time_t)(in->start_unix_ns / 1000000000LL);
        struct tm tm;
        if (localtime_r(&secs, &tm) && strftime(b1, sizeof(b1), "%Y-%m-%d %H:%M:%S %Z", &tm)) {
            gt_label("started:");
            printf("%s\n", b1);
        }
    }
    gt_label("duration:");
    if (in->duration_ns < 0)
        printf("unknown\n");
    else
        printf("%s%s%s\n", in->duration_partial ? "at least " : "",
               gt_fmt_duration(in->duration_ns, b1, sizeof(b1)),
               in->duration_partial ? " (to the last recorded call)" : "");
    if (in->span_ns >= 0) {
        gt_label("span:");
        printf("%s (first CUDA call to the last end, as report and record say)\n",
               gt_fmt_duration(in->span_ns, b1, sizeof(b1)));
    }
    gt_label("status:");
    char *stopped = in->complete ? NULL : gt_trace_stop_reason(t);
    if (in->complete)
        printf("complete\n");
    else if (stopped) {
        printf("incomplete\nrecording stopped early: ");
        gt_put_text(stdout, stopped, 0);
        printf("; the trace holds what was committed before, and the process ran on untraced\n");
    } else
        printf("incomplete\nprocess did not finish: trace holds what was committed before it stopped\n");
    free(stopped);
    if (t->wal_skipped)
        printf("%11swrite-ahead log not read: later events may be missing\n", "");
    char flight[3][GT_FLIGHT_LINE];
    for (int i = 0, n = gt_flight_lines(t, flight, 3); i < n; i++) {
        gt_label(i ? "" : "window:");
        gt_print_wrapped(flight[i], 11);
    }
    /* The shim writes 'none' when it did not time kernels on the GPU. */
    if (!in->gpu_timing || !*in->gpu_timing || strcmp(in->gpu_timing, "none") == 0)
        printf("GPU times: not recorded (host-side only)\n");
    else if (strcmp(in->gpu_timing, "cupti") == 0)
        printf("GPU times: recorded with CUPTI\n");
    else {
        printf("GPU times: ");
        gt_put_text(stdout, in->gpu_timing, GT_WIDTH - 11);
        putchar('\n');
    }
    gt_label("stacks:");
    if (in->stack_depth == 0)
        printf("off\n");
    else if (in->stack_depth > 0)
        printf("up to %lld frames per call\n", (long long)in->stack_depth);
    else
        printf("unknown depth\n");
    if (in->frames > 0) {
        gt_label("lines:");
        printf("%lld of %lld native frames have a source line\n", (long long)in->frames_with_lines,
               (long long)in->frames);
    }
    if (in->python && in->python[0]) {
        gt_label("python:");
        printf("CPython ");
        gt_put_text(stdout, in->python, 8);
        printf(" stacks, %lld of %lld calls made from Python\n", (long long)in->python_calls, (long long)in->calls);
    }
    gt_info_samples_text(in);
    gt_label("recorder:");
    printf("gputrace ");
    gt_put_text(stdout, in->tracer_version ? in->tracer_version : "?", 20);
    printf(", schema %d", t->schema_version);
    if (in->cuda_version) {
        gt_cuda_version(in->cuda_version, b1, sizeof(b1));
        printf(", CUDA runtime ");
        gt_put_text(stdout, b1, 16);
    }
    putchar('\n');

    putchar('\n');
    snprintf(b1, sizeof(b1), "%lld failed, %lld thread%s", (long long)in->failed, (long long)in->threads,
             in->threads == 1 ? "" : "s");
    gt_row("API calls", in->calls, b1);
    gt_row("kernel launches", in->launches, NULL);
    if (in->captured)
        gt_row("captured calls", in->captured, "into graphs: ran nothing");
    if (in->graph_launches)
        gt_row("graph launches", in->graph_launches, NULL);
    if (in->gpu_timing && strcmp(in->gpu_timing, "cupti") == 0)
        gt_row("kernels run", in->kernels_run, "GPU records, graphs' included");
    gt_row("memcpys", in->memcpys, in->memcpys ? gt_fmt_bytes(in->memcpy_bytes, b1, sizeof(b1)) : NULL);
    for (int i = 0; i < in->ncopy; i++) {
        char name[32];
        snprintf(name, sizeof(name), "  %.13s", in->copy_kinds[i].name);
        gt_row(name, in->copy_kinds[i].count, gt_fmt_bytes(in->copy_kinds[i].bytes, b1, sizeof(b1)));
    }
    gt_row("memsets", in->memsets, in->memsets ? gt_fmt_bytes(in->memset_bytes, b1, sizeof(b1)) : NULL);
    gt_row("syncs", in->syncs, NULL);
    for (int i = 0; i < in->nsync; i++) {
        char name[32];
        snprintf(name, sizeof(name), "  %.13s", in->sync_kinds[i].name);
        gt_row(name, in->sync_kinds[i].count, NULL);
    }
    snprintf(b2, sizeof(b2), "%s, %lld free%s", gt_fmt_bytes(in->alloc_bytes, b1, sizeof(b1)),
             (long long)in->frees, in->frees == 1 ? "" : "s");
    gt_row("allocations", in->allocs, b2);
    gt_row("unique stacks", in->stacks, NULL);
    if (in->python && in->python[0])
        gt_row("Python stacks", in->python_stacks, NULL);
    gt_row("dropped events", in->dropped_events, NULL);
    gt_row("dropped stacks", in->dropped_stacks, NULL);
    if (in->dropped_events > 0)
        printf("warning: %lld events were lost to full per-thread buffers; counts above\n"
               "         are low. Record again with a larger GPUTRACE_BUFFER_EVENTS.\n",
               (long long)in->dropped_events);
    if (in->dropped_stacks > 0)
        printf("warning: %lld calls have no stack because the stack table was full.\n",
               (long long)in->dropped_stacks);

    if (in->ntop > 0) {
        printf("\ntop kernels by launches:\n");
        printf("%10s %6s  %s\n", "launches", "%", "kernel");
        for (int i = 0; i < in->ntop; i++) {
            double pct = in->launches ? 100.0 * in->top[i].count / in->launches : 0;
            printf("%10lld %6.1f  ", (long long)in->top[i].count, pct);
            gt_put_text(stdout, gt_kernel_label(in->top[i].name), GT_WIDTH - 19);
            putchar('\n');
        }
    }
}

static void gt_json_kinds(const char *key, const struct gt_kind *k, int n, int with_bytes)
{
    printf(",\"%s\":{", key);
    for (int i = 0; i < n; i++) {
        printf("%s", i ? "," : "");
        gt_put_json_string(stdout, k[i].name);
        if (with_bytes)
            printf(":{\"count\":%lld,\"bytes\":%lld}", (long long)k[i].count, (long long)k[i].bytes);
        else
            printf(":%lld", (long long)k[i].count);
    }
    printf("}");
}

static void gt_json_int(const char *key, int64_t v, int null_if_negative)
{
    if (null_if_negative && v < 0)
        printf(",\"%s\":null", key);
    else
        printf(",\"%s\":%lld", key, (long long)v);
}

static void gt_info_json(struct gt_trace *t, const struct gt_info *in)
{
    printf("{\"path\":");
    gt_put_json_string(stdout, t->path);
    printf(",\"schema_version\":%d,\"tracer_version\":", t->schema_version);
    gt_put_json_string(stdout, in->tracer_version);
    printf(",\"cmdline\":");
    gt_put_json_string(stdout, in->cmdline);
    printf(",\"host\":");
    gt_put_json_string(stdout, in->host);
    gt_json_int("pid", in->pid, 1);
    gt_json_int("ppid", in->ppid, 1);
    gt_json_int("start_time_unix_ns", in->start_unix_ns, 1);
    gt_json_int("duration_ns", in->duration_ns, 1);
    gt_json_int("span_ns", in->span_ns, 1);
    printf(",\"duration_partial\":%s,\"complete\":%s,\"wal_skipped\":%s", in->duration_partial ? "true" : "false",
           in->complete ? "true" : "false", t->wal_skipped ? "true" : "false");
    /* why recording stopped early, when the tracer could say (a full disk) */
    char *stop = gt_trace_meta(t, "stop_reason"), *stop_detail = gt_trace_meta(t, "stop_detail");
    printf(",\"stop_reason\":");
    gt_put_json_string(stdout, stop);
    printf(",\"stop_detail\":");
    gt_put_json_string(stdout, stop_detail);
    free(stop);
    free(stop_detail);
    printf(",\"gpu_timing\":");
    gt_put_json_string(stdout, in->gpu_timing);
    printf(",\"cuda_runtime_version\":");
    gt_put_json_string(stdout, in->cuda_version);
    gt_json_int("stack_depth", in->stack_depth, 1);
    gt_json_int("native_frames", in->frames, 1);
    gt_json_int("native_frames_with_lines", in->frames_with_lines, 1);
    printf(",\"python\":");
    gt_put_json_string(stdout, in->python && in->python[0] ? in->python : NULL);
    gt_json_int("python_calls", in->python_calls, 0);
    gt_json_int("unique_python_stacks", in->python_stacks, 0);
    gt_json_int("api_calls", in->calls, 0);
    gt_json_int("failed_calls", in->failed, 0);
    gt_json_int("threads", in->threads, 0);
    gt_json_int("kernel_launches", in->launches, 0);
    gt_json_int("captured_calls", in->captured, 0);
    gt_json_int("graph_launches", in->graph_launches, 0);
    gt_json_int("kernels_run", in->kernels_run, 0);
    gt_json_int("memcpys", in->memcpys, 0);
    gt_json_int("memcpy_bytes", in->memcpy_bytes, 0);
    gt_json_kinds("memcpys_by_kind", in->copy_kinds, in->ncopy, 1);
    gt_json_int("memsets", in->memsets, 0);
    gt_json_int("memset_bytes", in->memset_bytes, 0);
    gt_json_int("syncs", in->syncs, 0);
    gt_json_kinds("syncs_by_kind", in->sync_kinds, in->nsync, 0);
    gt_json_int("allocations", in->allocs, 0);
    gt_json_int("allocation_bytes", in->alloc_bytes, 0);
    gt_json_int("frees", in->frees, 0);
    gt_json_int("unique_stacks", in->stacks, 0);
    gt_json_int("host_samples", in->samples, 1);
    gt_json_int("host_sample_threads", in->sample_tids, 1);
    gt_json_int("sample_hz", in->sample_hz, 0);
    gt_json_int("sample_rounds", in->sample_rounds, 1);
    gt_json_int("sample_rounds_slowed", in->sample_slowed, 1);
    double rate = gt_sample_rate(in);
    if (rate >= 0)
        printf(",\"sample_rate\":%.3f", rate);
    else
        printf(",\"sample_rate\":null");
    printf(",\"sample_budget_pct\":");
    gt_put_json_string(stdout, in->sample_budget);
    gt_json_int("dropped_events", in->dropped_events, 0);
    gt_json_int("dropped_stacks", in->dropped_stacks, 0);
    printf(",\"top_kernels\":[");
    for (int i = 0; i < in->ntop; i++) {
        printf("%s{\"name\":", i ? "," : "");
        gt_put_json_string(stdout, in->top[i].name);
        printf(",\"launches\":%lld}", (long long)in->top[i].count);
    }
    printf("]}\n");
}

int gt_cmd_info(int argc, char **argv)
{
    int json = 0, i = 1;
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0) {
            i++;
            break;
        }
        if (a[0] != '-' || a[1] == 0)
            break;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            gt_cmd_info_usage(stdout);
            return GT_EXIT_OK;
        }
        const char *fmt = NULL;
        if (strcmp(a, "--format") == 0) {
            if (i + 1 >= argc)
                return gt_usage_error("info", "option '--format' needs text or json");
            fmt = argv[++i];
        } else if (strncmp(a, "--format=", 9) == 0) {
            fmt = a + 9;
        } else {
            return gt_usage_error("info", "unknown option '%s'", a);
        }
        if (strcmp(fmt, "json") == 0)
            json = 1;
        else if (strcmp(fmt, "text") == 0)
            json = 0;
        else
            return gt_usage_error("info", "unknown format '%s' (use text or json)", fmt);
    }
    if (i >= argc)
        return gt_usage_error("info", "no trace file given");

    int status = GT_EXIT_OK, shown = 0;
    /* Names hold whatever bytes the program gave them: the output comes
     * out valid UTF-8 whatever they are (base/gt_utf8.h). */
    FILE *real_stdout = stdout, *clean = gt_utf8_wrap(stdout);
    if (clean)
        stdout = clean;
    for (; i < argc; i++) {
        struct gt_trace t;
        int rc = gt_trace_open(&t, argv[i]);
        if (rc) {
            status = GT_EXIT_USAGE;
            continue;
        }
        struct gt_info in;
        if (gt_info_collect(&t, &in) < 0) {
            if (status == GT_EXIT_OK)
                status = GT_EXIT_FAIL;
        } else {
            if (!json && shown++)
                putchar('\n');
            if (json)
                gt_info_json(&t, &in);
            else
                gt_info_text(&t, &in);
            /* a full disk or a closed pipe: said, as report says it */
            if ((fflush(stdout) != 0 || ferror(stdout)) && status != GT_EXIT_FAIL) {
                gt_err("cannot write standard output: %s", strerror(errno ? errno : EIO));
                status = GT_EXIT_FAIL;
            }
        }
        gt_info_free(&in);
        gt_trace_close(&t);
    }
    if (clean) {
        fclose(clean); /* flushes what it holds into the real stdout */
        stdout = real_stdout;
    }
    return status;
}

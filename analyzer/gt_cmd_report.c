/* gt_cmd_report.c: `gputrace report`: launch overhead, H2D hotspots, GPU
 * idle gaps and syncs, as text for a terminal or as JSON. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gt_analyze.h"
#include "gt_cmds.h"
#include "gt_fmt.h"
#include "gt_report_html.h"
#include "gt_site.h"
#include "gt_trace.h"

void gt_cmd_report_usage(FILE *out)
{
    fprintf(out,
            "usage: gputrace report [--format text|json|html] [-o FILE] [--top N]\n"
            "                       [--min-gap DURATION] TRACE.db...\n"
            "\n"
            "What a trace says about where the time goes:\n"
            "  launch overhead  per kernel and per launch site: count, host time in the\n"
            "                   launch call (mean, p50, p99, total), queue delay (GPU\n"
            "                   start minus the call's return), GPU time; a launch is\n"
            "                   launch-bound when its kernel ran shorter than the call\n"
            "  H2D hotspots     host-to-device copies by call site: bytes, count, host\n"
            "                   and GPU time, bandwidth, pageable vs pinned bytes,\n"
            "                   blocking vs async; flags async copies from pageable\n"
            "                   memory, storms of small copies, copies that block\n"
            "  GPU idle gaps    idle share of the traced span and each gap of at least\n"
            "                   --min-gap with its cause (the host in a sync, in a copy,\n"
            "                   busy launching, or outside CUDA) and the call sites\n"
            "                   before and after it\n"
            "  syncs            explicit and implicit (blocking copies) by call site\n"
            "A call site is the innermost frames of the user's code. Without GPU times\n"
            "(no CUPTI) host-side times stand in, and the report says so.\n"
            "\n"
            "options:\n"
            "  --format text|json|html\n"
            "                       output format (default text); JSON has the top-level\n"
            "                       keys summary, launch_overhead, h2d_hotspots,\n"
            "                       idle_gaps, idle_by_site, syncs, advice,\n"
            "                       processes; HTML is one self-contained file (nothing\n"
            "                       fetched) with a GPU busy/idle timeline whose gaps\n"
            "                       link to their rows, charts of the top launch and\n"
            "                       H2D sites, and the tables\n"
            "  -o, --output FILE    write there (default: standard output)\n"
            "  --top N              rows per table (default 10; 0: all)\n"
            "  --min-gap DURATION   shortest idle gap listed: 250us, 1ms, 2s, or ns\n"
            "                       (default 1ms)\n"
            "\n"
            "Several traces (one per process of a job) give a section per process,\n"
            "then totals. See docs/report.md.\n"
            "\n"
            "exit status: 0; 2 for bad arguments, or a trace that is missing, not a\n"
            "gputrace trace, newer than this gputrace, empty, or from a process that\n"
            "did not finish.\n");
}

struct gt_report_opts {
    int json, html;
    const char *output;  /* NULL: standard output */
    struct gt_analyze_opts a;
};

static char gt_b1[64], gt_b2[64], gt_b3[64], gt_b4[64], gt_b5[64];
#define DUR(x, b) gt_fmt_duration((int64_t)(x), b, sizeof(b))
#define BYTES(x, b) gt_fmt_bytes((int64_t)(x), b, sizeof(b))

/* ---- text ---- */

static void gt_text_site(FILE *out, const char *indent, const struct gt_site *s)
{
    if (!s->nframes) {
        fprintf(out, "%s(no stack)\n", indent);
        return;
    }
    for (int i = 0; i < s->nframes; i++) {
        fputs(indent, out);
        fputs(i ? "< " : "at ", out);
        gt_put_text(out, s->frames[i], 78 - (int)strlen(indent) - 3);
        fputc('\n', out);
    }
}

static void gt_text_summary(FILE *out, const struct gt_summary *s)
{
    fprintf(out, "span %s, %llu calls, GPU times: %s\n", DUR(s->span_ns, gt_b1), (unsigned long long)s->calls,
            s->gpu_times ? "from CUPTI" : "NOT recorded (host-side times stand in)");
    fprintf(out, "  launches        %10llu  host time launching %s (%.1f%% of span)\n",
            (unsigned long long)s->launches, DUR(s->launch_host_ns, gt_b1), s->launch_host_pct);
    if (s->gpu_times)
        fprintf(out, "  launch-bound    %10llu  (%.1f%% of launches)\n", (unsigned long long)s->launch_bound,
                s->launch_bound_pct);
    fprintf(out, "  GPU idle        %10s  (%.1f%% of span)\n", DUR(s->idle_ns, gt_b1), s->idle_pct);
    fprintf(out, "    by cause: sync %s, copy %s, launch %s, host %s\n", DUR(s->idle_by_cause[0], gt_b1),
            DUR(s->idle_by_cause[1], gt_b2), DUR(s->idle_by_cause[2], gt_b3), DUR(s->idle_by_cause[3], gt_b4));
    fprintf(out, "  host in syncs   %10s  (%.1f%% of span)\n", DUR(s->sync_ns, gt_b1), s->sync_pct);
    fprintf(out, "  H2D bytes       %10s  pageable %s\n", BYTES(s->h2d_bytes, gt_b1), BYTES(s->pageable_h2d_bytes, gt_b2));
}

static void gt_text_launch(FILE *out, const struct gt_report *r, int gpu)
{
    fprintf(out, "\nLaunch overhead by kernel (host time in the launch call)\n");
    if (!r->nkernels) {
        fprintf(out, "  no kernel launches\n");
        return;
    }
    fprintf(out, "  %8s %9s %9s %9s %9s %9s %7s\n", "count", "mean", "p50", "p99", "queue", "gpu mean", "bound");
    for (size_t i = 0; i < r->nkernels; i++) {
        const struct gt_launch_row *k = &r->kernels[i];
        fputs("  ", out);
        gt_put_text(out, k->kernel, 76);
        fprintf(out, "\n  %8llu %9s %9s %9s %9s %9s %6.0f%%\n", (unsigned long long)k->count,
                DUR(k->api_mean_ns, gt_b1), DUR(k->api_p50_ns, gt_b2), DUR(k->api_p99_ns, gt_b3),
                gpu ? DUR(k->queue_mean_ns, gt_b4) : "-", gpu ? DUR(k->gpu_mean_ns, gt_b5) : "-",
                gpu ? 100.0 * (double)k->launch_bound / (double)k->count : 0.0);
    }
    fprintf(out, "\nLaunch sites\n");
    for (size_t i = 0; i < r->nlaunch_sites; i++) {
        const struct gt_launch_row *k = &r->launch_sites[i];
        fprintf(out, "  %llu launches, %s in launch calls (mean %s)%s\n", (unsigned long long)k->count,
                DUR(k->api_total_ns, gt_b1), DUR(k->api_mean_ns, gt_b2),
                gpu && k->launch_bound ? ", some launch-bound" : "");
        gt_text_site(out, "    ", &k->site);
    }
}

static void gt_text_h2d(FILE *out, const struct gt_report *r)
{
    fprintf(out, "\nH2D hotspots by call site (by host time)\n");
    if (!r->nh2d) {
        fprintf(out, "  no host-to-device copies\n");
        return;
    }
    for (size_t i = 0; i < r->nh2d; i++) {
        const struct gt_h2d_row *h = &r->h2d[i];
        fprintf(out, "  %s in %llu copies, host %s, GPU %s, %.2f GB/s\n", BYTES(h->bytes, gt_b1),
                (unsigned long long)h->count, DUR(h->host_ns, gt_b2), h->gpu_ns ? DUR(h->gpu_ns, gt_b3) : "-",
                h->bandwidth_gbps);
        fprintf(out, "    pageable %s, pinned %s; %llu blocking, %llu async\n", BYTES(h->pageable_bytes, gt_b1),
                BYTES(h->pinned_bytes, gt_b2), (unsigned long long)h->blocking, (unsigned long long)h->async);
        if (h->async_pageable)
            fprintf(out, "    ! %llu async copies from pageable memory: they block anyway\n",
                    (unsigned long long)h->async_pageable);
        if (h->small_storm)
            fprintf(out, "    ! storm of small copies: batch them into fewer, larger ones\n");
        if (h->blocking)
            fprintf(out, "    ! copies here block the host\n");
        gt_text_site(out, "    ", &h->site);
    }
}

static void gt_text_gaps(FILE *out, const struct gt_report *r, const struct gt_report_opts *o)
{
    fprintf(out, "\nGPU idle gaps of %s or more (longest first)\n", DUR(o->a.min_gap_ns, gt_b1));
    if (!r->ngaps) {
        fprintf(out, "  none\n");
        return;
    }
    for (size_t i = 0; i < r->ngaps; i++) {
        const struct gt_gap *g = &r->gaps[i];
        fprintf(out, "  %s idle on device %d at +%s: host %s\n", DUR(g->dur_ns, gt_b1), g->device,
                DUR(g->start_ns - r->summary.first_ns, gt_b2),
                g->cause == GT_GAP_SYNC     ? "blocked in a sync"
                : g->cause == GT_GAP_COPY   ? "inside a copy"
                : g->cause == GT_GAP_LAUNCH ? "busy launching"
                                            : "outside CUDA");
        fprintf(out, "    before:\n");
        gt_text_site(out, "      ", &g->before);
        fprintf(out, "    after:\n");
        gt_text_site(out, "      ", &g->after);
    }
}

static void gt_text_idle_sites(FILE *out, const struct gt_report *r)
{
    if (!r->nidle_sites)
        return;
    fprintf(out, "\nGPU idle time by the call that ended it (all gaps)\n");
    for (size_t i = 0; i < r->nidle_sites; i++) {
        const struct gt_idle_site *x = &r->idle_sites[i];
        fprintf(out, "  %s idle over %llu gaps, ended by\n", DUR(x->idle_ns, gt_b1), (unsigned long long)x->gaps);
        gt_text_site(out, "    ", &x->site);
    }
}

static void gt_text_syncs(FILE *out, const struct gt_report *r)
{
    fprintf(out, "\nSyncs by call site (host time blocked)\n");
    if (!r->nsyncs) {
        fprintf(out, "  none\n");
        return;
    }
    for (size_t i = 0; i < r->nsyncs; i++) {
        const struct gt_sync_row *s = &r->syncs[i];
        fprintf(out, "  %-16s %6llu calls, %s blocked\n", s->kind, (unsigned long long)s->count,
                DUR(s->blocked_ns, gt_b1));
        gt_text_site(out, "    ", &s->site);
    }
}

static void gt_text(FILE *out, const char *path, const struct gt_report *r, const struct gt_report_opts *o)
{
    fprintf(out, "== %s\n", path);
    gt_text_summary(out, &r->summary);
    for (size_t i = 0; i < r->ndevices; i++)
        fprintf(out, "    device %-3d  busy %s, idle %.1f%% of span\n", r->devices[i].device,
                DUR(r->devices[i].busy_ns, gt_b1), r->devices[i].idle_pct);
    gt_text_launch(out, r, r->summary.gpu_times);
    gt_text_h2d(out, r);
    gt_text_gaps(out, r, o);
    gt_text_idle_sites(out, r);
    gt_text_syncs(out, r);
    if (r->advice[0][0]) {
        fprintf(out, "\nAdvice\n");
        for (int i = 0; i < 4 && r->advice[i][0]; i++) {
            fputs("  - ", out);
            gt_put_text(out, r->advice[i], 0);
            fputc('\n', out);
        }
    }
}

/* ---- JSON ---- */

static void gt_json_summary(FILE *out, const struct gt_summary *s)
{
    fprintf(out,
            "{\"span_ns\":%llu,\"gpu_times\":%s,\"calls\":%llu,\"launches\":%llu,\"launch_bound\":%llu,"
            "\"launch_host_ns\":%llu,\"launch_host_pct\":%.3f,\"launch_bound_pct\":%.3f,\"busy_ns\":%llu,"
            "\"idle_ns\":%llu,\"idle_pct\":%.3f,\"sync_ns\":%llu,\"sync_pct\":%.3f,\"h2d_bytes\":%llu,"
            "\"pageable_h2d_bytes\":%llu,\"idle_by_cause_ns\":{\"sync\":%llu,\"copy\":%llu,\"launch\":%llu,"
            "\"host\":%llu}}",
            (unsigned long long)s->span_ns, s->gpu_times ? "true" : "false", (unsigned long long)s->calls,
            (unsigned long long)s->launches, (unsigned long long)s->launch_bound,
            (unsigned long long)s->launch_host_ns, s->launch_host_pct, s->launch_bound_pct,
            (unsigned long long)s->busy_ns, (unsigned long long)s->idle_ns, s->idle_pct,
            (unsigned long long)s->sync_ns, s->sync_pct, (unsigned long long)s->h2d_bytes,
            (unsigned long long)s->pageable_h2d_bytes, (unsigned long long)s->idle_by_cause[0],
            (unsigned long long)s->idle_by_cause[1], (unsigned long long)s->idle_by_cause[2],
            (unsigned long long)s->idle_by_cause[3]);
}

static void gt_json_launch_row(FILE *out, const struct gt_launch_row *k, int by_site, long long pid)
{
    fprintf(out, "{\"pid\":%lld,", pid);
    if (by_site) {
        fputs("\"site\":", out);
        gt_site_put_json(out, &k->site);
    } else {
        fputs("\"kernel\":", out);
        gt_put_json_string(out, k->kernel);
    }
    fprintf(out,
            ",\"count\":%llu,\"api_total_ns\":%llu,\"api_mean_ns\":%llu,\"api_p50_ns\":%llu,\"api_p99_ns\":%llu,"
            "\"queue_mean_ns\":%llu,\"gpu_total_ns\":%llu,\"gpu_mean_ns\":%llu,\"launch_bound\":%llu}",
            (unsigned long long)k->count, (unsigned long long)k->api_total_ns, (unsigned long long)k->api_mean_ns,
            (unsigned long long)k->api_p50_ns, (unsigned long long)k->api_p99_ns,
            (unsigned long long)k->queue_mean_ns, (unsigned long long)k->gpu_total_ns,
            (unsigned long long)k->gpu_mean_ns, (unsigned long long)k->launch_bound);
}

struct gt_one {
    const char *path;
    long long pid;
    struct gt_report r;
    struct gt_busy busy; /* --format html only */
};

static void gt_json_tables(FILE *out, const struct gt_one *v, size_t n)
{
    fputs(",\"launch_overhead\":{\"kernels\":[", out);
    int first = 1;
    for (size_t t = 0; t < n; t++)
        for (size_t i = 0; i < v[t].r.nkernels; i++, first = 0) {
            if (!first)
                fputc(',', out);
            gt_json_launch_row(out, &v[t].r.kernels[i], 0, v[t].pid);
        }
    fputs("],\"sites\":[", out);
    first = 1;
    for (size_t t = 0; t < n; t++)
        for (size_t i = 0; i < v[t].r.nlaunch_sites; i++, first = 0) {
            if (!first)
                fputc(',', out);
            gt_json_launch_row(out, &v[t].r.launch_sites[i], 1, v[t].pid);
        }
    fputs("]},\"h2d_hotspots\":[", out);
    first = 1;
    for (size_t t = 0; t < n; t++)
        for (size_t i = 0; i < v[t].r.nh2d; i++, first = 0) {
            const struct gt_h2d_row *h = &v[t].r.h2d[i];
            fprintf(out, "%s{\"pid\":%lld,\"site\":", first ? "" : ",", v[t].pid);
            gt_site_put_json(out, &h->site);
            fprintf(out,
                    ",\"bytes\":%llu,\"count\":%llu,\"host_ns\":%llu,\"gpu_ns\":%llu,\"pageable_bytes\":%llu,"
                    "\"pinned_bytes\":%llu,\"blocking\":%llu,\"async\":%llu,\"async_pageable\":%llu,"
                    "\"bandwidth_gbps\":%.3f,\"small_copy_storm\":%s}",
                    (unsigned long long)h->bytes, (unsigned long long)h->count, (unsigned long long)h->host_ns,
                    (unsigned long long)h->gpu_ns, (unsigned long long)h->pageable_bytes,
                    (unsigned long long)h->pinned_bytes, (unsigned long long)h->blocking,
                    (unsigned long long)h->async, (unsigned long long)h->async_pageable, h->bandwidth_gbps,
                    h->small_storm ? "true" : "false");
        }
    fputs("],\"idle_gaps\":[", out);
    first = 1;
    for (size_t t = 0; t < n; t++)
        for (size_t i = 0; i < v[t].r.ngaps; i++, first = 0) {
            const struct gt_gap *g = &v[t].r.gaps[i];
            fprintf(out, "%s{\"pid\":%lld,\"device\":%d,\"start_ns\":%llu,\"dur_ns\":%llu,\"cause\":\"%s\",\"before\":",
                    first ? "" : ",", v[t].pid, g->device, (unsigned long long)g->start_ns,
                    (unsigned long long)g->dur_ns, gt_gap_cause_names[g->cause]);
            gt_site_put_json(out, &g->before);
            fputs(",\"after\":", out);
            gt_site_put_json(out, &g->after);
            fputc('}', out);
        }
    fputs("],\"idle_by_site\":[", out);
    first = 1;
    for (size_t t = 0; t < n; t++)
        for (size_t i = 0; i < v[t].r.nidle_sites; i++, first = 0) {
            const struct gt_idle_site *x = &v[t].r.idle_sites[i];
            fprintf(out, "%s{\"pid\":%lld,\"idle_ns\":%llu,\"gaps\":%llu,\"site\":", first ? "" : ",", v[t].pid,
                    (unsigned long long)x->idle_ns, (unsigned long long)x->gaps);
            gt_site_put_json(out, &x->site);
            fputc('}', out);
        }
    fputs("],\"syncs\":[", out);
    first = 1;
    for (size_t t = 0; t < n; t++)
        for (size_t i = 0; i < v[t].r.nsyncs; i++, first = 0) {
            const struct gt_sync_row *s = &v[t].r.syncs[i];
            fprintf(out, "%s{\"pid\":%lld,\"kind\":\"%s\",\"count\":%llu,\"dur_ns\":%llu,\"site\":",
                    first ? "" : ",", v[t].pid, s->kind, (unsigned long long)s->count,
                    (unsigned long long)s->blocked_ns);
            gt_site_put_json(out, &s->site);
            fputc('}', out);
        }
    fputs("]", out);
}

/* Totals over processes: sums, with shares recomputed from them. */
static struct gt_summary gt_total(const struct gt_one *v, size_t n)
{
    struct gt_summary t = {0};
    t.gpu_times = 1;
    for (size_t i = 0; i < n; i++) {
        const struct gt_summary *s = &v[i].r.summary;
        t.span_ns += s->span_ns;
        t.gpu_times &= s->gpu_times;
        t.calls += s->calls;
        t.launches += s->launches;
        t.launch_bound += s->launch_bound;
        t.launch_host_ns += s->launch_host_ns;
        t.busy_ns += s->busy_ns;
        t.idle_ns += s->idle_ns;
        t.sync_ns += s->sync_ns;
        t.h2d_bytes += s->h2d_bytes;
        t.pageable_h2d_bytes += s->pageable_h2d_bytes;
        for (int c = 0; c < GT_GAP_CAUSES; c++)
            t.idle_by_cause[c] += s->idle_by_cause[c];
    }
    double span = (double)t.span_ns;
    t.launch_host_pct = span > 0 ? 100.0 * (double)t.launch_host_ns / span : 0;
    t.idle_pct = span > 0 ? 100.0 * (double)t.idle_ns / span : 0;
    t.sync_pct = span > 0 ? 100.0 * (double)t.sync_ns / span : 0;
    t.launch_bound_pct = t.launches ? 100.0 * (double)t.launch_bound / (double)t.launches : 0;
    return t;
}

static void gt_json(FILE *out, const struct gt_one *v, size_t n)
{
    struct gt_summary total = gt_total(v, n);
    fputs("{\"summary\":", out);
    gt_json_summary(out, &total);
    gt_json_tables(out, v, n);
    fputs(",\"advice\":[", out);
    int first = 1;
    for (size_t t = 0; t < n; t++)
        for (int i = 0; i < 4 && v[t].r.advice[i][0]; i++, first = 0) {
            if (!first)
                fputc(',', out);
            gt_put_json_string(out, v[t].r.advice[i]);
        }
    fputs("],\"processes\":[", out);
    for (size_t t = 0; t < n; t++) {
        fprintf(out, "%s{\"trace\":", t ? "," : "");
        gt_put_json_string(out, v[t].path);
        fprintf(out, ",\"pid\":%lld,\"summary\":", v[t].pid);
        gt_json_summary(out, &v[t].r.summary);
        fputs(",\"devices\":[", out);
        for (size_t i = 0; i < v[t].r.ndevices; i++) {
            const struct gt_device_idle *d = &v[t].r.devices[i];
            fprintf(out, "%s{\"device\":%d,\"busy_ns\":%llu,\"idle_ns\":%llu,\"idle_pct\":%.3f}", i ? "," : "",
                    d->device, (unsigned long long)d->busy_ns, (unsigned long long)d->idle_ns, d->idle_pct);
        }
        fputs("]}", out);
    }
    fputs("]}\n", out);
}

/* ---- command ---- */

static int gt_parse(int argc, char **argv, struct gt_report_opts *o)
{
    static const struct option longs[] = {
        {"format", required_argument, NULL, 'f'}, {"top", required_argument, NULL, 't'},
        {"min-gap", required_argument, NULL, 'g'}, {"help", no_argument, NULL, 'h'},
        {"output", required_argument, NULL, 'o'}, {NULL, 0, NULL, 0},
    };
    o->json = o->html = 0;
    o->output = NULL;
    o->a.top = 10;
    o->a.min_gap_ns = 1000000;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "ho:", longs, NULL)) != -1) {
        switch (c) {
        case 'f':
            o->json = o->html = 0;
            if (strcmp(optarg, "json") == 0)
                o->json = 1;
            else if (strcmp(optarg, "html") == 0)
                o->html = 1;
            else if (strcmp(optarg, "text") != 0)
                return gt_usage_error("report", "--format must be text, json or html, not '%s'", optarg);
            break;
        case 'o':
            o->output = optarg;
            break;
        case 't': {
            char *end;
            long v = strtol(optarg, &end, 10);
            if (!*optarg || *end || v < 0 || v > 1000000)
                return gt_usage_error("report", "--top must be a count, not '%s'", optarg);
            o->a.top = (size_t)v;
            break;
        }
        case 'g':
            if (gt_parse_duration(optarg, &o->a.min_gap_ns) < 0)
                return gt_usage_error("report", "--min-gap must be a duration such as 250us, 1ms or 2s, not '%s'",
                                      optarg);
            break;
        case 'h':
            gt_cmd_report_usage(stdout);
            return -1;
        default:
            return gt_usage_error("report", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind >= argc)
        return gt_usage_error("report", "no trace given");
    return 0;
}

/* The report needs a whole recording: a trace with no calls, or one whose
 * process died before finishing, would answer with numbers that mislead. */
static int gt_check_usable(struct gt_trace *t)
{
    int64_t calls = 0;
    if (gt_trace_int(t, "SELECT count(*) FROM calls", &calls) < 0)
        return GT_EXIT_USAGE;
    if (calls == 0) {
        gt_err("%s: the trace holds no CUDA calls", t->path);
        return GT_EXIT_USAGE;
    }
    char *complete = gt_trace_meta(t, "complete");
    int ok = complete && strcmp(complete, "1") == 0;
    free(complete);
    if (!ok) {
        gt_err("%s: the traced process did not finish; the report needs a complete trace "
               "('gputrace info' shows what it holds)", t->path);
        return GT_EXIT_USAGE;
    }
    return 0;
}

int gt_cmd_report(int argc, char **argv)
{
    struct gt_report_opts o;
    int rc = gt_parse(argc, argv, &o);
    if (rc)
        return rc < 0 ? GT_EXIT_OK : rc;
    size_t n = (size_t)(argc - optind);
    struct gt_one *v = calloc(n, sizeof(*v));
    if (!v)
        return GT_EXIT_FAIL;
    size_t done = 0;
    rc = GT_EXIT_OK;
    for (size_t i = 0; i < n && rc == GT_EXIT_OK; i++) {
        struct gt_trace t;
        v[i].path = argv[optind + (int)i];
        if (gt_trace_open(&t, v[i].path) != 0) {
            rc = GT_EXIT_USAGE;
            break;
        }
        rc = gt_check_usable(&t);
        if (rc == GT_EXIT_OK) {
            v[i].pid = (long long)gt_trace_meta_int(&t, "pid", 0);
            if (gt_analyze(&t, &o.a, &v[i].r) < 0) {
                rc = GT_EXIT_FAIL;
            } else {
                done++;
                if (o.html && gt_busy_load(&t, &v[i].r, &v[i].busy, 1000) < 0) {
                    gt_err("%s: %s", v[i].path, sqlite3_errmsg(t.db));
                    rc = GT_EXIT_FAIL;
                }
            }
        }
        gt_trace_close(&t);
    }
    FILE *out = stdout;
    if (rc == GT_EXIT_OK && o.output && strcmp(o.output, "-") != 0 && !(out = fopen(o.output, "w"))) {
        gt_err("cannot write %s: %s", o.output, strerror(errno));
        rc = GT_EXIT_FAIL;
    }
    if (rc == GT_EXIT_OK) {
        if (o.json) {
            gt_json(out, v, n);
        } else if (o.html) {
            gt_html_begin(out, n == 1 ? v[0].path : "gputrace report");
            for (size_t i = 0; i < n; i++)
                gt_html_trace(out, v[i].path, v[i].pid, &v[i].r, &v[i].busy, &o.a, (int)i);
            gt_html_end(out);
        } else {
            for (size_t i = 0; i < n; i++) {
                if (i)
                    fputc('\n', out);
                gt_text(out, v[i].path, &v[i].r, &o);
            }
            if (n > 1) {
                struct gt_summary total = gt_total(v, n);
                fprintf(out, "\n== totals over %zu processes\n", n);
                gt_text_summary(out, &total);
            }
        }
        if (out != stdout ? fclose(out) != 0 : fflush(out) != 0) {
            gt_err("cannot write %s: %s", o.output ? o.output : "standard output", strerror(errno));
            rc = GT_EXIT_FAIL;
        }
    }
    for (size_t i = 0; i < done; i++) {
        gt_report_free(&v[i].r);
        gt_busy_free(&v[i].busy);
    }
    free(v);
    return rc;
}

/* gt_cmd_report.c: `gputrace report`: its options, which traces it reads,
 * and which output format (output/) prints the analyses (analysis/). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/gt_analyze.h"
#include "base/gt_progress.h"
#include "trace/gt_scan.h"
#include "cmd/gt_cmds.h"
#include "base/gt_fmt.h"
#include "output/gt_report_html.h"
#include "output/gt_report_out.h"
#include "analysis/gt_site.h"
#include "trace/gt_trace.h"

void gt_cmd_report_usage(FILE *out)
{
    fprintf(out,
            "usage: gputrace report [--format text|json|html] [-o FILE] [--top N]\n"
            "                       [--min-gap DURATION] [-q] TRACE.db...\n"
            "\n"
            "Where the time went, from one trace per process (docs/report.md defines\n"
            "every figure):\n"
            "  summary          span, GPU busy and idle, idle by cause (adds up to the\n"
            "                   idle time, start-up and tear-down included), launches,\n"
            "                   host time launching and in syncs (summed over threads,\n"
            "                   and the busiest thread's share), H2D bytes\n"
            "  findings         what cost the most time, ranked by that time, with\n"
            "                   where and what to do (under 1%% of the span: left out)\n"
            "  by phase         per name of top-level NVTX range: wall time, GPU busy\n"
            "                   and idle, launches, H2D bytes, syncs (traces with NVTX\n"
            "                   ranges)\n"
            "  GPU idle gaps    each gap of at least --min-gap: its cause (what the host\n"
            "                   was doing) and the calls whose GPU work came before it\n"
            "                   and ended it; idle time by the call that ended it\n"
            "  kernels          by GPU time: count, total, mean, median, min, max, std\n"
            "                   dev, share; kernels CUDA Graphs ran included\n"
            "  launch overhead  per kernel and per launch site: host time in the\n"
            "                   launch call (mean, p50, p99, max), queue delay, GPU\n"
            "                   time, launch-bound launches (the GPU waited for them)\n"
            "  transfers        copies and memsets by kind and size: time, bandwidth\n"
            "  H2D hotspots     host-to-device copy calls by call site: bytes, host\n"
            "                   and GPU time, pageable vs pinned, blocking vs async\n"
            "  syncs            explicit and implicit (blocking copies) by call site\n"
            "  streams, devices busy time per stream, compute/copy overlap\n"
            "  API summary      time, count and errors per CUDA function; errors by name\n"
            "A call site is the innermost frames of the user's code. Without GPU times\n"
            "(no CUPTI) host-side times stand in, and the report says so.\n"
            "\n"
            "options:\n"
            "  --format text|json|html\n"
            "                       output format (default text); JSON's keys are\n"
            "                       listed in docs/report.md; HTML is one self-contained\n"
            "                       file (nothing fetched) with a GPU overview, a\n"
            "                       timeline to zoom and pan (lanes per stream, thread\n"
            "                       and NVTX ranges) whose gaps link to their rows and\n"
            "                       back, and the tables\n"
            "  -o, --output FILE    write there (default: standard output)\n"
            "  --top N              rows per table (default 10; 0: all)\n"
            "  --min-gap DURATION   shortest idle gap listed: 250us, 1ms, 2s, or ns\n"
            "  -q, --quiet          no progress line (shown on standard error when a\n"
            "                       trace takes more than 2 s to read)\n"
            "                       (default 1ms)\n"
            "\n"
            "Several traces (one per process of a job) give a section per process,\n"
            "then totals. A trace whose process did not finish is read as far as it\n"
            "was committed, and says so on its first line.\n"
            "\n"
            "exit status: 0; 2 for bad arguments, a trace given twice, or a trace that\n"
            "is missing, not a gputrace trace or newer than this gputrace (the traces\n"
            "that could be read are still reported).\n");
}

struct gt_report_opts {
    int json, html;
    const char *output;  /* NULL: standard output */
    struct gt_analyze_opts a;
};

/* ---- command ---- */

static int gt_parse(int argc, char **argv, struct gt_report_opts *o)
{
    static const struct option longs[] = {
        {"format", required_argument, NULL, 'f'}, {"top", required_argument, NULL, 't'},
        {"min-gap", required_argument, NULL, 'g'}, {"help", no_argument, NULL, 'h'},
        {"output", required_argument, NULL, 'o'}, {"quiet", no_argument, NULL, 'q'}, {NULL, 0, NULL, 0},
    };
    o->json = o->html = 0;
    o->output = NULL;
    o->a.top = 10;
    o->a.min_gap_ns = 1000000;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "ho:q", longs, NULL)) != -1) {
        switch (c) {
        case 'q':
            gt_progress_quiet = 1;
            break;
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

/* The same run given twice (the same file, or a copy of it) would count
 * everything twice: refused. A run is its host, pid and start time. */
static int gt_check_twice(const struct gt_report_item *v, size_t i)
{
    for (size_t j = 0; j < i; j++) {
        if (v[j].pid != v[i].pid || v[j].start_ns != v[i].start_ns)
            continue;
        if ((v[j].host == NULL) != (v[i].host == NULL) || (v[j].host && strcmp(v[j].host, v[i].host) != 0))
            continue;
        gt_err("%s and %s are the same run (host %s, pid %lld, started at %lld): each trace may be given "
               "once", v[j].path, v[i].path, v[i].host ? v[i].host : "?", v[i].pid, (long long)v[i].start_ns);
        return GT_EXIT_USAGE;
    }
    return GT_EXIT_OK;
}

int gt_cmd_report(int argc, char **argv)
{
    struct gt_report_opts o;
    int rc = gt_parse(argc, argv, &o);
    if (rc)
        return rc < 0 ? GT_EXIT_OK : rc;
    size_t n = (size_t)(argc - optind);
    struct gt_report_item *v = calloc(n, sizeof(*v));
    if (!v)
        return GT_EXIT_FAIL;
    size_t done = 0, m = 0;
    int unreadable = 0;
    rc = GT_EXIT_OK;
    for (size_t i = 0; i < n && rc == GT_EXIT_OK; i++) {
        struct gt_trace t;
        /* A trace that cannot be read at all (a rank that died before its
         * first commit leaves an empty file) says why in one line; the
         * others are still reported. */
        if (gt_trace_open(&t, argv[optind + (int)i]) != 0) {
            unreadable = 1;
            continue;
        }
        struct gt_report_item *x = &v[m];
        x->path = argv[optind + (int)i];
        x->pid = (long long)gt_trace_meta_int(&t, "pid", 0);
        x->host = gt_trace_meta(&t, "host");
        x->start_ns = gt_trace_meta_int(&t, "start_ns", -1);
        x->schema_version = t.schema_version;
        m++;
        rc = gt_check_twice(v, m - 1);
        if (rc == GT_EXIT_OK) {
            /* HTML marks every listed gap on its timeline: it keeps every row
             * and shows --top of each table itself */
            struct gt_analyze_opts a = o.a;
            if (o.html)
                a.top = 0;
            gt_progress_begin("report", gt_scan_row_estimate(&t));
            int arc = gt_analyze(&t, &a, &x->r);
            gt_progress_end();
            if (arc < 0) {
                rc = GT_EXIT_FAIL;
            } else {
                done++;
                if (o.html && gt_busy_load(&t, &x->r, &x->busy, 1000) < 0) {
                    gt_err("%s: %s", x->path, sqlite3_errmsg(t.db));
                    rc = GT_EXIT_FAIL;
                } else if (o.html && gt_tl_load(&t, &x->r, &x->tl) < 0) {
                    rc = GT_EXIT_FAIL;
                }
            }
        }
        gt_trace_close(&t);
    }
    if (rc == GT_EXIT_OK && !m)
        rc = GT_EXIT_USAGE;
    n = m;
    FILE *out = stdout;
    if (rc == GT_EXIT_OK && o.output && strcmp(o.output, "-") != 0 && !(out = fopen(o.output, "w"))) {
        gt_err("cannot write %s: %s", o.output, strerror(errno));
        rc = GT_EXIT_FAIL;
    }
    if (rc == GT_EXIT_OK) {
        if (o.json) {
            gt_report_json(out, v, n);
        } else if (o.html) {
            gt_html_begin(out, n == 1 ? v[0].path : "gputrace report");
            for (size_t i = 0; i < n; i++)
                gt_html_trace(out, v[i].path, v[i].pid, &v[i].r, &v[i].busy, &v[i].tl, &o.a, (int)i);
            gt_html_end(out);
        } else {
            gt_report_text(out, v, n, &o.a);
        }
        if (out != stdout ? fclose(out) != 0 : fflush(out) != 0) {
            gt_err("cannot write %s: %s", o.output ? o.output : "standard output", strerror(errno));
            rc = GT_EXIT_FAIL;
        }
        if (rc == GT_EXIT_OK && unreadable)
            rc = GT_EXIT_USAGE;
    }
    for (size_t i = 0; i < done; i++) {
        gt_report_free(&v[i].r);
        gt_busy_free(&v[i].busy);
        gt_tl_free(&v[i].tl);
    }
    for (size_t i = 0; i < n; i++)
        free(v[i].host);
    free(v);
    return rc;
}

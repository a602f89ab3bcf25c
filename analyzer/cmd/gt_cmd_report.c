/* gt_cmd_report.c: `gputrace report`: its options, which traces it reads,
 * and which output format (output/) prints the analyses (analysis/). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/gt_analyze.h"
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
    struct gt_report_item *v = calloc(n, sizeof(*v));
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
            gt_report_json(out, v, n);
        } else if (o.html) {
            gt_html_begin(out, n == 1 ? v[0].path : "gputrace report");
            for (size_t i = 0; i < n; i++)
                gt_html_trace(out, v[i].path, v[i].pid, &v[i].r, &v[i].busy, &o.a, (int)i);
            gt_html_end(out);
        } else {
            gt_report_text(out, v, n, &o.a);
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

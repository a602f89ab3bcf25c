/* gt_cmd_export.c: `gputrace export`: options, traces, the output file,
 * and the document around output/gt_export_perfetto.c's packets or
 * output/gt_export_chrome.c's JSON events. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/gt_utf8.h"
#include "cmd/gt_cmds.h"
#include "base/gt_fmt.h"
#include "base/gt_out.h"
#include "base/gt_progress.h"
#include "output/gt_export_chrome.h"
#include "output/gt_export_perfetto.h"
#include "analysis/gt_window.h"
#include "trace/gt_scan.h"
#include "trace/gt_trace.h"

void gt_cmd_export_usage(FILE *out)
{
    fprintf(out,
            "usage: gputrace export [--format perfetto|chrome-json] [-o FILE] [--from T] [--to T]\n"
            "                       [--range NAME] [--step NAME]\n"
            "                       [--max-events N] [--min-gap DUR] [-q] TRACE.db...\n"
            "\n"
            "Writes the traces as a timeline that ui.perfetto.dev opens: a track per\n"
            "host thread with its CUDA calls (name, call site, result when it failed),\n"
            "a track per GPU stream with the kernels, copies and memsets it ran, flow\n"
            "arrows from each call to the GPU work it caused, a track per GPU\n"
            "marking its idle gaps (with their cause), NVTX ranges and marks and host\n"
            "samples on their threads, and (perfetto) a busy %% counter per stream.\n"
            "Several traces (the processes of one job) share one timeline; times count\n"
            "from the earliest trace's start.\n"
            "\n"
            "formats:\n"
            "  perfetto      Perfetto's native protobuf trace (default): compact, names\n"
            "                and call sites written once; opens in ui.perfetto.dev and\n"
            "                trace_processor at sizes JSON cannot\n"
            "  chrome-json   Chrome trace event JSON (also chrome://tracing), with each\n"
            "                call's arguments; several times larger\n"
            "\n"
            "options:\n"
            "  --format FORMAT      perfetto (default) or chrome-json\n"
            "  -o, --output FILE    where to write (default or '-': standard output);\n"
            "                       a name ending in .gz is written gzip-compressed\n"
            "  --from TIME          only events starting at or after TIME from the trace's\n"
            "                       start (a duration: 1.5s, 200ms, 250us), or step:N\n"
            "                       (that step's start, in each trace)\n"
            "  --to TIME            only events starting before TIME from the start, or\n"
            "                       before step:N's end\n"
            "  --range NAME         only events inside the NVTX ranges NAME (a glob)\n"
            "                       matches, in each trace: their union, as report\n"
            "                       reads them, not the span from the first to the\n"
            "                       last (inside --from/--to)\n"
            "  --step NAME          step ranges are the ranges NAME matches (a glob)\n"
            "  --max-events N       stop after N slices (perfetto only), saying where\n"
            "  --min-gap DURATION   shortest idle gap marked (default 1ms)\n"
            "  -q, --quiet          no progress line\n"
            "  -h, --help           show this help\n"
            "\n"
            "exit status: 0; 1 if the output cannot be written; 2 for bad arguments\n"
            "or a trace that is missing or unreadable.\n");
}

int gt_cmd_export(int argc, char **argv)
{
    static const struct option longs[] = {
        {"format", required_argument, NULL, 'f'}, {"output", required_argument, NULL, 'o'},
        {"min-gap", required_argument, NULL, 'g'}, {"from", required_argument, NULL, 'F'},
        {"to", required_argument, NULL, 'T'},       {"max-events", required_argument, NULL, 'n'},
        {"quiet", no_argument, NULL, 'q'},          {"help", no_argument, NULL, 'h'},
        {"range", required_argument, NULL, 'R'},    {"step", required_argument, NULL, 'S'},
        {NULL, 0, NULL, 0},
    };
    const char *format = "perfetto", *output = NULL;
    struct gt_export x = {.first = 1, .min_gap_ns = 1000000, .to_ns = UINT64_MAX};
    /* steps and ranges are resolved on each trace (docs/report.md, Windows) */
    struct gt_window_spec ws = {0};
    int per_trace = 0;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "ho:q", longs, NULL)) != -1) {
        switch (c) {
        case 'f':
            format = optarg;
            break;
        case 'o':
            output = optarg;
            break;
        case 'g':
            if (gt_parse_duration(optarg, &x.min_gap_ns) < 0)
                return gt_usage_error("export", "--min-gap must be a duration such as 250us, 1ms or 2s, not '%s'",
                                      optarg);
            break;
        case 'R':
            ws.range = optarg;
            per_trace = 1;
            break;
        case 'S':
            if (!*optarg)
                return gt_usage_error("export", "--step needs a range name (a glob such as 'iter*')");
            ws.step_glob = optarg;
            break;
        case 'F':
        case 'T':
            *(c == 'F' ? &ws.from : &ws.to) = optarg;
            if (strncmp(optarg, "step:", 5) == 0) {
                per_trace = 1;
                break;
            }
            if (gt_parse_duration(optarg, c == 'F' ? &x.from_ns : &x.to_ns) < 0)
                return gt_usage_error("export", "--%s must be a time from the trace's start such as 1.5s or "
                                      "200ms, not '%s'", c == 'F' ? "from" : "to", optarg);
            break;
        case 'n': {
            char *end;
            errno = 0;
            unsigned long long v = strtoull(optarg, &end, 10);
            if (errno || end == optarg || *end || optarg[0] == '-' || v == 0)
                return gt_usage_error("export", "--max-events must be a positive number, not '%s'", optarg);
            x.max_events = v;
            break;
        }
        case 'q':
            gt_progress_quiet = 1;
            break;
        case 'h':
            gt_cmd_export_usage(stdout);
            return GT_EXIT_OK;
        default:
            return gt_usage_error("export", "unknown option '%s'", argv[optind - 1]);
        }
    }
    int perfetto = strcmp(format, "perfetto") == 0;
    if (!perfetto && strcmp(format, "chrome-json") != 0)
        return gt_usage_error("export", "--format must be perfetto or chrome-json, not '%s'", format);
    if (x.max_events && !perfetto)
        return gt_usage_error("export", "--max-events needs --format perfetto");
    if (gt_window_check(&ws, "export") < 0)
        return GT_EXIT_USAGE;
    if (!per_trace && x.to_ns <= x.from_ns)
        return gt_usage_error("export", "--to must be later than --from");
    if (optind >= argc)
        return gt_usage_error("export", "no trace given");
    int n = argc - optind;
    struct gt_trace *t = calloc((size_t)n, sizeof(*t));
    if (!t)
        return GT_EXIT_FAIL;
    int rc = GT_EXIT_OK, opened = 0;
    x.origin_ns = INT64_MAX;
    for (; opened < n; opened++) {
        if (gt_trace_open(&t[opened], argv[optind + opened]) != 0) {
            rc = GT_EXIT_USAGE;
            break;
        }
        int64_t s = gt_trace_meta_int(&t[opened], "start_ns", INT64_MAX);
        if (s < x.origin_ns)
            x.origin_ns = s;
    }
    if (x.origin_ns == INT64_MAX)
        x.origin_ns = 0;
    /* each trace's steps and ranges, before anything is written: the union
     * of the ranges --range names (as report reads them, gt_window.h), its
     * hull from the first start to the last end as times from the origin */
    uint64_t *bounds = per_trace && rc == GT_EXIT_OK ? calloc(2 * (size_t)n, sizeof(*bounds)) : NULL;
    struct gt_window *wins = per_trace && rc == GT_EXIT_OK ? calloc((size_t)n, sizeof(*wins)) : NULL;
    if (per_trace && rc == GT_EXIT_OK && (!bounds || !wins))
        rc = GT_EXIT_FAIL;
    for (int i = 0; per_trace && rc == GT_EXIT_OK && i < n; i++) {
        struct gt_window *w = &wins[i];
        if (gt_window_resolve(&t[i], &ws, x.origin_ns, w) < 0) {
            rc = GT_EXIT_USAGE;
            break;
        }
        uint64_t a = w->a[0], b = w->b[w->n - 1], o = (uint64_t)x.origin_ns;
        bounds[2 * i] = a > o ? a - o : 0;
        bounds[2 * i + 1] = b == UINT64_MAX ? UINT64_MAX : b > o ? b - o : 0;
    }
    if (rc == GT_EXIT_OK && !(x.out = gt_out_open(output)))
        rc = GT_EXIT_FAIL;
    FILE *clean = rc == GT_EXIT_OK && !perfetto ? gt_utf8_wrap(x.out) : NULL;
    if (clean)
        x.out = clean; /* JSON valid whatever bytes the names hold (base/gt_utf8.h) */
    if (rc == GT_EXIT_OK) {
        /* rows read: the export's own pass, and the idle-gap analysis's */
        uint64_t rows = 0;
        for (int i = 0; i < n; i++)
            rows += 2 * gt_scan_row_estimate(&t[i]);
        gt_progress_begin("export", rows);
        if (!perfetto)
            fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[", x.out);
        for (int i = 0; i < n && rc == GT_EXIT_OK; i++) {
            if (per_trace) {
                x.from_ns = bounds[2 * i];
                x.to_ns = bounds[2 * i + 1];
                x.win = &wins[i];
            }
            if ((perfetto ? gt_export_perfetto_trace(&t[i], &x, (uint32_t)i + 1) : gt_export_chrome_trace(&t[i], &x)) < 0)
                rc = GT_EXIT_USAGE;
        }
        if (!perfetto)
            fputs("\n]}\n", x.out);
        gt_progress_end();
        if (gt_out_close(x.out, output, x.write_errno) < 0)
            rc = GT_EXIT_FAIL;
    }
    if (rc == GT_EXIT_OK && x.cut) {
        char at[32];
        gt_fmt_duration((int64_t)x.cut_at_ns, at, sizeof(at));
        fprintf(stderr,
                "gputrace export: stopped at --max-events %llu: the first event left out starts at %s "
                "(export from there with --from %lluns)\n",
                (unsigned long long)x.max_events, at, (unsigned long long)x.cut_at_ns);
    }
    for (int i = 0; i < opened; i++)
        gt_trace_close(&t[i]);
    free(t);
    free(bounds);
    for (int i = 0; wins && i < n; i++)
        gt_window_free(&wins[i]);
    free(wins);
    return rc;
}

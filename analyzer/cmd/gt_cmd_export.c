/* gt_cmd_export.c: `gputrace export --format perfetto`: options, traces and
 * the document around output/gt_export_chrome.c's events. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/gt_cmds.h"
#include "base/gt_fmt.h"
#include "output/gt_export_chrome.h"
#include "trace/gt_trace.h"

void gt_cmd_export_usage(FILE *out)
{
    fprintf(out,
            "usage: gputrace export --format perfetto [-o FILE] [--min-gap DUR] TRACE.db...\n"
            "\n"
            "Writes the traces as Chrome trace event JSON, which ui.perfetto.dev and\n"
            "chrome://tracing open: a track per host thread with its CUDA calls (name,\n"
            "arguments, result, call site, Python frames first) and its NVTX ranges\n"
            "and marks, a track per GPU stream with the kernels, copies and memsets\n"
            "it ran, flow arrows from each call to the GPU work it caused, and a\n"
            "track per GPU marking its idle gaps (with cause and the calls before\n"
            "and after). Several traces (the processes of one job) share one\n"
            "timeline. Times are microseconds from the earliest trace's start.\n"
            "\n"
            "options:\n"
            "  --format perfetto    the only format so far (required)\n"
            "  -o, --output FILE    where to write (default: standard output)\n"
            "  --min-gap DURATION   shortest idle gap marked (default 1ms)\n"
            "  -h, --help           show this help\n"
            "\n"
            "exit status: 0; 1 if the output cannot be written; 2 for bad arguments\n"
            "or a trace that is missing or unreadable.\n");
}

int gt_cmd_export(int argc, char **argv)
{
    static const struct option longs[] = {
        {"format", required_argument, NULL, 'f'}, {"output", required_argument, NULL, 'o'},
        {"min-gap", required_argument, NULL, 'g'}, {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0},
    };
    const char *format = NULL, *output = NULL;
    struct gt_export x = {.first = 1, .min_gap_ns = 1000000};
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "ho:", longs, NULL)) != -1) {
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
        case 'h':
            gt_cmd_export_usage(stdout);
            return GT_EXIT_OK;
        default:
            return gt_usage_error("export", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (!format)
        return gt_usage_error("export", "--format is required (perfetto)");
    if (strcmp(format, "perfetto") != 0)
        return gt_usage_error("export", "--format must be perfetto, not '%s'", format);
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
    if (rc == GT_EXIT_OK) {
        x.out = output && strcmp(output, "-") != 0 ? fopen(output, "w") : stdout;
        if (!x.out) {
            gt_err("cannot write %s: %s", output, strerror(errno));
            rc = GT_EXIT_FAIL;
        }
    }
    if (rc == GT_EXIT_OK) {
        fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[", x.out);
        for (int i = 0; i < n && rc == GT_EXIT_OK; i++)
            if (gt_export_chrome_trace(&t[i], &x) < 0)
                rc = GT_EXIT_USAGE;
        fputs("\n]}\n", x.out);
        if (x.out != stdout ? fclose(x.out) != 0 : fflush(stdout) != 0) {
            gt_err("cannot write %s: %s", output ? output : "standard output", strerror(errno));
            rc = GT_EXIT_FAIL;
        }
    }
    for (int i = 0; i < opened; i++)
        gt_trace_close(&t[i]);
    free(t);
    return rc;
}

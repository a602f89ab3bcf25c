/* gt_cmd_summarize.c: `gputrace summarize TRACE.db -o TRACE.summary.json`:
 * the map step of the cross-rank report, run where the trace is
 * (docs/ranks.md). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/gt_utf8.h"
#include "analysis/gt_ranks.h"
#include "base/gt_out.h"
#include "cmd/gt_cmds.h"
#include "output/gt_rank_out.h"
#include "trace/gt_trace.h"

void gt_cmd_summarize_usage(FILE *out)
{
    fprintf(out,
            "usage: gputrace summarize [--collectives PATTERNS] [--step NAME] [-o FILE] TRACE.db\n"
            "\n"
            "Writes one rank's compact summary (JSON, well under 1 MiB): its report\n"
            "figures, its longest GPU idle gaps with their sites, and its collectives\n"
            "(kernels named as NCCL's: stream, place on the stream, launch, GPU start\n"
            "and end, NVTX range and step). Run it where each trace is (one per rank,\n"
            "under srun, mpirun, a Kubernetes job or a Dask cluster), then\n"
            "'gputrace report *.summary.json' compares the ranks without the traces\n"
            "(docs/ranks.md).\n"
            "\n"
            "options:\n"
            "  -o, --output FILE      write there (default: TRACE.db with .summary.json\n"
            "                         for .db; '-': standard output)\n"
            "  --collectives PATTERNS comma-separated kernel name patterns (shell\n"
            "                         wildcards) of collectives, instead of the default\n"
            "                         ncclDevKernel_*,ncclKernel_*,*ncclDevKernel_*,\n"
            "                         *ncclKernel_*,rcclKernel*,*oneccl*\n"
            "  --step NAME            step ranges are the NVTX ranges NAME matches (a\n"
            "                         glob), as report's --step; collectives are matched\n"
            "                         across ranks by step\n"
            "\n"
            "exit status: 0; 1 if the summary could not be written; 2 for bad\n"
            "arguments or a trace that cannot be read.\n");
}

int gt_cmd_summarize(int argc, char **argv)
{
    static const struct option longs[] = {{"output", required_argument, NULL, 'o'},
                                          {"collectives", required_argument, NULL, 'c'},
                                          {"step", required_argument, NULL, 'S'},
                                          {"help", no_argument, NULL, 'h'},
                                          {NULL, 0, NULL, 0}};
    const char *output = NULL;
    struct gt_rank_patterns pat = {.n = 0};
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "ho:", longs, NULL)) != -1) {
        switch (c) {
        case 'o':
            output = optarg;
            break;
        case 'c':
            if (gt_rank_patterns_parse(optarg, &pat) < 0)
                return gt_usage_error("summarize", "--collectives must be 1 to %d comma-separated patterns",
                                      GT_RANK_MAX_PATTERNS);
            break;
        case 'S':
            if (!*optarg)
                return gt_usage_error("summarize", "--step needs a range name (a glob such as 'iter*')");
            pat.step_glob = optarg;
            break;
        case 'h':
            gt_cmd_summarize_usage(stdout);
            return GT_EXIT_OK;
        default:
            return gt_usage_error("summarize", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind >= argc)
        return gt_usage_error("summarize", "no trace given");
    if (optind + 1 < argc)
        return gt_usage_error("summarize", "one trace at a time (run it once per rank, where each trace is)");
    const char *path = argv[optind];
    char def[4096];
    if (!output) {
        size_t n = strlen(path);
        if (n > 3 && strcmp(path + n - 3, ".db") == 0)
            n -= 3;
        snprintf(def, sizeof(def), "%.*s.summary.json", (int)n, path);
        output = def;
    }
    struct gt_trace t;
    if (gt_trace_open(&t, path) != 0)
        return GT_EXIT_USAGE;
    struct gt_rank_sum s;
    int rc = gt_rank_sum_from_trace(&t, &pat, &s);
    gt_trace_close(&t);
    if (rc < 0)
        return GT_EXIT_FAIL;
    FILE *out = gt_out_open(output);
    if (!out) {
        gt_rank_sum_free(&s);
        return GT_EXIT_FAIL;
    }
    FILE *clean = gt_utf8_wrap(out); /* valid JSON whatever bytes the names hold (base/gt_utf8.h) */
    if (clean)
        out = clean;
    gt_rank_summary_write(out, &s, GT_VERSION);
    gt_rank_sum_free(&s);
    return gt_out_close(out, output, 0) == 0 ? GT_EXIT_OK : GT_EXIT_FAIL;
}

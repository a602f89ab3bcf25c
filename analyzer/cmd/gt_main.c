/* gt_main.c: `gputrace CMD ...` dispatch, top-level help and version. */
#include <stdio.h>
#include <string.h>

#include "cmd/gt_cmds.h"

static const struct gt_cmd gt_cmds[] = {
    {"record", "run a command with CUDA calls traced into a SQLite file", gt_cmd_record,
     gt_cmd_record_usage},
    {"info", "summarize one or more trace files", gt_cmd_info, gt_cmd_info_usage},
    {"report", "launch overhead, H2D hotspots, GPU idle gaps and syncs", gt_cmd_report, gt_cmd_report_usage},
    {"audit", "check traces against budgets (for CI): exit 1 if one is exceeded", gt_cmd_audit,
     gt_cmd_audit_usage},
    {"diff", "compare traces before and after a change, per site", gt_cmd_diff, gt_cmd_diff_usage},
    {"export", "write traces as a timeline for ui.perfetto.dev", gt_cmd_export,
     gt_cmd_export_usage},
    {"summarize", "one rank's compact summary, for 'report' across many ranks", gt_cmd_summarize,
     gt_cmd_summarize_usage},
    {"merge", "many ranks' traces in one SQLite file, with a rank column", gt_cmd_merge, gt_cmd_merge_usage},
    {"trigger", "open a recording window in running standby processes", gt_cmd_trigger, gt_cmd_trigger_usage},
};
#define GT_NCMDS (sizeof(gt_cmds) / sizeof(gt_cmds[0]))

static void gt_usage(FILE *out)
{
    fprintf(out, "usage: gputrace [--help] [--version] COMMAND [ARGS...]\n\n"
                 "Traces CUDA runtime and driver calls of a program into one SQLite\n"
                 "file per process, and reads those files back.\n\n"
                 "commands:\n");
    for (size_t i = 0; i < GT_NCMDS; i++)
        fprintf(out, "  %-9s %s\n", gt_cmds[i].name, gt_cmds[i].summary);
    fprintf(out, "  %-9s %s\n", "help", "show the help of a command");
    fprintf(out, "\nenvironment (read by traced processes; see 'gputrace help record'):\n"
                 "  GPUTRACE_OUTPUT         trace path pattern: %%p %%n %%h %%r %%w (default\n"
                 "                          gputrace-%%n-%%p.db)\n"
                 "  GPUTRACE_MODE           record (default) or standby: record nothing until\n"
                 "                          'gputrace trigger' opens a window\n"
                 "  GPUTRACE_STACK_DEPTH    frames per call, 0 turns stacks off (default 32)\n"
                 "  GPUTRACE_PYTHON         1 (default) or 0: Python stacks of Python's calls\n"
                 "  GPUTRACE_NVTX           1 (default) or 0: NVTX ranges and marks\n"
                 "  GPUTRACE_BUFFER_EVENTS  largest per-thread event ring (default 65536)\n"
                 "  GPUTRACE_GPU_TIMING     cupti (default) or off: GPU-side times via CUPTI\n"
                 "  GPUTRACE_CUPTI_PATH     the CUPTI library to load\n"
                 "  GPUTRACE_SAMPLE_HZ      host samples a second, 0 (off) to 1000 (default 100)\n"
                 "  GPUTRACE_SAMPLE_BUDGET  the most of a core the sampler may take (default 1%%)\n"
                 "  GPUTRACE_SAMPLE_THREADS all (default: every thread) or cuda (the CUDA threads)\n"
                 "  GPUTRACE_SAMPLE_NATIVE  blocked (default), perf or auto: running threads'\n"
                 "                          native stacks from perf events\n"
                 "\nRun 'gputrace help COMMAND' for a command's options.\n");
}

/* Edit distance, for "did you mean": names are short. */
static size_t gt_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 32 || lb > 32)
        return 99;
    size_t d[33][33];
    for (size_t i = 0; i <= la; i++)
        d[i][0] = i;
    for (size_t j = 0; j <= lb; j++)
        d[0][j] = j;
    for (size_t i = 1; i <= la; i++)
        for (size_t j = 1; j <= lb; j++) {
            size_t sub = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            size_t del = d[i - 1][j] + 1, ins = d[i][j - 1] + 1;
            d[i][j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < d[i][j])
                d[i][j] = d[i - 2][j - 2] + 1; /* a swap of two letters */
        }
    return d[la][lb];
}

static const struct gt_cmd *gt_find_cmd(const char *name)
{
    for (size_t i = 0; i < GT_NCMDS; i++)
        if (strcmp(gt_cmds[i].name, name) == 0)
            return &gt_cmds[i];
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        gt_usage(stderr);
        return GT_EXIT_USAGE;
    }
    const char *arg = argv[1];
    if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
        gt_usage(stdout);
        return GT_EXIT_OK;
    }
    if (strcmp(arg, "--version") == 0 || strcmp(arg, "-V") == 0) {
        printf("gputrace %s\n", GT_VERSION);
        return GT_EXIT_OK;
    }
    if (strcmp(arg, "help") == 0) {
        if (argc < 3) {
            gt_usage(stdout);
            return GT_EXIT_OK;
        }
        const struct gt_cmd *c = gt_find_cmd(argv[2]);
        if (!c) {
            gt_err("unknown command '%s'", argv[2]);
            gt_usage(stderr);
            return GT_EXIT_USAGE;
        }
        c->usage(stdout);
        return GT_EXIT_OK;
    }
    const struct gt_cmd *c = gt_find_cmd(arg);
    if (!c) {
        if (arg[0] == '-')
            gt_err("unknown option '%s'", arg);
        else {
            const char *best = NULL;
            size_t bd = 3;
            for (size_t i = 0; i < GT_NCMDS; i++) {
                size_t dd = gt_distance(arg, gt_cmds[i].name);
                if (dd < bd) {
                    bd = dd;
                    best = gt_cmds[i].name;
                }
            }
            if (best) {
                gt_err("unknown command '%s'; did you mean '%s'?", arg, best);
                return GT_EXIT_USAGE;
            }
            gt_err("unknown command '%s'", arg);
        }
        gt_usage(stderr);
        return GT_EXIT_USAGE;
    }
    fflush(stdout);
    return c->run(argc - 1, argv + 1);
}

/* gt_cmd_report.c: `gputrace report`: its options, which traces it reads,
 * and which output format (output/) prints the analyses (analysis/). */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/gt_analyze.h"
#include "analysis/gt_ranks.h"
#include "analysis/gt_window.h"
#include "output/gt_rank_out.h"
#include "base/gt_progress.h"
#include "trace/gt_scan.h"
#include "cmd/gt_cmds.h"
#include "base/gt_fmt.h"
#include "output/gt_report_html.h"
#include "output/gt_report_out.h"
#include "base/gt_utf8.h"
#include "analysis/gt_site.h"
#include "trace/gt_catrules.h"
#include "trace/gt_trace.h"

void gt_cmd_report_usage(FILE *out)
{
    fprintf(out,
            "usage: gputrace report [--format text|json|html] [-o FILE] [--top N]\n"
            "                       [--min-gap DURATION] [--step NAME] [--from T] [--to T]\n"
            "                       [--range NAME] [-q] [-j N] [--collectives PATTERNS]\n"
            "                       [--categories FILE]\n"
            "                       TRACE.db|RANK.summary.json...\n"
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
            "  steps            step time p50/p99/max over the step ranges (NVTX ranges\n"
            "                   named step, train_step, ProfilerStep#N..., or --step);\n"
            "                   the slowest steps and what each spent more time on\n"
            "                   than the median step: GPU idle by cause, syncs, copies\n"
            "  GPU idle gaps    each gap of at least --min-gap: its cause (what the host\n"
            "                   was doing), the calls that spent it, the calls whose GPU\n"
            "                   work came before it and ended it; idle time by site\n"
            "  kinds of work    GPU time, share and operations per category: kernels\n"
            "                   by name (matmul, attention, convolution, elementwise,\n"
            "                   reduction, collective, other), copies, memsets; per\n"
            "                   phase and per listed step too\n"
            "  kernels          by GPU time: count, total, mean, median, min, max, std\n"
            "                   dev, share; kernels CUDA Graphs ran included\n"
            "  launch overhead  per kernel and per launch site: host time in the\n"
            "                   launch call (mean, p50, p99, max), queue delay, GPU\n"
            "                   time, launch-bound launches (the GPU waited for them)\n"
            "  graph launches   by call site: what the graphs ran, GPU time\n"
            "  graph nodes      what graphs ran, by where each node was created (a\n"
            "                   captured launch, cudaGraphAddKernelNode...) and\n"
            "                   where the graph was launched\n"
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
            "                       (default 1ms)\n"
            "  --step NAME          step ranges are the NVTX ranges NAME matches (a glob:\n"
            "                       'iter*'); default: step, train_step, training_step,\n"
            "                       ProfilerStep, each maybe numbered (docs/report.md)\n"
            "  --from T, --to T     report only a window: the calls made in [from, to)\n"
            "                       and their GPU work; T is a time from the trace's\n"
            "                       start (1.5s, 200ms; the earliest trace's, for\n"
            "                       several) or a step, step:N (from its start, to its\n"
            "                       end)\n"
            "  --range NAME         the window from the start of the first NVTX range\n"
            "                       NAME (a glob) matches to the end of the last (inside\n"
            "                       --from/--to)\n"
            "  -q, --quiet          no progress line (shown on standard error when a\n"
            "                       trace takes more than 2 s to read)\n"
            "\n"
            "  -j, --jobs N         traces read at once (default: the machine's cores)\n"
            "  --collectives PATTERNS\n"
            "                       comma-separated kernel name patterns (shell\n"
            "                       wildcards) of collectives (default: NCCL's, RCCL's\n"
            "                       and oneCCL's names; docs/ranks.md)\n"
            "  --categories FILE    kernel category rules tried before the trace's own\n"
            "                       (lines of a GLOB pattern, a tab, a category; default\n"
            "                       $GPUTRACE_CATEGORIES; docs/report.md)\n"
            "\n"
            "Several traces (one per process of a job) give a section per process,\n"
            "then totals. A trace whose process did not finish is read as far as it\n"
            "was committed, and says so on its first line.\n"
            "\n"
            "ranks: when two or more inputs are ranks of a job (a trace names its rank\n"
            "in meta, or ran a collective; or rank summaries from 'gputrace\n"
            "summarize'), a ranks section comes first: which rank made the others wait\n"
            "at collectives, in which NVTX step, by how much and why (its idle gaps\n"
            "and their call sites); per rank span, GPU busy and idle, launch and sync\n"
            "time, H2D bytes, time in collectives split into waiting and moving data,\n"
            "and outliers (docs/ranks.md). Summaries alone give that section only.\n"
            "\n"
            "exit status: 0; 2 for bad arguments, a trace given twice, or a trace that\n"
            "is missing, not a gputrace trace or newer than this gputrace (the traces\n"
            "that could be read are still reported).\n");
}

struct gt_report_opts {
    int json, html;
    struct gt_window_spec win;
    int64_t win_origin;  /* a window's times count from the earliest trace's start */
    const char *output;  /* NULL: standard output */
    struct gt_analyze_opts a;
    size_t jobs;         /* -j: traces read at once */
    int ranks;           /* two or more inputs: each trace's rank summary too */
    struct gt_rank_patterns patterns;
};

/* ---- command ---- */

static int gt_parse(int argc, char **argv, struct gt_report_opts *o)
{
    static const struct option longs[] = {
        {"format", required_argument, NULL, 'f'}, {"top", required_argument, NULL, 't'},
        {"min-gap", required_argument, NULL, 'g'}, {"help", no_argument, NULL, 'h'},
        {"output", required_argument, NULL, 'o'}, {"quiet", no_argument, NULL, 'q'},
        {"jobs", required_argument, NULL, 'j'}, {"collectives", required_argument, NULL, 'c'},
        {"step", required_argument, NULL, 'S'}, {"from", required_argument, NULL, 'F'},
        {"to", required_argument, NULL, 'T'}, {"range", required_argument, NULL, 'R'},
        {"categories", required_argument, NULL, 'K'}, {NULL, 0, NULL, 0},
    };
    o->json = o->html = 0;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    o->jobs = cores > 0 ? (size_t)cores : 1;
    o->ranks = 0;
    o->patterns.n = 0;
    o->output = NULL;
    memset(&o->a, 0, sizeof(o->a));
    memset(&o->win, 0, sizeof(o->win));
    o->win_origin = 0;
    o->a.top = 10;
    o->a.min_gap_ns = 1000000;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "ho:qj:", longs, NULL)) != -1) {
        switch (c) {
        case 'j': {
            char *end;
            long v = strtol(optarg, &end, 10);
            if (!*optarg || *end || v < 1 || v > 1024)
                return gt_usage_error("report", "-j must be a number of threads from 1 to 1024, not '%s'", optarg);
            o->jobs = (size_t)v;
            break;
        }
        case 'c':
            if (gt_rank_patterns_parse(optarg, &o->patterns) < 0)
                return gt_usage_error("report", "--collectives must be 1 to %d comma-separated patterns",
                                      GT_RANK_MAX_PATTERNS);
            break;
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
        case 'S':
            if (!*optarg)
                return gt_usage_error("report", "--step needs a range name (a glob such as 'iter*')");
            o->a.step_glob = optarg;
            break;
        case 'F':
            o->win.from = optarg;
            break;
        case 'T':
            o->win.to = optarg;
            break;
        case 'R':
            o->win.range = optarg;
            break;
        case 'K':
            if (gt_catrules_check(optarg) < 0)
                return GT_EXIT_USAGE;
            o->a.categories = optarg;
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
    o->win.step_glob = o->a.step_glob;
    o->patterns.step_glob = o->a.step_glob; /* collectives are matched by these steps */
    if (gt_window_check(&o->win, "report") < 0)
        return GT_EXIT_USAGE;
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

/* One input's work, on a worker thread (-j): a trace is opened, analysed
 * and, when ranks are compared, reduced to its rank summary; a summary
 * file is read. */
struct gt_job {
    const char *path;
    int summary;            /* a .json summary: no per-process report */
    int opened, analysed, failed;
    struct gt_report_item item;
    struct gt_rank_sum rank;
    int has_rank_sum;
};

struct gt_pool {
    struct gt_job *jobs;
    size_t n;
    size_t next;            /* atomic */
    const struct gt_report_opts *o;
};

static void gt_job_run(struct gt_job *j, const struct gt_report_opts *o, int show_progress)
{
    if (j->summary) {
        if (gt_rank_sum_load(j->path, &j->rank) < 0) {
            j->failed = 1;
            return;
        }
        j->has_rank_sum = 1;
        return;
    }
    struct gt_trace t;
    /* A trace that cannot be read at all (a rank that died before its
     * first commit leaves an empty file) says why in one line; the
     * others are still reported. */
    if (gt_trace_open(&t, j->path) != 0)
        return;
    j->opened = 1;
    struct gt_report_item *x = &j->item;
    x->path = j->path;
    x->pid = (long long)gt_trace_meta_int(&t, "pid", 0);
    x->host = gt_trace_meta(&t, "host");
    x->start_ns = gt_trace_meta_int(&t, "start_ns", -1);
    x->schema_version = t.schema_version;
    /* HTML marks every listed gap on its timeline: it keeps every row
     * and shows --top of each table itself */
    struct gt_analyze_opts a = o->a;
    if (o->html)
        a.top = 0;
    struct gt_window win = {0};
    a.win_origin = o->win_origin;
    if (gt_window_on(&o->win)) {
        a.win = &win;
        if (gt_window_resolve(&t, &o->win, o->win_origin, &win) < 0) {
            /* this trace has no such window: said, and left out */
            free(x->host);
            x->host = NULL;
            j->opened = 0;
            gt_trace_close(&t);
            return;
        }
    }
    /* the rank summary's collectives are gathered in the report's pass: the trace is read once */
    struct gt_rank_collector *col = NULL;
    if (o->ranks) {
        if (!(col = gt_rank_collector_new(&o->patterns))) {
            gt_err("%s: out of memory", j->path);
            j->failed = 1;
            gt_window_free(&win);
            gt_trace_close(&t);
            return;
        }
        a.on_kernel = gt_rank_on_kernel;
        a.on_kernel_arg = col;
    }
    /* HTML: the overview's busy slices and the timeline's lanes come from
     * the report's own pass, not passes of their own */
    struct gt_analyze_tap tap;
    if (o->html) {
        a.busy_slices = 1000;
        if (gt_tl_begin(&x->tl, &t, a.win, &tap) < 0) {
            gt_err("%s: out of memory", x->path);
            j->failed = 1;
            free(x->host);
            x->host = NULL;
            gt_rank_collector_free(col);
            gt_window_free(&win);
            gt_trace_close(&t);
            return;
        }
        a.tap = &tap;
    }
    if (show_progress)
        gt_progress_begin("report", gt_scan_row_estimate(&t));
    int arc = gt_analyze(&t, &a, &x->r);
    if (show_progress)
        gt_progress_end();
    gt_window_free(&win);
    if (arc < 0) {
        j->failed = 1;
        gt_tl_free(&x->tl);
    } else {
        j->analysed = 1;
        if (o->html && gt_tl_finish(&t, &x->r, &x->tl) < 0)
            j->failed = 1;
        if (!j->failed && o->ranks) {
            if (gt_rank_sum_from_report(&t, &o->patterns, &x->r, col, &j->rank) < 0)
                j->failed = 1;
            else
                j->has_rank_sum = 1;
        }
    }
    gt_rank_collector_free(col);
    gt_trace_close(&t);
}

static void *gt_pool_worker(void *arg)
{
    struct gt_pool *p = arg;
    for (;;) {
        size_t i = __atomic_fetch_add(&p->next, 1, __ATOMIC_RELAXED);
        if (i >= p->n)
            return NULL;
        gt_job_run(&p->jobs[i], p->o, 0);
    }
}

int gt_cmd_report(int argc, char **argv)
{
    struct gt_report_opts o;
    int rc = gt_parse(argc, argv, &o);
    if (rc)
        return rc < 0 ? GT_EXIT_OK : rc;
    size_t n = (size_t)(argc - optind);
    char **paths = argv + optind;
    /* with two or more inputs, each trace's rank summary too: whether they
     * are ranks of a job is known once they are read */
    o.ranks = n >= 2;
    if (n == 1 && gt_rank_is_summary_path(paths[0]))
        return gt_usage_error("report", "%s: a rank summary is reported with the other ranks' (give two or more)",
                              paths[0]);
    struct gt_job *jobs = calloc(n, sizeof(*jobs));
    struct gt_report_item *v = calloc(n, sizeof(*v));
    struct gt_rank_sum *sums = calloc(n, sizeof(*sums));
    if (!jobs || !v || !sums) {
        free(jobs);
        free(v);
        free(sums);
        return GT_EXIT_FAIL;
    }
    o.win_origin = gt_window_origin(paths, (int)n, &o.win);
    for (size_t i = 0; i < n; i++) {
        jobs[i].path = paths[i];
        jobs[i].summary = gt_rank_is_summary_path(paths[i]);
    }
    size_t threads = o.jobs < n ? o.jobs : n;
    if (threads <= 1) {
        for (size_t i = 0; i < n; i++)
            gt_job_run(&jobs[i], &o, 1);
    } else {
        struct gt_pool pool = {jobs, n, 0, &o};
        pthread_t *tid = calloc(threads, sizeof(*tid));
        size_t started = 0;
        for (size_t i = 0; tid && i < threads; i++)
            if (pthread_create(&tid[i], NULL, gt_pool_worker, &pool) == 0)
                started++;
        if (!started)
            gt_pool_worker(&pool);
        for (size_t i = 0; i < started; i++)
            pthread_join(tid[i], NULL);
        free(tid);
    }
    /* in the inputs' order: the first failure decides, as one by one */
    size_t m = 0, nsums = 0;
    int unreadable = 0, ranks = 0;
    rc = GT_EXIT_OK;
    for (size_t i = 0; i < n; i++) {
        struct gt_job *j = &jobs[i];
        if (j->failed && rc == GT_EXIT_OK)
            rc = j->summary ? GT_EXIT_USAGE : GT_EXIT_FAIL;
        if (j->has_rank_sum) {
            sums[nsums++] = j->rank;
            /* ranks of a job: a summary, a trace that names its rank or ran a collective */
            ranks |= j->summary || j->rank.has_rank || j->rank.ncoll_all > 0;
        }
        if (j->summary)
            continue;
        if (!j->opened) {
            unreadable = 1;
            continue;
        }
        v[m++] = j->item;
        if (rc == GT_EXIT_OK)
            rc = gt_check_twice(v, m - 1);
    }
    if (rc == GT_EXIT_OK && !m && !nsums)
        rc = GT_EXIT_USAGE;
    struct gt_ranks g;
    int have_ranks = 0;
    if (rc == GT_EXIT_OK && ranks && nsums >= 2) {
        if (gt_ranks_build(&g, sums, nsums) < 0)
            rc = GT_EXIT_FAIL;
        else
            have_ranks = 1;
    }
    n = m;
    FILE *out = stdout;
    if (rc == GT_EXIT_OK && o.output && strcmp(o.output, "-") != 0 && !(out = fopen(o.output, "w"))) {
        gt_err("cannot write %s: %s", o.output, strerror(errno));
        rc = GT_EXIT_FAIL;
    }
    FILE *file = out;
    /* Names hold whatever bytes the program gave them: every format comes
     * out valid UTF-8 (base/gt_utf8.h). */
    if (rc == GT_EXIT_OK && !(out = gt_utf8_wrap(file)))
        out = file;
    if (rc == GT_EXIT_OK) {
        if (o.json) {
            if (n) {
                gt_report_json_ranks(out, v, n, have_ranks ? &g : NULL, o.a.top);
            } else {
                fputs("{\"report_version\":2,\"ranks\":", out);
                gt_ranks_json(out, &g, o.a.top);
                fputs("}\n", out);
            }
        } else if (o.html) {
            gt_html_begin(out, n == 1 ? v[0].path : "gputrace report");
            if (have_ranks)
                gt_ranks_html(out, &g);
            for (size_t i = 0; i < n; i++)
                gt_html_trace(out, v[i].path, v[i].pid, &v[i].r, &v[i].tl, &o.a, (int)i);
            gt_html_end(out);
        } else {
            if (have_ranks) {
                gt_ranks_text(out, &g, o.a.top);
                if (n)
                    fputc('\n', out);
            }
            if (n)
                gt_report_text(out, v, n, &o.a);
        }
        if (out != stdout ? fclose(out) != 0 : fflush(out) != 0) { /* the filter closes the file under it */
            gt_err("cannot write %s: %s", o.output ? o.output : "standard output", strerror(errno));
            rc = GT_EXIT_FAIL;
        }
        if (rc == GT_EXIT_OK && unreadable)
            rc = GT_EXIT_USAGE;
    }
    if (have_ranks)
        gt_ranks_free(&g);
    for (size_t i = 0; i < (size_t)(argc - optind); i++) {
        if (jobs[i].analysed) {
            gt_report_free(&jobs[i].item.r);
            gt_tl_free(&jobs[i].item.tl);
        }
        free(jobs[i].item.host);
        if (jobs[i].has_rank_sum)
            gt_rank_sum_free(&jobs[i].rank);
    }
    free(jobs);
    free(v);
    free(sums);
    return rc;
}

/* gt_cmd_audit.c: `gputrace audit`: check traces against budgets, for CI. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/gt_analyze.h"
#include "analysis/gt_budget.h"
#include "analysis/gt_ranks.h"
#include "analysis/gt_window.h"
#include "cmd/gt_cmds.h"
#include "base/gt_fmt.h"
#include "trace/gt_trace.h"

#define GT_AUDIT_MIN_GAP_NS 1000000ULL /* 1 ms, as report */

void gt_cmd_audit_usage(FILE *out)
{
    fprintf(out, "usage: gputrace audit [BUDGETS] [--budget FILE] [--min-gap DURATION]\n"
                 "                      [--from T] [--to T] [--range NAME] [--step NAME]\n"
                 "                      TRACE.db...\n"
                 "\n"
                 "Checks each trace against the budgets given, for CI gates. Only the\n"
                 "budgets given are checked, and at least one is needed. Each prints one\n"
                 "line per trace: 'ok' with the measured value and the limit, or 'FAIL'\n"
                 "with both and the worst call site. With several traces, each line starts\n"
                 "with the trace's path. Traces are opened read-only and never modified.\n"
                 "\n"
                 "budgets:\n"
                 "  --max-idle-pct P            GPU idle time, percent of the traced span\n"
                 "                              (first call to last call; all GPUs merged)\n"
                 "  --max-pageable-h2d-bytes N  bytes copied host to device from pageable\n"
                 "                              (unpinned) memory; N takes K, M, G, KiB,\n"
                 "                              MiB or GiB (all binary: 1K = 1024)\n"
                 "  --max-launch-bound-pct P    percent of kernel launches whose kernel ran\n"
                 "                              shorter than the launch call took (needs\n"
                 "                              GPU times)\n"
                 "  --max-sync-pct P            host time blocked in synchronizations\n"
                 "                              (explicit, synchronous DtoH copies and\n"
                 "                              async copies from pageable memory), percent\n"
                 "                              of the traced span\n"
                 "  --max-step-p99 DURATION     the 99th percentile of step time (steps:\n"
                 "                              NVTX ranges named step, train_step,\n"
                 "                              ProfilerStep#N..., or --step NAME)\n"
                 "  --max-idle-host-stack 'PATTERN=P'\n"
                 "                              percent of the listed gaps' idle time (gaps\n"
                 "                              of --min-gap or more) whose launching\n"
                 "                              thread's host samples match PATTERN, as the\n"
                 "                              report's 'GPU idle by host stack' names them\n"
                 "                              ('train.py:45 in __next__ (blocked in read)');\n"
                 "                              a glob if it holds * ? or [, else a\n"
                 "                              substring. Needs host samples (schema 7);\n"
                 "                              may be given up to 8 times; command line only\n"
                 "P is a number from 0 to 100 (a trailing %% is allowed). A budget fails\n"
                 "when the measured value is greater than its limit.\n"
                 "\n"
                 "budgets on the ranks of a job (two or more traces or rank summaries,\n"
                 "docs/ranks.md; one line for the whole job):\n"
                 "  --max-straggler-wait-pct P  the time the others waited for the worst\n"
                 "                              rank, per other rank, percent of the median\n"
                 "                              span\n"
                 "  --max-rank-skew-pct P       the most compute time (GPU time in kernels\n"
                 "                              other than collectives) of a rank above the\n"
                 "                              median rank's, percent of the median\n"
                 "These two take any percent from 0 up (a rank may compute twice as long).\n"
                 "With only these, the inputs may be .summary.json files (gputrace\n"
                 "summarize) and traces of processes that did not finish are compared too.\n"
                 "\n"
                 "options:\n"
                 "  --budget FILE        read budgets from FILE; budgets given on the\n"
                 "                       command line override the file's\n"
                 "  --from T, --to T, --range NAME\n"
                 "                       measure every budget in a window only, as report\n"
                 "                       reads it (T: a time from the trace's start or\n"
                 "                       step:N; NAME: NVTX ranges, a glob): e.g. --range\n"
                 "                       data --max-idle-pct 30 is a budget for the data\n"
                 "                       phase (docs/report.md, Windows)\n"
                 "  --step NAME          step ranges are the ranges NAME matches (a glob)\n"
                 "  --min-gap DURATION   shortest idle gap considered when naming the worst\n"
                 "                       site of max-idle-pct (default 1ms; ns, us, ms or\n"
                 "                       s; a bare number is ns)\n"
                 "  -h, --help           show this help\n"
                 "\n"
                 "budget file: one 'KEY = VALUE' per line, KEY a budget name without the\n"
                 "dashes; '#' starts a comment; blank lines are ignored. For example:\n"
                 "  # CI budgets for the training step\n"
                 "  max-idle-pct = 20\n"
                 "  max-pageable-h2d-bytes = 64MiB\n"
                 "  max-straggler-wait-pct = 5     # the job budgets have keys too\n"
                 "An unknown key, a bad value or a key given twice is an error (status 2).\n"
                 "\n"
                 "against a baseline (docs/diff.md):\n"
                 "  gputrace audit --baseline BASE.db... [--max-regression-pct P]\n"
                 "      [--max-new-pageable-h2d-bytes N] [--max-new-sync-sites N] NEW.db...\n"
                 "  compares like with like (a kernel's GPU time and launches per run, or\n"
                 "  per step with NVTX steps, and its mean per launch; a site's calls and\n"
                 "  time per call; GPU idle time), never per second of span; fails (1) on\n"
                 "  a figure that rose beyond noise by more than P%%, more than N pageable\n"
                 "  H2D bytes at new sites (mean per NEW trace), or more than N new sync\n"
                 "  sites; one line per budget; 2 when a side holds no GPU work, most of its\n"
                 "  calls failed, a trace did not finish, or, without steps, NEW launched\n"
                 "  under half BASE's kernels for under half its kernel time.\n"
                 "\n"
                 "exit status: 0 if every budget holds in every trace; 1 if any budget is\n"
                 "exceeded; 2 on a usage error, a bad budget file, or a trace that is\n"
                 "missing, unreadable, not a gputrace trace, from a newer gputrace, holds\n"
                 "no CUDA calls, was left by a process that did not finish, or lacks what a\n"
                 "budget needs (the other traces are still checked).\n");
}

/* The innermost user frame of a site, printable. */
static void gt_put_site(const struct gt_site *s)
{
    gt_put_text(stdout, s->nframes ? s->frames[0] : "(no stack)", 0);
}

/* A percent to compare with `limit`, with enough decimals that the printed
 * numbers agree with the verdict (20.04 > 20 prints as 20.04, not 20.0). */
static const char *gt_fmt_pct(double v, double limit, char *buf, size_t len)
{
    for (int prec = 1; prec <= 6; prec++) {
        snprintf(buf, len, "%.*f%%", prec, v);
        double shown = strtod(buf, NULL);
        if ((v > limit) == (shown > limit))
            break;
    }
    return buf;
}

static const char *gt_fmt_exact_bytes(uint64_t n, char *buf, size_t len)
{
    char h[32];
    if (n < 1024)
        snprintf(buf, len, "%llu B", (unsigned long long)n);
    else
        snprintf(buf, len, "%llu B (%s)", (unsigned long long)n, gt_fmt_ubytes(n, h, sizeof(h)));
    return buf;
}

static void gt_verdict(const char *prefix, int fail, int key)
{
    if (prefix) {
        gt_put_text(stdout, prefix, 0);
        fputs(": ", stdout);
    }
    printf("%s %s: ", fail ? "FAIL" : "ok  ", gt_budget_names[key]);
}

/* max-step-p99: the steps' p99 (docs/report.md, Steps); when it fails,
 * the slowest step and what it spent more time on than the median step. */
static int gt_check_steps(const char *prefix, const char *path, const struct gt_budgets *b, const struct gt_report *r)
{
    const struct gt_steps *st = &r->steps;
    char v[32], l[32], d[32];
    if (!st->count) {
        gt_err("%s: max-step-p99 needs steps (NVTX ranges named like step, train_step or ProfilerStep#N, or "
               "--step NAME), which this trace%s does not have",
               path, r->windowed ? "'s window" : "");
        return 2;
    }
    int fail = st->p99_ns > b->ns;
    gt_verdict(prefix, fail, GT_BUDGET_STEP_P99);
    printf("%s %s %s (%llu steps)", gt_fmt_duration((int64_t)st->p99_ns, v, sizeof(v)), fail ? ">" : "<=",
           gt_fmt_duration((int64_t)b->ns, l, sizeof(l)), (unsigned long long)st->count);
    if (fail && st->nslowest) {
        const struct gt_step_row *x = &st->slowest[0];
        printf(" (slowest: step %lld, %s", (long long)x->number, gt_fmt_duration((int64_t)x->dur_ns, d, sizeof(d)));
        if (x->nover) {
            const struct gt_step_over *o = &x->over[0];
            printf(": +%s %s", gt_fmt_duration((int64_t)(o->ns - o->median_ns), v, sizeof(v)),
                   o->what < GT_CAUSES ? gt_cause_text[o->what]
                   : o->what == GT_STEP_SYNCS ? "host time in syncs" : "host time in copy calls");
            if (o->has_site) {
                printf(" at ");
                gt_put_site(&o->site);
            }
        }
        putchar(')');
    }
    putchar('\n');
    return fail;
}

/* Checks one budget; returns 1 if it is exceeded, 0 if it holds, 2 if the
 * trace cannot tell. */
static int gt_check(const char *prefix, const char *path, int key, const struct gt_budgets *b,
                    const struct gt_report *r, uint64_t min_gap_ns)
{
    const struct gt_summary *s = &r->summary;
    char v[64], l[64], d[64];
    if (key == GT_BUDGET_PAGEABLE_H2D_BYTES) {
        int fail = s->pageable_h2d_bytes > b->bytes;
        gt_verdict(prefix, fail, key);
        printf("%s %s ", gt_fmt_exact_bytes(s->pageable_h2d_bytes, v, sizeof(v)), fail ? ">" : "<=");
        printf("%s", gt_fmt_exact_bytes(b->bytes, l, sizeof(l)));
        if (fail) {
            const struct gt_h2d_row *w = NULL;
            for (size_t i = 0; i < r->nh2d; i++)
                if (r->h2d[i].pageable_bytes && (!w || r->h2d[i].pageable_bytes > w->pageable_bytes))
                    w = &r->h2d[i];
            if (w) {
                printf(" (worst: ");
                gt_put_site(&w->site);
                printf(", %s pageable in %llu cop%s)", gt_fmt_bytes((int64_t)w->pageable_bytes, d, sizeof(d)),
                       (unsigned long long)w->count, w->count == 1 ? "y" : "ies");
            }
        }
        putchar('\n');
        return fail;
    }

    if (key == GT_BUDGET_STEP_P99)
        return gt_check_steps(prefix, path, b, r);
    double measured = key == GT_BUDGET_IDLE_PCT           ? s->idle_pct
                      : key == GT_BUDGET_LAUNCH_BOUND_PCT ? s->launch_bound_pct
                                                          : s->sync_pct;
    double limit = b->pct[key];
    if (key == GT_BUDGET_LAUNCH_BOUND_PCT && !s->gpu_times && s->launches) {
        gt_err("%s: max-launch-bound-pct needs GPU-side kernel times, which this trace does not have "
               "(recorded without CUPTI)",
               path);
        return 2;
    }
    int fail = measured > limit;
    gt_verdict(prefix, fail, key);
    printf("%s %s %g%%", gt_fmt_pct(measured, limit, v, sizeof(v)), fail ? ">" : "<=", limit);
    if (fail && key == GT_BUDGET_IDLE_PCT) {
        if (!s->busy_ns) {
            printf(" (the GPU ran no work in this trace)");
        } else if (!r->ngaps) {
            printf(" (no single idle gap of %s or more)", gt_fmt_duration((int64_t)min_gap_ns, d, sizeof(d)));
        } else {
            const struct gt_gap *g = &r->gaps[0];
            printf(" (worst: ");
            if (g->has_after)
                gt_put_site(&g->after);
            else
                printf("the end of the run");
            printf(", %s idle before its GPU work, %s)", gt_fmt_duration((int64_t)g->dur_ns, d, sizeof(d)),
                   gt_cause_text[g->cause]);
        }
    } else if (fail && key == GT_BUDGET_LAUNCH_BOUND_PCT) {
        const struct gt_launch_row *w = NULL;
        for (size_t i = 0; i < r->nlaunch_sites; i++)
            if (r->launch_sites[i].launch_bound && (!w || r->launch_sites[i].launch_bound > w->launch_bound))
                w = &r->launch_sites[i];
        if (w) {
            printf(" (worst: ");
            gt_put_site(&w->site);
            printf(", %llu of %llu launches launch-bound)", (unsigned long long)w->launch_bound,
                   (unsigned long long)w->count);
        }
    } else if (fail && key == GT_BUDGET_SYNC_PCT) {
        const struct gt_sync_row *w = NULL;
        for (size_t i = 0; i < r->nsyncs; i++)
            if (!w || r->syncs[i].blocked_ns > w->blocked_ns)
                w = &r->syncs[i];
        if (w) {
            printf(" (worst: ");
            gt_put_site(&w->site);
            printf(", %s blocked in %llu ", gt_fmt_duration((int64_t)w->blocked_ns, d, sizeof(d)),
                   (unsigned long long)w->count);
            gt_put_text(stdout, w->kind, 0);
            printf(" sync%s)", w->count == 1 ? "" : "s");
        }
    }
    putchar('\n');
    return fail;
}

/* --max-idle-host-stack 'PATTERN=P' */
#define GT_MAX_HOST_BUDGETS 8
struct gt_host_budget {
    char pattern[256];
    double pct;
};
static struct gt_host_budget gt_host_budgets[GT_MAX_HOST_BUDGETS];
static int gt_nhost_budgets;

static int gt_host_budget_parse(const char *v, char *err, size_t len)
{
    const char *eq = strrchr(v, '=');
    if (!eq || eq == v) {
        snprintf(err, len, "max-idle-host-stack: '%s' is not PATTERN=P (e.g. 'in __next__=20')", v);
        return -1;
    }
    if (gt_nhost_budgets == GT_MAX_HOST_BUDGETS) {
        snprintf(err, len, "max-idle-host-stack: at most %d may be given", GT_MAX_HOST_BUDGETS);
        return -1;
    }
    if ((size_t)(eq - v) >= sizeof(gt_host_budgets[0].pattern)) {
        snprintf(err, len, "max-idle-host-stack: the pattern is longer than 255 bytes");
        return -1;
    }
    struct gt_budgets tmp;
    memset(&tmp, 0, sizeof(tmp));
    char e2[256];
    if (gt_budget_set(&tmp, "max-idle-pct", eq + 1, e2, sizeof(e2)) < 0) {
        snprintf(err, len, "max-idle-host-stack: '%s' is not a percent from 0 to 100", eq + 1);
        return -1;
    }
    struct gt_host_budget *h = &gt_host_budgets[gt_nhost_budgets++];
    memcpy(h->pattern, v, (size_t)(eq - v));
    h->pattern[eq - v] = 0;
    h->pct = tmp.pct[GT_BUDGET_IDLE_PCT];
    return 0;
}

/* 1 exceeded, 0 holds, 2 the trace cannot tell. */
static int gt_check_host(const char *prefix, const char *path, const struct gt_host_budget *h,
                         const struct gt_report *r)
{
    if (!r->has_samples) {
        gt_err("%s: max-idle-host-stack needs host samples, which this trace does not have (schema 7, "
               "GPUTRACE_SAMPLE_HZ above 0)",
               path);
        return 2;
    }
    uint64_t idle;
    double v = gt_host_stack_pct(r, h->pattern, &idle);
    int fail = v > h->pct;
    char a[64], d1[32], d2[32];
    if (prefix) {
        gt_put_text(stdout, prefix, 0);
        fputs(": ", stdout);
    }
    printf("%s max-idle-host-stack '", fail ? "FAIL" : "ok  ");
    gt_put_text(stdout, h->pattern, 0);
    printf("': %s %s %g%% (%s of %s idle in listed gaps)\n", gt_fmt_pct(v, h->pct, a, sizeof(a)),
           fail ? ">" : "<=", h->pct, gt_fmt_duration((int64_t)idle, d1, sizeof(d1)),
           gt_fmt_duration((int64_t)r->host_idle_ns, d2, sizeof(d2)));
    return fail;
}

/* Audits one trace. Returns the exit status it earns. */
static int gt_audit_one(const char *path, const char *prefix, const struct gt_budgets *b, uint64_t min_gap_ns,
                        const struct gt_window_spec *ws, int64_t origin)
{
    struct gt_trace t;
    int rc = gt_trace_open(&t, path);
    if (rc)
        return GT_EXIT_USAGE;
    int status = GT_EXIT_OK;
    int64_t calls = 0;
    if (gt_trace_meta_int(&t, "complete", 0) != 1) {
        gt_err("%s: the traced process did not finish; audit needs a complete trace", path);
        status = GT_EXIT_USAGE;
    } else if (gt_trace_int(&t, "SELECT count(*) FROM calls", &calls) < 0) {
        status = GT_EXIT_USAGE;
    } else if (calls == 0) {
        gt_err("%s: the trace holds no CUDA calls; there is nothing to audit", path);
        status = GT_EXIT_USAGE;
    }
    if (status != GT_EXIT_OK) {
        gt_trace_close(&t);
        return status;
    }

    struct gt_analyze_opts o = {.min_gap_ns = min_gap_ns, .top = 0, .step_glob = ws->step_glob,
                                .win_origin = origin};
    struct gt_window win = {0};
    if (gt_window_on(ws)) {
        /* every budget is measured in the window (docs/audit.md) */
        if (gt_window_resolve(&t, ws, origin, &win) < 0) {
            gt_trace_close(&t);
            return GT_EXIT_USAGE;
        }
        o.win = &win;
    }
    struct gt_report r;
    int arc = gt_analyze(&t, &o, &r);
    gt_window_free(&win);
    if (arc < 0) {
        gt_trace_close(&t);
        return GT_EXIT_USAGE;
    }
    if (!r.summary.gpu_times && b->set[GT_BUDGET_IDLE_PCT])
        gt_err("%s: note: no GPU-side times in this trace; idle time is estimated from host-side call times",
               path);
    for (int k = 0; k < GT_NBUDGETS; k++) {
        if (!b->set[k] || gt_budget_is_rank(k))
            continue; /* the job budgets: once over the ranks, gt_audit_ranks */
        int v = gt_check(prefix, path, k, b, &r, min_gap_ns);
        if (v == 2)
            status = GT_EXIT_USAGE;
        else if (v == 1 && status == GT_EXIT_OK)
            status = GT_EXIT_FAIL;
    }
    for (int k = 0; k < gt_nhost_budgets; k++) {
        int v = gt_check_host(prefix, path, &gt_host_budgets[k], &r);
        if (v == 2)
            status = GT_EXIT_USAGE;
        else if (v == 1 && status == GT_EXIT_OK)
            status = GT_EXIT_FAIL;
    }
    fflush(stdout);
    gt_report_free(&r);
    gt_trace_close(&t);
    return status;
}

/* The job budgets: one line each. Returns the exit status. */
static int gt_audit_ranks(char **paths, int n, const struct gt_budgets *b, const char *step_glob)
{
    static const int keys[2] = {GT_BUDGET_STRAGGLER_WAIT_PCT, GT_BUDGET_RANK_SKEW_PCT};
    /* the default collectives; collectives matched by the steps --step names */
    struct gt_rank_patterns pat = {.n = 0, .step_glob = step_glob};
    if (n < 2) {
        gt_err("the rank budgets compare the ranks of a job: give two or more traces or summaries");
        return GT_EXIT_USAGE;
    }
    struct gt_rank_sum *sums = calloc((size_t)n, sizeof(*sums));
    if (!sums)
        return GT_EXIT_FAIL;
    int status = GT_EXIT_OK, m = 0;
    for (int i = 0; i < n; i++) {
        if (gt_rank_is_summary_path(paths[i])) {
            if (gt_rank_sum_load(paths[i], &sums[m]) < 0) {
                status = GT_EXIT_USAGE;
                continue;
            }
        } else {
            struct gt_trace t;
            if (gt_trace_open(&t, paths[i]) != 0) {
                status = GT_EXIT_USAGE;
                continue;
            }
            int rc = gt_rank_sum_from_trace(&t, &pat, &sums[m]);
            gt_trace_close(&t);
            if (rc < 0) {
                status = GT_EXIT_USAGE;
                continue;
            }
        }
        if (!sums[m].complete)
            gt_err("%s: note: the traced process did not finish; compared as far as its trace goes", paths[i]);
        m++;
    }
    struct gt_ranks g;
    if (status == GT_EXIT_OK && gt_ranks_build(&g, sums, (size_t)m) < 0)
        status = GT_EXIT_FAIL;
    if (status == GT_EXIT_OK) {
        char v[64], d[64];
        for (int k = 0; k < 2; k++) {
            if (!b->set[keys[k]])
                continue;
            double measured = k == 0 ? g.straggler_wait_pct : g.skew_pct, limit = b->pct[keys[k]];
            int fail = measured > limit;
            printf("%s %s: %s %s %g%%", fail ? "FAIL" : "ok  ", gt_budget_names[keys[k]],
                   gt_fmt_pct(measured, limit, v, sizeof(v)), fail ? ">" : "<=", limit);
            /* the rank that set the figure */
            size_t top = 0;
            for (size_t i = 1; i < g.nrows; i++) {
                int f = k == 0 ? GT_RF_CAUSED_WAIT : GT_RF_COMPUTE;
                if (g.rows[i].fig[f] > g.rows[top].fig[f])
                    top = i;
            }
            if (g.nrows) {
                const struct gt_rank_row *r = &g.rows[top];
                printf(" (%s%s", r->sum->has_rank ? "rank " : "", r->sum->rank);
                if (k == 0 && r->worst_coll != SIZE_MAX) {
                    const struct gt_rank_match *c = &g.colls[r->worst_coll];
                    printf(", worst at collective %u:%u", c->stream, c->ordinal);
                    if (c->where.index >= 0) {
                        fputs(" in NVTX range '", stdout);
                        gt_put_text(stdout, c->where.range, 60);
                        printf("' #%lld", (long long)c->where.index);
                    }
                    printf(", %s late", gt_fmt_duration((int64_t)c->late_ns, d, sizeof(d)));
                }
                putchar(')');
            }
            putchar('\n');
            if (fail)
                status = GT_EXIT_FAIL;
        }
        gt_ranks_free(&g);
    }
    for (int i = 0; i < m; i++)
        gt_rank_sum_free(&sums[i]);
    free(sums);
    fflush(stdout);
    return status;
}

/* The value of option `name` at argv[*i], given as "--name V" or
 * "--name=V"; NULL if argv[*i] is not that option. Sets *missing when the
 * value is absent. */
static const char *gt_opt_value(int argc, char **argv, int *i, const char *name, int *missing)
{
    const char *a = argv[*i] + 2;
    size_t n = strlen(name);
    if (strncmp(a, name, n) != 0)
        return NULL;
    if (a[n] == '=')
        return a + n + 1;
    if (a[n])
        return NULL;
    if (*i + 1 >= argc) {
        *missing = 1;
        return "";
    }
    return argv[++*i];
}

int gt_cmd_audit(int argc, char **argv)
{
    struct gt_budgets cli, all;
    memset(&cli, 0, sizeof(cli));
    memset(&all, 0, sizeof(all));
    const char *budget_file = NULL;
    uint64_t min_gap_ns = GT_AUDIT_MIN_GAP_NS;
    struct gt_window_spec ws = {0};
    char err[512];
    for (int j = 1; j < argc && strcmp(argv[j], "--") != 0; j++)
        if (strcmp(argv[j], "--baseline") == 0)
            return gt_cmd_audit_baseline(argc, argv); /* budgets on change: docs/diff.md */
    int i = 1;
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0) {
            i++;
            break;
        }
        if (a[0] != '-' || a[1] == 0)
            break;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            gt_cmd_audit_usage(stdout);
            return GT_EXIT_OK;
        }
        int missing = 0, known = 0;
        const char *v;
        if (a[1] == '-') {
            for (int k = 0; k < GT_NBUDGETS && !known; k++) {
                if (!(v = gt_opt_value(argc, argv, &i, gt_budget_names[k], &missing)))
                    continue;
                known = 1;
                if (missing)
                    return gt_usage_error("audit", "option '--%s' needs a value", gt_budget_names[k]);
                if (gt_budget_set(&cli, gt_budget_names[k], v, err, sizeof(err)) < 0)
                    return gt_usage_error("audit", "--%s", err);
            }
            if (!known && (v = gt_opt_value(argc, argv, &i, "max-idle-host-stack", &missing))) {
                known = 1;
                if (missing)
                    return gt_usage_error("audit", "option '--max-idle-host-stack' needs PATTERN=P");
                if (gt_host_budget_parse(v, err, sizeof(err)) < 0)
                    return gt_usage_error("audit", "--%s", err);
            }
            if (!known && (v = gt_opt_value(argc, argv, &i, "budget", &missing))) {
                known = 1;
                if (missing || !*v)
                    return gt_usage_error("audit", "option '--budget' needs a file");
                budget_file = v;
            }
            static const char *const wopts[4] = {"from", "to", "range", "step"};
            for (int k = 0; k < 4 && !known; k++) {
                if (!(v = gt_opt_value(argc, argv, &i, wopts[k], &missing)))
                    continue;
                known = 1;
                if (missing)
                    return gt_usage_error("audit", "option '--%s' needs a value", wopts[k]);
                if (k == 3 && !*v)
                    return gt_usage_error("audit", "--step needs a range name (a glob such as 'iter*')");
                *(k == 0 ? &ws.from : k == 1 ? &ws.to : k == 2 ? &ws.range : &ws.step_glob) = v;
            }
            if (!known && (v = gt_opt_value(argc, argv, &i, "min-gap", &missing))) {
                known = 1;
                if (missing)
                    return gt_usage_error("audit", "option '--min-gap' needs a duration");
                if (gt_parse_duration(v, &min_gap_ns) < 0)
                    return gt_usage_error("audit", "--min-gap: '%s' is not a duration (e.g. 500us, 1ms, 0.5s)",
                                          v);
            }
        }
        if (!known)
            return gt_usage_error("audit", "unknown option '%s'", a);
    }
    if (budget_file && gt_budget_load(&all, budget_file, err, sizeof(err)) < 0) {
        gt_err("%s", err);
        return GT_EXIT_USAGE;
    }
    gt_budget_merge(&all, &cli);
    /* the job budgets are checked once over every input together; the
     * others per trace */
    int ranks = all.set[GT_BUDGET_STRAGGLER_WAIT_PCT] || all.set[GT_BUDGET_RANK_SKEW_PCT];
    if (!gt_budget_count(&all) && !gt_nhost_budgets)
        return gt_usage_error("audit", "no budget given (e.g. --max-idle-pct 20, or --budget FILE)");
    if (i >= argc)
        return gt_usage_error("audit", "no trace file given");
    if (!gt_budget_count_per_trace(&all) && !gt_nhost_budgets)
        return gt_audit_ranks(argv + i, argc - i, &all, ws.step_glob);
    for (int j = i; j < argc; j++)
        if (gt_rank_is_summary_path(argv[j]))
            return gt_usage_error("audit", "%s: a rank summary takes only the rank budgets "
                                  "(--max-straggler-wait-pct, --max-rank-skew-pct)", argv[j]);

    if (gt_window_check(&ws, "audit") < 0)
        return GT_EXIT_USAGE;
    int64_t origin = gt_window_origin(argv + i, argc - i, &ws);
    int status = GT_EXIT_OK, several = argc - i > 1;
    int first = i;
    for (; i < argc; i++) {
        int rc = gt_audit_one(argv[i], several ? argv[i] : NULL, &all, min_gap_ns, &ws, origin);
        if (rc > status)
            status = rc;
    }
    if (ranks) {
        int rc = gt_audit_ranks(argv + first, argc - first, &all, ws.step_glob);
        if (rc > status)
            status = rc;
    }
    return status;
}

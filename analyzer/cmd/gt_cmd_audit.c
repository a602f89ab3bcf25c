/* gt_cmd_audit.c: `gputrace audit`: check traces against budgets, for CI. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/gt_analyze.h"
#include "analysis/gt_budget.h"
#include "cmd/gt_cmds.h"
#include "base/gt_fmt.h"
#include "trace/gt_trace.h"

#define GT_AUDIT_MIN_GAP_NS 1000000ULL /* 1 ms, as report */

void gt_cmd_audit_usage(FILE *out)
{
    fprintf(out, "usage: gputrace audit [BUDGETS] [--budget FILE] [--min-gap DURATION]\n"
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
                 "options:\n"
                 "  --budget FILE        read budgets from FILE; budgets given on the\n"
                 "                       command line override the file's\n"
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
                 "An unknown key, a bad value or a key given twice is an error (status 2).\n"
                 "\n"
                 "against a baseline (docs/diff.md):\n"
                 "  gputrace audit --baseline BASE.db... [--max-regression-pct P]\n"
                 "      [--max-new-pageable-h2d-bytes N] [--max-new-sync-sites N] NEW.db...\n"
                 "  fails (1) on a figure or kernel that rose beyond noise by more than P%%,\n"
                 "  more than N pageable H2D bytes at new sites (mean per NEW trace), or\n"
                 "  more than N new sync sites; 2 when a side holds no GPU work, most of its\n"
                 "  calls failed, a trace did not finish, or NEW's mean span is under half\n"
                 "  BASE's.\n"
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
        snprintf(buf, len, "%llu B (%s)", (unsigned long long)n, gt_fmt_bytes((int64_t)n, h, sizeof(h)));
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
static int gt_audit_one(const char *path, const char *prefix, const struct gt_budgets *b, uint64_t min_gap_ns)
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

    struct gt_analyze_opts o = {.min_gap_ns = min_gap_ns, .top = 0};
    struct gt_report r;
    if (gt_analyze(&t, &o, &r) < 0) {
        gt_trace_close(&t);
        return GT_EXIT_USAGE;
    }
    if (!r.summary.gpu_times && b->set[GT_BUDGET_IDLE_PCT])
        gt_err("%s: note: no GPU-side times in this trace; idle time is estimated from host-side call times",
               path);
    for (int k = 0; k < GT_NBUDGETS; k++) {
        if (!b->set[k])
            continue;
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
    if (!gt_budget_count(&all) && !gt_nhost_budgets)
        return gt_usage_error("audit", "no budget given (e.g. --max-idle-pct 20, or --budget FILE)");
    if (i >= argc)
        return gt_usage_error("audit", "no trace file given");

    int status = GT_EXIT_OK, several = argc - i > 1;
    for (; i < argc; i++) {
        int rc = gt_audit_one(argv[i], several ? argv[i] : NULL, &all, min_gap_ns);
        if (rc > status)
            status = rc;
    }
    return status;
}

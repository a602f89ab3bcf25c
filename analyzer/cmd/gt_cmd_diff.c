/* gt_cmd_diff.c: `gputrace diff BASE.db... --vs NEW.db...` and
 * `gputrace audit --baseline BASE.db... [BUDGETS] NEW.db...` (docs/diff.md). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/gt_budget.h"
#include "analysis/gt_diff.h"
#include "base/gt_fmt.h"
#include "base/gt_out.h"
#include "cmd/gt_cmds.h"
#include "output/gt_diff_out.h"

void gt_cmd_diff_usage(FILE *out)
{
    fprintf(out, "usage: gputrace diff [--format text|json|html] [-o FILE] [--all] BASE.db... --vs NEW.db...\n"
                 "       gputrace diff [OPTIONS] BASE.db NEW.db\n"
                 "\n"
                 "Compares the traces before a change (BASE) with those after it (NEW),\n"
                 "like with like: each kernel by its GPU time, its launches and its mean\n"
                 "per launch; each launch, pageable H2D and sync site by its calls and its\n"
                 "time (or bytes) per call; the GPU's busy and idle time as shares of the\n"
                 "span; idle by cause, pageable H2D bytes and sync time in all; host time\n"
                 "per launch; each kind of work (kernel categories, as report's; a user's\n"
                 "rules from $GPUTRACE_CATEGORIES) by its GPU time and operations, shown,\n"
                 "not gated; the span itself. Totals and counts are per step when every\n"
                 "trace has steps (NVTX ranges named like train_step, as report's steps\n"
                 "section finds them; then idle per step too), else per run: a change that\n"
                 "only makes a run shorter moves none of them. Several traces a side\n"
                 "(repeats, ranks) are averaged; their spread is the noise. Sites are\n"
                 "matched by their text without +0x offsets, so two builds compare. A\n"
                 "change is shown only when it is over 10%% of the base, when what it\n"
                 "costs over a run (a step) is over 1%% of the base's span (step), 64 KiB\n"
                 "a second of it for bytes, 1 point for shares, 10ms for once-a-run\n"
                 "figures, and, with 2 or more traces a side, over 3 times the larger\n"
                 "spread between a side's repeats. Sites found on one side only are listed\n"
                 "as new or vanished. Two traces without --vs are BASE and NEW.\n"
                 "See docs/diff.md.\n"
                 "\n"
                 "options:\n"
                 "  --vs            ends the BASE traces; the NEW ones follow\n"
                 "  --format F      text (default), json (every row, docs/diff.md) or html\n"
                 "                  (one self-contained page, BASE and NEW side by side)\n"
                 "  -o, --output FILE  write there (default: standard output; .gz: compressed)\n"
                 "  --all           text: also list the figures within noise\n"
                 "  -h, --help      show this help\n"
                 "\n"
                 "exit status: 0 on a comparison made; 2 on a usage error or a trace that\n"
                 "cannot be read.\n");
}

int gt_cmd_diff(int argc, char **argv)
{
    int fmt = 0, all = 0, vs = -1; /* fmt: 0 text, 1 json, 2 html */
    const char *output = NULL;
    char **base = calloc((size_t)argc, sizeof(char *)), **newp = calloc((size_t)argc, sizeof(char *));
    int nbase = 0, nnew = 0;
    if (!base || !newp) {
        free(base);
        free(newp);
        gt_err("diff: out of memory");
        return GT_EXIT_USAGE;
    }
    int rc = GT_EXIT_USAGE;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            gt_cmd_diff_usage(stdout);
            rc = GT_EXIT_OK;
            goto done;
        } else if (strcmp(a, "--vs") == 0) {
            if (vs >= 0) {
                gt_usage_error("diff", "'--vs' given twice");
                goto done;
            }
            vs = i;
        } else if (strcmp(a, "--all") == 0) {
            all = 1;
        } else if (strcmp(a, "--format") == 0 || strncmp(a, "--format=", 9) == 0) {
            const char *v = a[8] == '=' ? a + 9 : (i + 1 < argc ? argv[++i] : "");
            if (strcmp(v, "json") == 0)
                fmt = 1;
            else if (strcmp(v, "html") == 0)
                fmt = 2;
            else if (strcmp(v, "text") == 0)
                fmt = 0;
            else {
                gt_usage_error("diff", "--format: '%s' is not text, json or html", v);
                goto done;
            }
        } else if (strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0 || strncmp(a, "--output=", 9) == 0) {
            output = a[8] == '=' ? a + 9 : (i + 1 < argc ? argv[++i] : "");
            if (!*output) {
                gt_usage_error("diff", "%s needs a file name", a);
                goto done;
            }
        } else if (a[0] == '-' && a[1]) {
            gt_usage_error("diff", "unknown option '%s'", a);
            goto done;
        } else if (vs < 0) {
            base[nbase++] = argv[i];
        } else {
            newp[nnew++] = argv[i];
        }
    }
    if (vs < 0 && nbase == 2) { /* `gputrace diff A.db B.db`: the first is BASE */
        newp[nnew++] = base[--nbase];
        vs = 0;
    }
    if (vs < 0 || !nbase || !nnew) {
        gt_usage_error("diff", "needs BASE traces, then --vs, then NEW traces (e.g. gputrace diff a.db --vs b.db, "
                               "or gputrace diff a.db b.db)");
        goto done;
    }
    struct gt_diff d;
    if (gt_diff_build(&d, base, nbase, newp, nnew) < 0)
        goto done;
    if (!output)
        output = "-";
    FILE *out = gt_out_open(output);
    if (!out) {
        gt_diff_free(&d);
        goto done;
    }
    if (fmt == 1)
        gt_diff_json(out, &d);
    else if (fmt == 2)
        gt_diff_html(out, &d);
    else
        gt_diff_text(out, &d, all);
    gt_diff_free(&d);
    if (gt_out_close(out, output, ferror(out) ? EIO : 0) < 0)
        goto done;
    rc = GT_EXIT_OK;
done:
    free(base);
    free(newp);
    return rc;
}

/* Whether a side can be judged at all; prints why not. */
static int gt_side_ok(const struct gt_diff *d, int s)
{
    const char *side = s ? "NEW" : "BASE";
    if (d->incomplete[s]) {
        gt_err("audit --baseline: %d %s trace(s) left by a process that did not finish", d->incomplete[s], side);
        return 0;
    }
    if (!d->busy_ns[s]) {
        gt_err("audit --baseline: the %s traces hold no GPU work; a gate cannot pass on nothing", side);
        return 0;
    }
    if (d->failed[s] * 2 > d->calls[s]) {
        gt_err("audit --baseline: most CUDA calls of the %s traces failed (%llu of %llu)", side,
               (unsigned long long)d->failed[s], (unsigned long long)d->calls[s]);
        return 0;
    }
    return 1;
}

int gt_cmd_audit_baseline(int argc, char **argv)
{
    char **base = calloc((size_t)argc, sizeof(char *)), **newp = calloc((size_t)argc, sizeof(char *));
    int nbase = 0, nnew = 0, in_base = 0, nbudgets = 0, rc = GT_EXIT_USAGE;
    double max_pct = -1;
    uint64_t max_bytes = 0;
    long max_sites = -1;
    int have_bytes = 0;
    if (!base || !newp)
        goto done;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--baseline") == 0) {
            in_base = 1;
            continue;
        }
        if (a[0] == '-' && a[1]) {
            in_base = 0;
            if (!v) {
                gt_usage_error("audit", "option '%s' needs a value", a);
                goto done;
            }
            char *end;
            if (strcmp(a, "--max-regression-pct") == 0) {
                max_pct = strtod(v, &end);
                if (end == v || (*end && strcmp(end, "%") != 0) || max_pct < 0) {
                    gt_usage_error("audit", "--max-regression-pct: '%s' is not a percent", v);
                    goto done;
                }
            } else if (strcmp(a, "--max-new-pageable-h2d-bytes") == 0) {
                if (gt_parse_bytes(v, &max_bytes) < 0) {
                    gt_usage_error("audit", "--max-new-pageable-h2d-bytes: '%s' is not a size", v);
                    goto done;
                }
                have_bytes = 1;
            } else if (strcmp(a, "--max-new-sync-sites") == 0) {
                max_sites = strtol(v, &end, 10);
                if (end == v || *end || max_sites < 0) {
                    gt_usage_error("audit", "--max-new-sync-sites: '%s' is not a count", v);
                    goto done;
                }
            } else {
                gt_usage_error("audit", "option '%s' is not one of --baseline's budgets", a);
                goto done;
            }
            nbudgets++;
            i++;
            continue;
        }
        if (in_base)
            base[nbase++] = argv[i];
        else
            newp[nnew++] = argv[i];
    }
    if (!nbudgets) {
        gt_usage_error("audit", "--baseline needs a budget (--max-regression-pct, --max-new-pageable-h2d-bytes "
                                "or --max-new-sync-sites)");
        goto done;
    }
    if (!nbase || !nnew) {
        gt_usage_error("audit", "needs --baseline BASE.db..., budgets, then NEW.db...");
        goto done;
    }
    struct gt_diff d;
    if (gt_diff_build(&d, base, nbase, newp, nnew) < 0)
        goto done;
    if (!gt_side_ok(&d, 0) || !gt_side_ok(&d, 1)) {
        gt_diff_free(&d);
        goto done;
    }
    /* Without steps, totals and counts are per run: a NEW run with under
     * half the BASE's kernel launches and under half its kernel time was
     * cut short (or is another workload), and would pass every budget on
     * less work. Its span alone says nothing (an improvement shortens
     * it), nor one of the two (fused kernels launch less, faster ones
     * take less time). */
    double nb = d.ntraces[0], nn = d.ntraces[1];
    if (!d.per_step && d.launches[1] / nn * 2 < d.launches[0] / nb && d.kernel_ns[1] / nn * 2 < d.kernel_ns[0] / nb) {
        char a[32], b[32];
        gt_err("audit --baseline: the NEW traces launched under half the baseline's kernels per run (%.0f, %.0f) "
               "for under half its kernel time (%s, %s); too short to judge (record NVTX steps to compare runs "
               "of different length step for step)",
               d.launches[1] / nn, d.launches[0] / nb, gt_fmt_duration((int64_t)(d.kernel_ns[1] / nn), a, sizeof(a)),
               gt_fmt_duration((int64_t)(d.kernel_ns[0] / nb), b, sizeof(b)));
        gt_diff_free(&d);
        goto done;
    }
    rc = GT_EXIT_OK;
    double new_bytes = 0;
    long new_sites = 0;
    int regressed = 0, idle_rose = 0;
    /* Idle moves between causes when its cause goes (the wait for a
     * copy removed becomes a wait for the host): a cause is a regression
     * only when the idle time in all rose too. */
    for (size_t i = 0; i < d.nrows; i++)
        idle_rose |= d.rows[i].cat == GT_DC_SUMMARY && d.rows[i].measure == GT_DM_TOTAL &&
                     strcmp(d.rows[i].name, "gpu_idle") == 0 && d.rows[i].status == GT_DS_CHANGED &&
                     d.rows[i].mean[1] > d.rows[i].mean[0];
    for (size_t i = 0; i < d.nrows; i++) {
        const struct gt_diff_row *r = &d.rows[i];
        /* one row per new site: its calls (raw: its bytes, mean per trace) */
        if (r->cat == GT_DC_H2D && r->measure == GT_DM_COUNT && r->status == GT_DS_NEW)
            new_bytes += r->raw[1];
        if (r->cat == GT_DC_SYNC && r->measure == GT_DM_COUNT && r->status == GT_DS_NEW) {
            new_sites++;
            if (max_sites >= 0) {
                printf("new sync site: ");
                gt_put_text(stdout, r->name, 0);
                printf(" (%llu calls)\n", (unsigned long long)r->count[1]);
            }
        }
        int idle_cause = r->cat == GT_DC_SUMMARY && strncmp(r->name, "idle_", 5) == 0;
        if (max_pct >= 0 && r->worse_up && (!idle_cause || idle_rose) && r->status == GT_DS_CHANGED &&
            r->mean[1] > r->mean[0] &&
            (r->mean[0] == 0 || r->change_pct > max_pct)) {
            printf("FAIL max-regression-pct: %s ", gt_diff_cat_names[r->cat]);
            gt_put_text(stdout, r->name, 0);
            printf(" %s", gt_diff_measure_names[r->measure]);
            if (r->mean[0] > 0)
                printf(" rose %.1f%% > %g%%", r->change_pct, max_pct);
            else
                printf(" rose from 0 (limit %g%%)", max_pct);
            printf(" (%.6g -> %.6g %s)\n", r->mean[0], r->mean[1], gt_diff_unit(&d, r));
            regressed = 1;
            rc = GT_EXIT_FAIL;
        }
    }
    if (have_bytes) {
        int fail = new_bytes > (double)max_bytes;
        printf("%s max-new-pageable-h2d-bytes: %.0f B %s %llu B", fail ? "FAIL" : "ok  ", new_bytes,
               fail ? ">" : "<=", (unsigned long long)max_bytes);
        for (size_t i = 0; fail && i < d.nrows; i++)
            if (d.rows[i].cat == GT_DC_H2D && d.rows[i].measure == GT_DM_COUNT && d.rows[i].status == GT_DS_NEW) {
                printf(" (new: ");
                gt_put_text(stdout, d.rows[i].name, 0);
                printf(")");
            }
        putchar('\n');
        if (fail)
            rc = GT_EXIT_FAIL;
    }
    if (max_sites >= 0) {
        int fail = new_sites > max_sites;
        printf("%s max-new-sync-sites: %ld %s %ld\n", fail ? "FAIL" : "ok  ", new_sites, fail ? ">" : "<=",
               max_sites);
        if (fail)
            rc = GT_EXIT_FAIL;
    }
    /* one line per budget, failed or held, whatever the other budgets did */
    if (max_pct >= 0 && !regressed)
        printf("ok   max-regression-pct: no figure rose beyond noise and %g%%\n", max_pct);
    gt_diff_free(&d);
done:
    free(base);
    free(newp);
    return rc;
}

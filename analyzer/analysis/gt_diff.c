/* gt_diff.c: BASE vs NEW, like with like (docs/diff.md). Each trace is
 * analysed as `report` does; totals and counts are per run, or per step
 * when every trace has steps (so runs of different length compare), times
 * per call are the side's time over its calls, idle is a share of the
 * span. Never a total over the span: a change that only makes the run
 * shorter would move every such figure. The repeats of a side give the
 * spread the noise rule weighs a change against. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/gt_analyze.h"
#include "analysis/gt_diff.h"
#include "base/gt_err.h"
#include "trace/gt_trace.h"

const char *const gt_diff_cat_names[GT_DCATS] = {"summary", "kernel", "launch_site", "h2d_site", "sync_site",
                                                 "category"};
const char *const gt_diff_status_names[4] = {"same", "changed", "new", "vanished"};
const char *const gt_diff_measure_names[GT_DMEASURES] = {"total", "count", "per_call", "share", "once"};

void gt_diff_strip(const char *in, char *out, size_t len)
{
    size_t o = 0;
    for (size_t i = 0; in[i] && o + 1 < len;) {
        if (in[i] == '+' && in[i + 1] == '0' && in[i + 2] == 'x' && isxdigit((unsigned char)in[i + 3])) {
            i += 3;
            while (isxdigit((unsigned char)in[i]))
                i++;
            continue;
        }
        out[o++] = in[i++];
    }
    out[o] = 0;
}

static struct gt_diff_row *gt_row_get(struct gt_diff *d, int cat, int measure, const char *name)
{
    for (size_t i = 0; i < d->nrows; i++)
        if (d->rows[i].cat == cat && d->rows[i].measure == measure && strcmp(d->rows[i].name, name) == 0)
            return &d->rows[i];
    struct gt_diff_row *g = realloc(d->rows, (d->nrows + 1) * sizeof(*g));
    if (!g)
        return NULL;
    d->rows = g;
    struct gt_diff_row *r = &d->rows[d->nrows++];
    memset(r, 0, sizeof(*r));
    r->cat = cat;
    r->measure = measure;
    snprintf(r->name, sizeof(r->name), "%s", name);
    return r;
}

/* Flags of a row, as gt_add takes them. */
#define GT_F_BYTES 1
#define GT_F_WORSE_UP 2

/* Adds v (ns or bytes) over count calls to the row (cat, measure, name) of
 * trace ti of side `side`. */
static int gt_add(struct gt_diff *d, int side, int ti, int cat, int measure, const char *name, double v,
                  uint64_t count, int flags)
{
    struct gt_diff_row *r = gt_row_get(d, cat, measure, name);
    if (!r) {
        gt_err("diff: out of memory");
        return -1;
    }
    r->bytes = !!(flags & GT_F_BYTES);
    r->worse_up = !!(flags & GT_F_WORSE_UP);
    r->val[side][ti] += v;
    r->cnt[side][ti] += (double)count;
    r->raw[side] += v;
    r->count[side] += count;
    return 0;
}

/* A kernel or a site: its calls, its value per call, and (kernels) its
 * GPU time in all. */
static int gt_add_item(struct gt_diff *d, int side, int ti, int cat, const char *name, double v, uint64_t count,
                       int bytes, int total)
{
    int f = GT_F_WORSE_UP | (bytes ? GT_F_BYTES : 0);
    int rc = gt_add(d, side, ti, cat, GT_DM_COUNT, name, v, count, f);
    /* a sync's time per call: how long the GPU took to catch up (see
     * "sync" in gt_diff_one), shown, not gated */
    rc |= gt_add(d, side, ti, cat, GT_DM_PER_CALL, name, v, count, cat == GT_DC_SYNC ? f & ~GT_F_WORSE_UP : f);
    if (total)
        rc |= gt_add(d, side, ti, cat, GT_DM_TOTAL, name, v, count, f);
    return rc;
}

/* One trace's figures into column (side, ti). */
static int gt_diff_one(struct gt_diff *d, int side, int ti, const char *path)
{
    struct gt_trace t;
    if (gt_trace_open(&t, path) != 0)
        return -1;
    if (gt_trace_meta_int(&t, "complete", 0) != 1)
        d->incomplete[side]++;
    struct gt_analyze_opts o = {.min_gap_ns = 1000000, .top = 0};
    struct gt_report r;
    if (gt_analyze(&t, &o, &r) < 0) {
        gt_trace_close(&t);
        return -1;
    }
    const struct gt_summary *s = &r.summary;
    d->span_ns[side] += (double)s->span_ns;
    d->span_ns_of[side][ti] = (double)s->span_ns;
    d->steps_of[side][ti] = r.steps.count;
    d->steps[side] += r.steps.count;
    d->step_ns[side] += (double)r.steps.mean_ns;
    d->busy_ns[side] += s->busy_ns;
    d->kernel_ns[side] += s->kernel_ns;
    d->launches[side] += s->launches;
    d->calls[side] += s->calls;
    d->failed[side] += s->failed_calls;
    int rc = 0, up = GT_F_WORSE_UP;
    char name[840], key[840];
    rc |= gt_add(d, side, ti, GT_DC_SUMMARY, GT_DM_ONCE, "span", (double)s->span_ns, 0, 0);
    /* Busy and idle between the GPU's first work and its last: start-up
     * and teardown are once a run (their own rows), and would weigh on a
     * short run's share and per-step idle more than on a long one's. */
    double edges = (double)s->idle_by_cause[GT_CAUSE_STARTUP] + (double)s->idle_by_cause[GT_CAUSE_TEARDOWN];
    double window = (double)s->span_ns - edges, idle = (double)s->idle_ns - edges;
    d->window_ns_of[side][ti] = window;
    /* Idle as a share says how much of the run the GPU sat idle, but
     * removing GPU work that was waste (a pageable copy) raises it: the
     * gate weighs the idle time itself, per run or per step. */
    rc |= gt_add(d, side, ti, GT_DC_SUMMARY, GT_DM_SHARE, "gpu_busy", (double)s->busy_ns, 0, 0);
    rc |= gt_add(d, side, ti, GT_DC_SUMMARY, GT_DM_SHARE, "gpu_idle", idle, 0, 0);
    rc |= gt_add(d, side, ti, GT_DC_SUMMARY, GT_DM_TOTAL, "gpu_idle", idle, 0, up);
    for (int c = 0; c < GT_CAUSES; c++) {
        snprintf(name, sizeof(name), "idle_%s", gt_cause_names[c]);
        /* Start-up and teardown happen once a run, whatever its steps;
         * the others are time the GPU waited for something the program
         * did: per run, or per step. A share of the span would rise when
         * the span shrinks around them (an improvement elsewhere). */
        int once = c == GT_CAUSE_STARTUP || c == GT_CAUSE_TEARDOWN;
        rc |= gt_add(d, side, ti, GT_DC_SUMMARY, once ? GT_DM_ONCE : GT_DM_TOTAL, name,
                     (double)s->idle_by_cause[c], 0, up);
    }
    rc |= gt_add(d, side, ti, GT_DC_SUMMARY, GT_DM_PER_CALL, "launch_host", (double)s->launch_host_ns, s->launches,
                 up);
    rc |= gt_add(d, side, ti, GT_DC_SUMMARY, GT_DM_TOTAL, "pageable_h2d_bytes", (double)s->pageable_h2d_bytes, 0,
                 up | GT_F_BYTES);
    /* Time blocked in syncs is the host waiting while the GPU works: it
     * grows when the host runs further ahead (an improvement elsewhere).
     * What a sync costs the GPU is the idle after it (idle_sync); more
     * syncs are more calls at a sync site. Shown, not gated. */
    rc |= gt_add(d, side, ti, GT_DC_SUMMARY, GT_DM_TOTAL, "sync", (double)s->sync_ns, 0, 0);
    for (size_t i = 0; i < r.nkernels; i++)
        rc |= gt_add_item(d, side, ti, GT_DC_KERNEL, r.kernels[i].name, (double)r.kernels[i].total_ns,
                          r.kernels[i].count, 0, 1);
    /* GPU time by kind of work: its operations, their time, the mean per
     * operation. Shown, not gated: the kernels' own rows already are. */
    for (size_t i = 0; i < r.cats.n; i++) {
        if (!r.cats.count[i])
            continue;
        const char *cn = r.cats.names[i];
        double ns = (double)r.cats.gpu_ns[i];
        rc |= gt_add(d, side, ti, GT_DC_CATEGORY, GT_DM_TOTAL, cn, ns, r.cats.count[i], 0);
        rc |= gt_add(d, side, ti, GT_DC_CATEGORY, GT_DM_COUNT, cn, ns, r.cats.count[i], 0);
        rc |= gt_add(d, side, ti, GT_DC_CATEGORY, GT_DM_PER_CALL, cn, ns, r.cats.count[i], 0);
    }
    for (size_t i = 0; i < r.nlaunch_sites; i++) {
        gt_diff_strip(r.launch_sites[i].site.text, key, sizeof(key));
        rc |= gt_add_item(d, side, ti, GT_DC_LAUNCH, key, (double)r.launch_sites[i].api_total_ns,
                          r.launch_sites[i].count, 0, 0);
    }
    for (size_t i = 0; i < r.nh2d; i++) {
        if (!r.h2d[i].pageable_bytes)
            continue; /* pinned-only sites are not what this compares */
        gt_diff_strip(r.h2d[i].site.text, key, sizeof(key));
        rc |= gt_add_item(d, side, ti, GT_DC_H2D, key, (double)r.h2d[i].pageable_bytes, r.h2d[i].pageable_calls,
                          1, 0);
    }
    for (size_t i = 0; i < r.nsyncs; i++) {
        gt_diff_strip(r.syncs[i].site.text, key, sizeof(key));
        rc |= gt_add_item(d, side, ti, GT_DC_SYNC, key, (double)r.syncs[i].blocked_ns, r.syncs[i].count, 0, 0);
    }
    gt_report_free(&r);
    gt_trace_close(&t);
    return rc ? -1 : 0;
}

/* Each trace's figure, the side's mean (PER_CALL: pooled over the side's
 * calls, so a trace with few calls weighs little) and spread. */
static void gt_figures(const struct gt_diff *d, struct gt_diff_row *r)
{
    for (int s = 0; s < 2; s++) {
        int n = d->ntraces[s], seen = 0;
        double sum = 0, vsum = 0, csum = 0, lo = INFINITY, hi = -INFINITY;
        for (int i = 0; i < n; i++) {
            double per = d->per_step ? (double)d->steps_of[s][i] : 1.0, v = r->val[s][i], c = r->cnt[s][i], f;
            switch (r->measure) {
            case GT_DM_TOTAL: f = v / per; break;
            case GT_DM_COUNT: f = c / per; break;
            case GT_DM_SHARE: f = d->window_ns_of[s][i] > 0 ? v / d->window_ns_of[s][i] : 0; break;
            case GT_DM_PER_CALL:
                vsum += v;
                csum += c;
                if (c <= 0)
                    continue; /* no call there: no figure, not a figure of 0 */
                f = v / c;
                break;
            default: f = v; break;
            }
            r->rate[s][i] = f;
            sum += f;
            seen++;
            lo = fmin(lo, f);
            hi = fmax(hi, f);
        }
        if (r->measure == GT_DM_PER_CALL)
            r->mean[s] = csum > 0 ? vsum / csum : 0;
        else
            r->mean[s] = seen ? sum / seen : 0;
        r->spread[s] = seen ? hi - lo : 0;
        r->raw[s] /= n;
    }
}

/* Calls per unit (run, or step) of a side, over its traces. */
static double gt_calls_per_unit(const struct gt_diff *d, const struct gt_diff_row *r, int s)
{
    double units = 0;
    for (int i = 0; i < d->ntraces[s]; i++)
        units += d->per_step ? (double)d->steps_of[s][i] : 1.0;
    return units > 0 ? (double)r->count[s] / units : 0;
}

/* The noise rule (docs/diff.md): what a change costs over a run (or a
 * step) must be over the floor, whatever the figure measures. */
static void gt_judge(const struct gt_diff *d, struct gt_diff_row *r)
{
    gt_figures(d, r);
    double diff = r->mean[1] - r->mean[0];
    r->change_pct = r->mean[0] > 0 ? diff / r->mean[0] * 100.0 : 0;
    if (r->cat != GT_DC_SUMMARY && r->count[0] && !r->count[1]) {
        r->status = GT_DS_VANISHED;
        return;
    }
    if (r->cat != GT_DC_SUMMARY && !r->count[0] && r->count[1]) {
        r->status = GT_DS_NEW;
        return;
    }
    /* the floor for a total over the unit the figures are counted in */
    double unit_ns = d->per_step ? d->step_ns[0] : d->span_ns[0];
    double floor = r->bytes ? GT_DIFF_FLOOR_BYTES_PER_S * unit_ns / 1e9 : GT_DIFF_FLOOR_SPAN * unit_ns;
    double cost = fabs(diff);
    switch (r->measure) {
    case GT_DM_COUNT: { /* calls more or fewer, at the mean value of a call */
        double c = (double)(r->count[0] + r->count[1]);
        cost *= c > 0 ? (r->raw[0] * d->ntraces[0] + r->raw[1] * d->ntraces[1]) / c : 0;
        break;
    }
    case GT_DM_PER_CALL: /* each call dearer or cheaper, over the calls made */
        cost *= fmax(gt_calls_per_unit(d, r, 0), gt_calls_per_unit(d, r, 1));
        break;
    case GT_DM_SHARE:
        floor = GT_DIFF_FLOOR_SPAN;
        break;
    case GT_DM_ONCE:
        floor = GT_DIFF_FLOOR_ONCE_NS;
        break;
    default:
        break;
    }
    int beyond = fabs(diff) > GT_DIFF_REL * r->mean[0] && cost > floor;
    if (beyond && d->ntraces[0] >= 2 && d->ntraces[1] >= 2)
        beyond = fabs(diff) > GT_DIFF_SPREAD_FACTOR * fmax(r->spread[0], r->spread[1]);
    r->status = beyond ? GT_DS_CHANGED : GT_DS_SAME;
}

int gt_diff_build(struct gt_diff *d, char **base, int nbase, char **newp, int nnew)
{
    memset(d, 0, sizeof(*d));
    if (nbase > GT_DIFF_MAX_TRACES || nnew > GT_DIFF_MAX_TRACES) {
        gt_err("diff: at most %d traces a side", GT_DIFF_MAX_TRACES);
        return -1;
    }
    d->ntraces[0] = nbase;
    d->ntraces[1] = nnew;
    for (int s = 0; s < 2; s++)
        for (int i = 0; i < d->ntraces[s]; i++)
            if (gt_diff_one(d, s, i, s ? newp[i] : base[i]) < 0) {
                gt_diff_free(d);
                return -1;
            }
    /* Per step when every trace has steps: runs of different length and
     * machines of different load compare step for step. */
    d->per_step = 1;
    for (int s = 0; s < 2; s++) {
        for (int i = 0; i < d->ntraces[s]; i++)
            d->per_step &= d->steps_of[s][i] > 0;
        d->span_ns[s] /= d->ntraces[s];
        d->step_ns[s] /= d->ntraces[s];
    }
    for (size_t i = 0; i < d->nrows; i++)
        gt_judge(d, &d->rows[i]);
    return 0;
}

void gt_diff_free(struct gt_diff *d)
{
    free(d->rows);
    d->rows = NULL;
    d->nrows = 0;
}

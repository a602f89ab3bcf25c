/* gt_diff.c: BASE vs NEW, per step or per second of span (docs/diff.md).
 * Each trace is analysed as `report` does; its figures are divided by its
 * steps when every trace has steps, else by its span, so runs of
 * different length compare, and the repeats of a side give the spread the
 * noise rule weighs a change against. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/gt_analyze.h"
#include "analysis/gt_diff.h"
#include "base/gt_err.h"
#include "trace/gt_trace.h"

const char *const gt_diff_cat_names[GT_DCATS] = {"summary", "kernel", "launch_site", "h2d_site", "sync_site"};
const char *const gt_diff_status_names[4] = {"same", "changed", "new", "vanished"};

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

static struct gt_diff_row *gt_row_get(struct gt_diff *d, int cat, const char *name, int bytes, int worse_up)
{
    for (size_t i = 0; i < d->nrows; i++)
        if (d->rows[i].cat == cat && strcmp(d->rows[i].name, name) == 0)
            return &d->rows[i];
    struct gt_diff_row *g = realloc(d->rows, (d->nrows + 1) * sizeof(*g));
    if (!g)
        return NULL;
    d->rows = g;
    struct gt_diff_row *r = &d->rows[d->nrows++];
    memset(r, 0, sizeof(*r));
    r->cat = cat;
    snprintf(r->name, sizeof(r->name), "%s", name);
    r->bytes = bytes;
    r->worse_up = worse_up;
    return r;
}

static int gt_add(struct gt_diff *d, int side, int ti, double span_s, int cat, const char *name, double v,
                  uint64_t count, int bytes, int worse_up)
{
    struct gt_diff_row *r = gt_row_get(d, cat, name, bytes, worse_up);
    if (!r) {
        gt_err("diff: out of memory");
        return -1;
    }
    (void)span_s; /* divided in gt_diff_build, once the unit is known */
    r->rate[side][ti] += v;
    r->raw[side] += v;
    r->count[side] += count;
    return 0;
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
    double span_s = (s->span_ns ? (double)s->span_ns : 1.0) / 1e9;
    d->span_ns[side] += (double)s->span_ns;
    d->span_s_of[side][ti] = span_s;
    d->steps_of[side][ti] = r.steps.count;
    d->steps[side] += r.steps.count;
    d->step_ns[side] += (double)r.steps.mean_ns;
    d->busy_ns[side] += s->busy_ns;
    d->calls[side] += s->calls;
    d->failed[side] += s->failed_calls;
    int rc = 0;
    char name[840], key[840];
    rc |= gt_add(d, side, ti, span_s, GT_DC_SUMMARY, "gpu_busy", (double)s->busy_ns, 0, 0, 0);
    rc |= gt_add(d, side, ti, span_s, GT_DC_SUMMARY, "gpu_idle", (double)s->idle_ns, 0, 0, 1);
    for (int c = 0; c < GT_CAUSES; c++) {
        snprintf(name, sizeof(name), "idle_%s", gt_cause_names[c]);
        /* Start-up and teardown happen once: per second of span they
         * would shrink as the run grows. */
        if (c == GT_CAUSE_STARTUP || c == GT_CAUSE_TEARDOWN) {
            struct gt_diff_row *o = gt_row_get(d, GT_DC_SUMMARY, name, 0, 1);
            if (o)
                o->once = 1;
        }
        rc |= gt_add(d, side, ti, span_s, GT_DC_SUMMARY, name, (double)s->idle_by_cause[c], 0, 0, 1);
    }
    rc |= gt_add(d, side, ti, span_s, GT_DC_SUMMARY, "launch_host", (double)s->launch_host_ns, s->launches, 0, 1);
    rc |= gt_add(d, side, ti, span_s, GT_DC_SUMMARY, "pageable_h2d_bytes", (double)s->pageable_h2d_bytes, 0, 1, 1);
    rc |= gt_add(d, side, ti, span_s, GT_DC_SUMMARY, "sync", (double)s->sync_ns, 0, 0, 1);
    for (size_t i = 0; i < r.nkernels; i++)
        rc |= gt_add(d, side, ti, span_s, GT_DC_KERNEL, r.kernels[i].name, (double)r.kernels[i].total_ns,
                     r.kernels[i].count, 0, 1);
    for (size_t i = 0; i < r.nlaunch_sites; i++) {
        gt_diff_strip(r.launch_sites[i].site.text, key, sizeof(key));
        rc |= gt_add(d, side, ti, span_s, GT_DC_LAUNCH, key, (double)r.launch_sites[i].api_total_ns,
                     r.launch_sites[i].count, 0, 1);
    }
    for (size_t i = 0; i < r.nh2d; i++) {
        if (!r.h2d[i].pageable_bytes)
            continue; /* pinned-only sites are not what this compares */
        gt_diff_strip(r.h2d[i].site.text, key, sizeof(key));
        rc |= gt_add(d, side, ti, span_s, GT_DC_H2D, key, (double)r.h2d[i].pageable_bytes, r.h2d[i].pageable_calls,
                     1, 1);
    }
    for (size_t i = 0; i < r.nsyncs; i++) {
        gt_diff_strip(r.syncs[i].site.text, key, sizeof(key));
        rc |= gt_add(d, side, ti, span_s, GT_DC_SYNC, key, (double)r.syncs[i].blocked_ns, r.syncs[i].count, 0, 1);
    }
    gt_report_free(&r);
    gt_trace_close(&t);
    return rc ? -1 : 0;
}

/* The noise rule (docs/diff.md). */
static void gt_judge(const struct gt_diff *d, struct gt_diff_row *r)
{
    for (int s = 0; s < 2; s++) {
        int n = d->ntraces[s];
        double sum = 0, lo = INFINITY, hi = -INFINITY;
        for (int i = 0; i < n; i++) {
            sum += r->rate[s][i];
            lo = fmin(lo, r->rate[s][i]);
            hi = fmax(hi, r->rate[s][i]);
        }
        r->mean[s] = sum / n;
        r->spread[s] = hi - lo;
        r->raw[s] /= n;
    }
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
    double floor = r->bytes ? GT_DIFF_FLOOR_BYTES_PER_S : r->once ? GT_DIFF_FLOOR_ONCE_NS : GT_DIFF_FLOOR_NS_PER_S;
    if (d->per_step && !r->once) /* the same floors, over the base's mean step instead of a second */
        floor *= d->step_ns[0] / 1e9;
    int beyond = fabs(diff) > GT_DIFF_REL * r->mean[0] && fabs(diff) > floor;
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
    d->per_step = 1;
    for (int s = 0; s < 2; s++) {
        for (int i = 0; i < d->ntraces[s]; i++)
            d->per_step &= d->steps_of[s][i] > 0;
        d->span_ns[s] /= d->ntraces[s];
        d->step_ns[s] /= d->ntraces[s];
    }
    /* Per step when every trace has steps: runs of different length and
     * machines of different load compare step for step. */
    for (size_t k = 0; k < d->nrows; k++)
        for (int s = 0; s < 2; s++)
            for (int i = 0; i < d->ntraces[s]; i++)
                if (!d->rows[k].once)
                    d->rows[k].rate[s][i] /= d->per_step ? (double)d->steps_of[s][i] : d->span_s_of[s][i];
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

/* test_timeline.c: analyzer/analysis/gt_timeline.c against a plain,
 * quadratic reference on random operations (several devices and streams,
 * overlapping work, gaps of every length, long ones past 2^32 ns) and
 * random calls of every category: busy time per device, stream and for the
 * device time (every device's timeline added); every gap's cause, the idle
 * by cause and by each gap's site (the calls that spent it, or the call
 * that ended it); the listed gaps with the calls before and after them;
 * launch-bound kernels; compute/copy overlap. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/gt_timeline.h"
#include "trace/gt_scan.h"
#include "unit.h"

#define NSITES 12
#define MAXOPS 400
#define MAXCALLS 600

static uint64_t rng = 88172645463325252ull;
static uint64_t rnd(uint64_t n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return n ? rng % n : 0;
}

struct op {
    int64_t dev, stream;
    uint64_t s, e;
    int kind, site, api, launch, cand;
    uint64_t call_end;
    int bound; /* reported by the sweep */
};

struct call {
    int cat;
    uint64_t s, e;
    uint32_t site;
};

static struct op ops[MAXOPS];
static struct call calls[MAXCALLS];
static size_t nops, ncalls;

static int call_cmp(const void *a, const void *b)
{
    const struct call *x = a, *y = b;
    return x->s < y->s ? -1 : x->s > y->s;
}

static void on_bound(const struct gt_op *op, void *arg)
{
    (void)arg;
    for (size_t i = 0; i < nops; i++)
        if (ops[i].s == op->start)
            ops[i].bound++;
}

/* Does op i belong to the timeline of device dev (-1: every device)? */
static int in_tl(size_t i, int64_t dev)
{
    return dev < 0 || ops[i].dev == dev;
}

struct ref_gap {
    uint64_t s, e;
    int where; /* 0 lead, 1 inner, 2 trail */
};

/* The gaps of a timeline over [t0, t1], in order; returns their count. */
static size_t ref_gaps(int64_t dev, uint64_t t0, uint64_t t1, struct ref_gap *out, uint64_t *busy)
{
    /* the union, by repeated extension from the earliest uncovered point */
    size_t n = 0;
    uint64_t t = t0, b = 0;
    int seen = 0;
    for (;;) {
        /* the earliest op starting at or after t, or covering t */
        uint64_t best = UINT64_MAX;
        for (size_t i = 0; i < nops; i++)
            if (in_tl(i, dev) && ops[i].e > t && ops[i].s < best)
                best = ops[i].s;
        if (best == UINT64_MAX)
            break;
        if (best > t)
            out[n++] = (struct ref_gap){t, best, seen ? 1 : 0};
        uint64_t s = best > t ? best : t, e = s;
        for (int grew = 1; grew;) {
            grew = 0;
            for (size_t i = 0; i < nops; i++)
                if (in_tl(i, dev) && ops[i].s <= e && ops[i].e > e) {
                    e = ops[i].e;
                    grew = 1;
                }
        }
        b += e - s;
        t = e;
        seen = 1;
    }
    if (t < t1)
        out[n++] = (struct ref_gap){t, t1, seen ? 2 : 0};
    *busy = b;
    return n;
}

static int ref_cause(const struct ref_gap *g)
{
    if (g->where == 0)
        return GT_CAUSE_STARTUP;
    if (g->where == 2)
        return GT_CAUSE_TEARDOWN;
    uint64_t cover[GT_CALL_CAUSES] = {0};
    for (size_t i = 0; i < ncalls; i++) {
        uint64_t s = calls[i].s > g->s ? calls[i].s : g->s, e = calls[i].e < g->e ? calls[i].e : g->e;
        if (e > s)
            cover[gt_cause_of_category(calls[i].cat)] += e - s;
    }
    int best = 0;
    for (int c = 1; c < GT_CALL_CAUSES; c++)
        if (cover[c] > cover[best])
            best = c;
    return cover[best] * 2 >= g->e - g->s && cover[best] ? best : GT_CAUSE_HOST;
}

/* A gap with a call cause: the site whose calls of that category spent
 * the most of it (ties: the lowest); UINT32_MAX for other causes. */
static uint32_t ref_spent(const struct ref_gap *g, int cause)
{
    if (cause >= GT_CALL_CAUSES)
        return UINT32_MAX;
    uint64_t by_site[NSITES] = {0};
    for (size_t i = 0; i < ncalls; i++) {
        uint64_t s = calls[i].s > g->s ? calls[i].s : g->s, e = calls[i].e < g->e ? calls[i].e : g->e;
        if (e > s && gt_cause_of_category(calls[i].cat) == cause)
            by_site[calls[i].site] += e - s;
    }
    uint32_t best = UINT32_MAX;
    for (uint32_t k = 0; k < NSITES; k++)
        if (by_site[k] && (best == UINT32_MAX || by_site[k] > by_site[best]))
            best = k;
    return best;
}

/* Is `site` the site of an op of the timeline starting (end = 0) or ending
 * (end = 1) at t? */
static int site_at(int64_t dev, uint64_t t, int end, uint32_t site)
{
    for (size_t i = 0; i < nops; i++)
        if (in_tl(i, dev) && (end ? ops[i].e : ops[i].s) == t && (uint32_t)ops[i].site == site)
            return 1;
    return 0;
}

static uint64_t ref_union_kind(int64_t dev, int kind, uint64_t *iv, size_t *n)
{
    /* sorted disjoint union of ops of one kind on a device, as pairs */
    uint64_t total = 0;
    *n = 0;
    uint64_t t = 0;
    for (;;) {
        uint64_t best = UINT64_MAX;
        for (size_t i = 0; i < nops; i++)
            if (ops[i].dev == dev && ops[i].kind == kind && ops[i].e > t && ops[i].s < best && ops[i].e > ops[i].s)
                best = ops[i].s;
        if (best == UINT64_MAX)
            return total;
        uint64_t s = best > t ? best : t, e = s;
        for (int grew = 1; grew;) {
            grew = 0;
            for (size_t i = 0; i < nops; i++)
                if (ops[i].dev == dev && ops[i].kind == kind && ops[i].s <= e && ops[i].e > e) {
                    e = ops[i].e;
                    grew = 1;
                }
        }
        iv[2 * *n] = s;
        iv[2 * *n + 1] = e;
        (*n)++;
        total += e - s;
        t = e;
    }
}

static void one_case(int ndev, size_t n, size_t nc, uint64_t scale, uint64_t min_gap)
{
    nops = n;
    ncalls = nc;
    uint64_t t = 1000000;
    for (size_t i = 0; i < n; i++) {
        struct op *o = &ops[i];
        memset(o, 0, sizeof(*o));
        t += 1 + rnd(3 * scale);      /* distinct starts */
        o->dev = (int64_t)rnd((uint64_t)ndev) * 3;
        o->stream = 7 + (int64_t)rnd(2);
        o->kind = (int)rnd(3);
        o->s = t;
        o->e = t + (rnd(50) == 0 ? (5ull << 30) : rnd(2 * scale));
        o->site = (int)rnd(NSITES);
        o->api = (int)rnd(5);
        if (o->kind == GT_OP_KERNEL && rnd(3)) {
            o->launch = 1;
            o->cand = (int)rnd(3) != 0;
            o->call_end = o->s - rnd(scale) + rnd(scale / 2 + 1);
        }
    }
    uint64_t t0 = 500000, t1 = 0;
    for (size_t i = 0; i < n; i++)
        if (ops[i].e > t1)
            t1 = ops[i].e;
    t1 += rnd(3 * scale);
    if (t1 < t0 + 1000)
        t1 = t0 + 1000;
    for (size_t i = 0; i < nc; i++) {
        calls[i].cat = (int)rnd(GT_RC_COUNT);
        calls[i].site = (uint32_t)rnd(NSITES);
        calls[i].s = t0 + rnd(t1 - t0);
        calls[i].e = calls[i].s + (rnd(10) == 0 ? rnd(20 * scale) : rnd(scale));
        if (calls[i].e > t1)
            calls[i].e = t1;
    }
    qsort(calls, nc, sizeof(calls[0]), call_cmp);

    struct gt_ops go;
    memset(&go, 0, sizeof(go));
    for (size_t k = 0; k < n; k++) {
        size_t i = (k * 7919) % n; /* scrambled: the sweep needs them sorted */
        long x = gt_ops_add(&go, ops[i].kind, ops[i].dev, ops[i].stream, ops[i].s, ops[i].e);
        CHECK(x >= 0);
        struct gt_op *g = &go.v[x];
        g->site = (uint32_t)ops[i].site;
        g->api = (uint16_t)ops[i].api;
        if (ops[i].launch) {
            CHECK(gt_op_set_call_end(&go, g, ops[i].call_end) == 0);
            if (ops[i].cand)
                g->flags |= GT_OPF_LB_CAND;
        }
    }
    /* the sweep reads them sorted from gt_opsort: half the cases through
     * runs on disk (16 operations a run) */
    if (n % 2)
        setenv("GPUTRACE_SORT_MEM", "640", 1);
    else
        unsetenv("GPUTRACE_SORT_MEM");
    struct gt_opsort src;
    gt_opsort_init(&src, &go);
    for (size_t i = 0; i < go.n; i++)
        gt_opsort_add(&src, &go.v[i], i);
    CHECK(gt_opsort_begin(&src, NULL, 0) == 0);
    struct gt_sweep *sw = gt_sweep_new(&go, &src, t0, t1, min_gap, NSITES + 1, NSITES, on_bound, NULL);
    CHECK(sw != NULL);
    for (size_t i = 0; i < nc; i++)
        gt_sweep_call(calls[i].cat, calls[i].s, calls[i].e, calls[i].site, (uint32_t)calls[i].cat, sw);
    struct gt_tl_result r;
    memset(&r, 0, sizeof(r));
    CHECK(gt_sweep_finish(sw, &r) == 0);
    gt_sweep_free(sw);
    gt_opsort_free(&src);

    static struct ref_gap gaps[MAXOPS + 2];
    /* each device's timeline */
    int64_t devs[3] = {0, 3, 6};
    size_t listed = 0;
    int ok_dev = 1, ok_list = 1;
    for (int d = 0; d < ndev; d++) {
        int has = 0;
        for (size_t i = 0; i < n; i++)
            has |= ops[i].dev == devs[d];
        if (!has)
            continue;
        uint64_t busy;
        size_t ng = ref_gaps(devs[d], t0, t1, gaps, &busy);
        uint64_t by_cause[GT_CAUSES] = {0};
        const struct gt_tl_device *x = NULL;
        for (size_t k = 0; k < r.ndevices; k++)
            if (r.devices[k].device == devs[d])
                x = &r.devices[k];
        CHECK(x != NULL);
        if (!x)
            continue;
        for (size_t g = 0; g < ng; g++) {
            int cause = ref_cause(&gaps[g]);
            by_cause[cause] += gaps[g].e - gaps[g].s;
            if (gaps[g].e - gaps[g].s < min_gap)
                continue;
            listed++;
            int found = 0;
            for (size_t k = 0; k < r.ngaps; k++) {
                const struct gt_tl_gap *y = &r.gaps[k];
                if (y->device != devs[d] || y->start != gaps[g].s)
                    continue;
                found = y->dur == gaps[g].e - gaps[g].s && y->cause == cause &&
                        y->spent_site == ref_spent(&gaps[g], cause) &&
                        (gaps[g].where == 2 ? y->after_site == UINT32_MAX
                                            : site_at(devs[d], gaps[g].e, 0, y->after_site)) &&
                        (gaps[g].where == 0 ? y->before_site == UINT32_MAX
                                            : site_at(devs[d], gaps[g].s, 1, y->before_site));
            }
            ok_list &= found;
        }
        ok_dev &= x->busy_ns == busy && !memcmp(x->idle_by_cause, by_cause, sizeof(by_cause));
        /* compute/copy overlap */
        static uint64_t ki[2 * MAXOPS], ci[2 * MAXOPS];
        size_t nk, nci;
        uint64_t compute = ref_union_kind(devs[d], GT_OP_KERNEL, ki, &nk);
        uint64_t copy = ref_union_kind(devs[d], GT_OP_MEMCPY, ci, &nci);
        uint64_t overlap = 0;
        for (size_t a = 0; a < nk; a++)
            for (size_t b = 0; b < nci; b++) {
                uint64_t s = ki[2 * a] > ci[2 * b] ? ki[2 * a] : ci[2 * b];
                uint64_t e = ki[2 * a + 1] < ci[2 * b + 1] ? ki[2 * a + 1] : ci[2 * b + 1];
                if (e > s)
                    overlap += e - s;
            }
        ok_dev &= x->compute_ns == compute && x->copy_ns == copy && x->overlap_ns == overlap;
    }
    CHECK(ok_dev);
    CHECK(ok_list);
    CHECK(r.ngaps == listed);

    /* device time: every device's timeline (the one timeline of no device
     * when there are no operations) adds its busy time, idle by cause and
     * idle by each gap's site */
    uint64_t busy = 0, ntl = 0;
    uint64_t by_cause[GT_CAUSES] = {0}, site_idle[NSITES + 1] = {0};
    for (int d = 0; d < 3; d++) {
        int has = 0;
        for (size_t i = 0; i < n; i++)
            has |= ops[i].dev == devs[d];
        if (!has && !(d == 0 && n == 0))
            continue;
        ntl++;
        uint64_t b;
        size_t ng = ref_gaps(devs[d], t0, t1, gaps, &b);
        busy += b;
        for (size_t g = 0; g < ng; g++) {
            int cause = ref_cause(&gaps[g]);
            by_cause[cause] += gaps[g].e - gaps[g].s;
            uint32_t site = NSITES, spent = ref_spent(&gaps[g], cause);
            if (spent != UINT32_MAX)
                site = spent;
            else if (gaps[g].where != 2)
                for (size_t i = 0; i < nops; i++)
                    if (in_tl(i, devs[d]) && ops[i].s == gaps[g].e)
                        site = ops[i].site;
            site_idle[site] += gaps[g].e - gaps[g].s;
        }
    }
    uint64_t idle = 0;
    for (int c = 0; c < GT_CAUSES; c++)
        idle += r.idle_by_cause[c];
    CHECK(r.ndevtime == ntl);
    CHECK(r.busy_ns == busy);
    CHECK(idle == ntl * (t1 - t0) - busy);
    CHECK(!memcmp(r.idle_by_cause, by_cause, sizeof(by_cause)));
    CHECK(!memcmp(r.site_idle, site_idle, sizeof(site_idle)));

    /* streams, and launch-bound kernels */
    int ok_bound = 1, ok_slot = 1;
    for (size_t i = 0; i < n; i++) {
        const struct op *o = &ops[i];
        int want = 0;
        if (o->launch && o->cand) {
            uint64_t prev = 0;
            int any = 0;
            for (size_t j = 0; j < n; j++)
                if (ops[j].dev == o->dev && ops[j].stream == o->stream && ops[j].s < o->s) {
                    any = 1;
                    if (ops[j].e > prev)
                        prev = ops[j].e;
                }
            want = !any || prev <= o->call_end;
        }
        ok_bound &= o->bound == want;
    }
    for (size_t sl = 0; sl < go.nslots; sl++) {
        uint64_t b = 0, end = 0, cnt = 0;
        /* ops of the slot start in increasing order (distinct starts) */
        for (size_t i = 0; i < n; i++) {
            const struct op *o = &ops[i];
            if (o->dev != go.slot_device[sl] || o->stream != go.slot_stream[sl])
                continue;
            cnt++;
            if (o->s >= end) {
                b += o->e - o->s;
                end = o->e;
            } else if (o->e > end) {
                b += o->e - end;
                end = o->e;
            }
        }
        ok_slot &= r.slot_busy[sl] == b && r.slot_ops[sl] == cnt;
    }
    CHECK(ok_bound);
    CHECK(ok_slot);
    gt_tl_result_free(&r);
    gt_ops_free(&go);
}

int main(void)
{
    for (int round = 0; round < 60; round++) {
        int ndev = 1 + round % 3;
        size_t n = 1 + rnd(round < 30 ? 40 : MAXOPS);
        size_t nc = rnd(round < 30 ? 60 : MAXCALLS);
        uint64_t scale = round % 4 == 0 ? 10 : round % 4 == 1 ? 1000 : round % 4 == 2 ? 100000 : 3000000000ull;
        one_case(ndev, n, nc, scale, round % 5 == 0 ? 0 : scale);
        for (size_t i = 0; i < nops; i++)
            ops[i].bound = 0;
    }
    /* no operations at all: one start-up gap, the whole span */
    one_case(1, 0, 20, 1000, 1);
    return unit_report("test_timeline");
}

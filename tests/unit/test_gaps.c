/* test_gaps.c: analyzer/analysis/gt_gaps.c against a plain, quadratic reference on
 * random GPU intervals and calls (several devices, overlapping intervals,
 * calls in order, nearly in order and shuffled), plus gaps longer than 2^32
 * ns, whose coverage is kept in coarser units. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "analysis/gt_gaps.h"
#include "gt_schema_sql.h"
#include "analysis/gt_site.h"
#include "unit.h"

#define NSTACKS 12

struct iv {
    int64_t dev;
    uint64_t s, e;
};
struct call {
    int cat;
    uint64_t s, e;
    int64_t key;
};

static uint64_t rng = 88172645463325252ull;
static uint64_t rnd(uint64_t n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return n ? rng % n : 0;
}

/* A database with NSTACKS one-frame stacks, f1 .. f12, in a user module. */
static sqlite3 *make_db(void)
{
    sqlite3 *db;
    sqlite3_open(":memory:", &db);
    char *sql = calloc(1, gt_schema_sql_len + 1);
    memcpy(sql, gt_schema_sql, gt_schema_sql_len);
    int rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
    free(sql);
    if (rc != SQLITE_OK)
        return NULL;
    sqlite3_exec(db, "INSERT INTO modules VALUES (1, '/app/a.out')", NULL, NULL, NULL);
    for (int i = 1; i <= NSTACKS; i++) {
        char q[256];
        snprintf(q, sizeof(q), "INSERT INTO frames VALUES (%d, %d, 1, %d, 'f%d'); INSERT INTO stacks VALUES (%d, 0, %d)",
                 i, 4096 + i * 16, i * 16, i, i, i);
        sqlite3_exec(db, q, NULL, NULL, NULL);
    }
    return db;
}

struct ref_gap {
    int64_t dev;
    uint64_t s, e;
    uint64_t cover[4];
    int64_t after;  /* call index; -1 none */
    int64_t before; /* call index; -1 none */
};

static int iv_cmp(const void *a, const void *b)
{
    const struct iv *x = a, *y = b;
    if (x->dev != y->dev)
        return x->dev < y->dev ? -1 : 1;
    return x->s < y->s ? -1 : x->s > y->s;
}

/* The reference: merged runs per device, every gap, every call checked
 * against every gap. */
static size_t reference(struct iv *iv, size_t niv, const struct call *c, size_t nc, struct ref_gap *out)
{
    qsort(iv, niv, sizeof(*iv), iv_cmp);
    size_t ng = 0;
    for (size_t i = 0; i < niv;) {
        uint64_t end = iv[i].e;
        size_t j = i + 1;
        for (; j < niv && iv[j].dev == iv[i].dev; j++) {
            if (iv[j].s > end) {
                struct ref_gap *g = &out[ng++];
                memset(g, 0, sizeof(*g));
                g->dev = iv[i].dev;
                g->s = end;
                g->e = iv[j].s;
                g->after = g->before = -1;
            }
            if (iv[j].e > end)
                end = iv[j].e;
        }
        i = j;
    }
    for (size_t k = 0; k < ng; k++) {
        struct ref_gap *g = &out[k];
        for (size_t i = 0; i < nc; i++) {
            uint64_t s = c[i].s > g->s ? c[i].s : g->s, e = c[i].e < g->e ? c[i].e : g->e;
            if (e > s)
                g->cover[c[i].cat] += e - s;
            if (c[i].s >= g->e && (g->after < 0 || c[i].s < c[g->after].s))
                g->after = (int64_t)i;
            if (c[i].s < g->s && (g->before < 0 || c[i].s >= c[g->before].s))
                g->before = (int64_t)i;
        }
    }
    return ng;
}

static int ref_cause(const struct ref_gap *g)
{
    uint64_t d = g->e - g->s;
    return g->cover[1] * 2 >= d ? GT_GAP_SYNC : g->cover[2] * 2 >= d ? GT_GAP_COPY
         : g->cover[3] * 2 >= d ? GT_GAP_LAUNCH : GT_GAP_HOST;
}

static const char *site_text(struct gt_sites *sites, int64_t key)
{
    return gt_site_of(sites, key)->text;
}

/* One random case; order: 0 in time order, 1 nearly, 2 shuffled. */
static void one_case(sqlite3 *db, int ndev, size_t niv, size_t nc, int order, uint64_t scale, uint64_t min_gap)
{
    struct iv *iv = calloc(niv, sizeof(*iv));
    struct call *c = calloc(nc, sizeof(*c));
    struct ref_gap *ref = calloc(niv + 1, sizeof(*ref));
    uint64_t t = 1000;
    for (size_t i = 0; i < niv; i++) {
        t += rnd(3 * scale);
        iv[i].dev = (int64_t)rnd((uint64_t)ndev) * 3; /* devices 0, 3, 6 */
        iv[i].s = t;
        iv[i].e = t + rnd(2 * scale);
    }
    uint64_t span = t + 2 * scale;
    for (size_t i = 0; i < nc; i++) {
        c[i].s = 500 + (uint64_t)((double)span * (double)i / (double)nc) + rnd(scale);
        c[i].e = c[i].s + (rnd(10) == 0 ? rnd(20 * scale) : rnd(scale));
        c[i].cat = (int)rnd(4);
        c[i].key = (int64_t)rnd(NSTACKS + 1); /* 0: no stack */
    }
    if (order == 1)
        for (size_t i = 0; i + 1 < nc; i++)
            if (rnd(4) == 0) {
                struct call x = c[i];
                c[i] = c[i + 1];
                c[i + 1] = x;
            }
    if (order == 2)
        for (size_t i = nc; i > 1; i--) {
            size_t j = (size_t)rnd(i);
            struct call x = c[i - 1];
            c[i - 1] = c[j];
            c[j] = x;
        }

    struct gt_sites sites;
    CHECK(gt_sites_init(&sites, db) == 0);
    struct gt_report r;
    memset(&r, 0, sizeof(r));
    r.summary.span_ns = span;
    struct gt_gaps *g = gt_gaps_new();
    /* intervals in a scrambled order: gt_gaps sorts them */
    for (size_t i = 0; i < niv; i++) {
        size_t k = (i * 7919) % niv;
        CHECK(gt_gaps_add(g, iv[k].dev, iv[k].s, iv[k].e) == 0);
    }
    CHECK(gt_gaps_merge(g, min_gap, &r) == 0);
    for (size_t i = 0; i < nc; i++)
        gt_gaps_call(g, c[i].cat, c[i].s, c[i].e, gt_site_index(&sites, c[i].key));
    CHECK(gt_gaps_report(g, &sites, &r) == 0);

    size_t ng = reference(iv, niv, c, nc, ref);
    uint64_t by_cause[GT_GAP_CAUSES] = {0};
    size_t nlisted = 0;
    int listed_ok = 1, idle_ok = 1;
    for (size_t k = 0; k < ng; k++) {
        struct ref_gap *x = &ref[k];
        int cause = ref_cause(x);
        by_cause[cause] += x->e - x->s;
        const char *after = site_text(&sites, x->after >= 0 ? c[x->after].key : 0);
        /* the idle-by-site row of the site that ended it holds this gap */
        int found = 0;
        for (size_t i = 0; i < r.nidle_sites; i++)
            found |= strcmp(r.idle_sites[i].site.text, after) == 0;
        idle_ok &= found;
        if (x->e - x->s < min_gap)
            continue;
        nlisted++;
        int match = 0;
        for (size_t i = 0; i < r.ngaps; i++) {
            const struct gt_gap *y = &r.gaps[i];
            if (y->device != x->dev || y->start_ns != x->s)
                continue;
            match = y->dur_ns == x->e - x->s && y->cause == cause && strcmp(y->after.text, after) == 0 &&
                    strcmp(y->before.text, site_text(&sites, x->before >= 0 ? c[x->before].key : 0)) == 0;
            if (!match)
                fprintf(stderr, "gap dev %lld at %llu: cause %d/%d after '%s'/'%s' before '%s'\n",
                        (long long)x->dev, (unsigned long long)x->s, y->cause, cause, y->after.text, after,
                        y->before.text);
        }
        listed_ok &= match;
    }
    CHECK(listed_ok);
    CHECK(idle_ok);
    CHECK(r.ngaps == nlisted);
    for (int k = 0; k < GT_GAP_CAUSES; k++)
        CHECK(r.summary.idle_by_cause[k] == by_cause[k]);
    /* idle by site: every gap once */
    uint64_t idle_sum = 0, gaps_sum = 0, gap_total = 0;
    for (size_t i = 0; i < r.nidle_sites; i++) {
        idle_sum += r.idle_sites[i].idle_ns;
        gaps_sum += r.idle_sites[i].gaps;
    }
    for (size_t k = 0; k < ng; k++)
        gap_total += ref[k].e - ref[k].s;
    CHECK(idle_sum == gap_total);
    CHECK(gaps_sum == ng);
    /* per-site sums against the reference */
    int sites_ok = 1;
    for (size_t i = 0; i < r.nidle_sites; i++) {
        uint64_t want = 0;
        for (size_t k = 0; k < ng; k++)
            if (!strcmp(site_text(&sites, ref[k].after >= 0 ? c[ref[k].after].key : 0), r.idle_sites[i].site.text))
                want += ref[k].e - ref[k].s;
        sites_ok &= want == r.idle_sites[i].idle_ns;
    }
    CHECK(sites_ok);
    /* busy: the union over all devices */
    uint64_t busy = 0;
    {
        struct iv *all = calloc(niv, sizeof(*all));
        memcpy(all, iv, niv * sizeof(*iv));
        for (size_t i = 0; i < niv; i++)
            all[i].dev = 0;
        qsort(all, niv, sizeof(*all), iv_cmp);
        uint64_t cs = 0, ce = 0;
        for (size_t i = 0; i < niv; i++) {
            if (i == 0 || all[i].s > ce) {
                busy += ce - cs;
                cs = all[i].s;
                ce = all[i].e;
            } else if (all[i].e > ce) {
                ce = all[i].e;
            }
        }
        busy += ce - cs;
        free(all);
    }
    CHECK(r.summary.busy_ns == (busy < span ? busy : span));
    CHECK(r.ndevices >= 1 && r.ndevices <= (size_t)ndev);
    for (size_t i = 1; i < r.ndevices; i++)
        CHECK(r.devices[i].device > r.devices[i - 1].device);
    gt_gaps_free(g);
    gt_report_free(&r);
    gt_sites_free(&sites);
    free(iv);
    free(c);
    free(ref);
}

/* Gaps of several seconds: coverage in coarser units still decides. */
static void long_gaps(sqlite3 *db)
{
    struct gt_sites sites;
    CHECK(gt_sites_init(&sites, db) == 0);
    struct gt_report r;
    memset(&r, 0, sizeof(r));
    const uint64_t s = 1000000000ull; /* one second */
    r.summary.span_ns = 100 * s;
    struct gt_gaps *g = gt_gaps_new();
    gt_gaps_add(g, 0, 0, s);          /* gap of 9 s */
    gt_gaps_add(g, 0, 10 * s, 11 * s); /* gap of 19 s */
    gt_gaps_add(g, 0, 30 * s, 31 * s); /* gap of 69 s */
    gt_gaps_add(g, 0, 100 * s, 100 * s + 1);
    CHECK(gt_gaps_merge(g, s, &r) == 0);
    /* a 5 s sync in the first; a 9 s copy and 2 s launch in the second;
     * 30 s of launches (three 10 s calls) in the third */
    gt_gaps_call(g, 1, 2 * s, 7 * s, gt_site_index(&sites, 1));
    gt_gaps_call(g, 2, 12 * s, 21 * s, gt_site_index(&sites, 2));
    gt_gaps_call(g, 3, 22 * s, 24 * s, gt_site_index(&sites, 3));
    for (int i = 0; i < 3; i++)
        gt_gaps_call(g, 3, (40 + 10 * (uint64_t)i) * s, (50 + 10 * (uint64_t)i) * s, gt_site_index(&sites, 4));
    gt_gaps_call(g, 0, 99 * s, 100 * s, gt_site_index(&sites, 5));
    CHECK(gt_gaps_report(g, &sites, &r) == 0);
    CHECK(r.ngaps == 3);
    CHECK(r.summary.idle_by_cause[GT_GAP_SYNC] == 9 * s);
    CHECK(r.summary.idle_by_cause[GT_GAP_COPY] == 0);
    CHECK(r.summary.idle_by_cause[GT_GAP_LAUNCH] == 0);
    CHECK(r.summary.idle_by_cause[GT_GAP_HOST] == 19 * s + 69 * s);
    gt_gaps_free(g);
    gt_report_free(&r);

    /* the same third gap with 35 s of launches: now launch-bound */
    memset(&r, 0, sizeof(r));
    r.summary.span_ns = 100 * s;
    g = gt_gaps_new();
    gt_gaps_add(g, 0, 30 * s, 31 * s);
    gt_gaps_add(g, 0, 100 * s, 100 * s + 1);
    CHECK(gt_gaps_merge(g, s, &r) == 0);
    for (int i = 0; i < 7; i++)
        gt_gaps_call(g, 3, (40 + 5 * (uint64_t)i) * s, (45 + 5 * (uint64_t)i) * s, gt_site_index(&sites, 4));
    CHECK(gt_gaps_report(g, &sites, &r) == 0);
    CHECK(r.summary.idle_by_cause[GT_GAP_LAUNCH] == 69 * s);
    CHECK(r.ngaps == 1 && r.gaps[0].cause == GT_GAP_LAUNCH);
    CHECK(r.ngaps == 1 && strcmp(r.gaps[0].after.text, "(no stack)") == 0); /* no call started after it */
    gt_gaps_free(g);
    gt_report_free(&r);
    gt_sites_free(&sites);
}

int main(void)
{
    sqlite3 *db = make_db();
    CHECK(db != NULL);
    if (!db)
        return unit_report("test_gaps");
    for (int order = 0; order < 3; order++)
        for (int ndev = 1; ndev <= 3; ndev++) {
            one_case(db, ndev, 400, 900, order, 100, 150);
            one_case(db, ndev, 60, 4000, order, 1000, 2000);
            one_case(db, ndev, 2000, 300, order, 50, 10);
        }
    one_case(db, 1, 1, 10, 0, 100, 0);  /* one interval: no gaps */
    one_case(db, 2, 2, 10, 2, 100, 0);
    long_gaps(db);
    sqlite3_close(db);
    return unit_report("test_gaps");
}

/* gt_gaps.c: GPU busy time, idle gaps and their causes.
 *
 * Memory is what bounds this on long traces: one interval per GPU
 * operation (16 bytes), then, per gap, 20 bytes of what the host did in
 * it. Calls are not kept: the second pass meets each once, in whatever
 * order the trace holds them, and finds its gaps by a search that starts
 * where the previous call's ended (calls come nearly in time order). */
#include <stdlib.h>
#include <string.h>

#include "analysis/gt_gaps.h"

struct gt_iv {
    uint64_t start, end;
};

/* What the host did in one gap. Coverage is in units of 2^gt_gap_shift(dur)
 * ns, so it fits 32 bits however long the gap. */
struct gt_gapst {
    uint32_t cover[3];   /* sync, copy, launch calls: time overlapping the gap */
    uint32_t after_off;  /* the first call starting at or after its end: how long after */
    uint32_t after_site; /* that call's site + 1; 0: none seen (yet) */
};

struct gt_dev {
    int64_t device;
    struct gt_iv *iv;    /* intervals; after gt_gaps_merge, the busy runs in order */
    size_t n, cap;
    struct gt_gapst *st; /* gap j lies between runs j and j + 1 */
    size_t finger;       /* where the last search ended */
};

/* A gap long enough to be listed. */
struct gt_listed {
    size_t dev, gap;
    uint64_t start, dur;
    uint64_t before_start;  /* the last call starting before the gap */
    uint32_t before_site;   /* + 1; 0: none */
};

struct gt_gaps {
    struct gt_dev *devs;
    size_t ndevs, devcap, last;
    struct gt_listed *listed; /* by start */
    size_t nlisted;
};

struct gt_gaps *gt_gaps_new(void)
{
    return calloc(1, sizeof(struct gt_gaps));
}

void gt_gaps_free(struct gt_gaps *g)
{
    if (!g)
        return;
    for (size_t i = 0; i < g->ndevs; i++) {
        free(g->devs[i].iv);
        free(g->devs[i].st);
    }
    free(g->devs);
    free(g->listed);
    free(g);
}

static struct gt_dev *gt_dev_of(struct gt_gaps *g, int64_t device)
{
    if (g->last < g->ndevs && g->devs[g->last].device == device)
        return &g->devs[g->last];
    for (size_t i = 0; i < g->ndevs; i++)
        if (g->devs[i].device == device) {
            g->last = i;
            return &g->devs[i];
        }
    if (g->ndevs == g->devcap) {
        size_t cap = g->devcap ? g->devcap * 2 : 4;
        struct gt_dev *d = realloc(g->devs, cap * sizeof(*d));
        if (!d)
            return NULL;
        g->devs = d;
        g->devcap = cap;
    }
    struct gt_dev *d = &g->devs[g->ndevs];
    memset(d, 0, sizeof(*d));
    d->device = device;
    g->last = g->ndevs++;
    return d;
}

int gt_gaps_add(struct gt_gaps *g, int64_t device, uint64_t start, uint64_t end)
{
    if (end < start)
        return 0;
    struct gt_dev *d = gt_dev_of(g, device);
    if (!d)
        return -1;
    if (d->n == d->cap) {
        size_t cap = d->cap ? d->cap + d->cap / 2 : 4096;
        struct gt_iv *iv = realloc(d->iv, cap * sizeof(*iv));
        if (!iv)
            return -1;
        d->iv = iv;
        d->cap = cap;
    }
    d->iv[d->n++] = (struct gt_iv){start, end};
    return 0;
}

/* ---- sorting intervals by start, in place (no second copy of tens of
 * millions of them), fast on the nearly sorted input traces give ---- */

static void gt_iv_insertion(struct gt_iv *a, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        struct gt_iv x = a[i];
        size_t j = i;
        while (j > 0 && a[j - 1].start > x.start) {
            a[j] = a[j - 1];
            j--;
        }
        a[j] = x;
    }
}

static void gt_iv_sift(struct gt_iv *a, size_t i, size_t n)
{
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            return;
        if (c + 1 < n && a[c + 1].start > a[c].start)
            c++;
        if (a[i].start >= a[c].start)
            return;
        struct gt_iv t = a[i];
        a[i] = a[c];
        a[c] = t;
        i = c;
    }
}

static void gt_iv_heapsort(struct gt_iv *a, size_t n)
{
    for (size_t i = n / 2; i-- > 0;)
        gt_iv_sift(a, i, n);
    for (size_t i = n; i-- > 1;) {
        struct gt_iv t = a[0];
        a[0] = a[i];
        a[i] = t;
        gt_iv_sift(a, 0, i);
    }
}

static void gt_iv_sort(struct gt_iv *a, size_t n, int depth)
{
    while (n > 24) {
        if (depth-- == 0) {
            gt_iv_heapsort(a, n);
            return;
        }
        /* median of three as the pivot */
        size_t m = n / 2;
        if (a[m].start < a[0].start) {
            struct gt_iv t = a[m]; a[m] = a[0]; a[0] = t;
        }
        if (a[n - 1].start < a[0].start) {
            struct gt_iv t = a[n - 1]; a[n - 1] = a[0]; a[0] = t;
        }
        if (a[n - 1].start < a[m].start) {
            struct gt_iv t = a[n - 1]; a[n - 1] = a[m]; a[m] = t;
        }
        uint64_t p = a[m].start;
        size_t i = 0, j = n - 1;
        for (;;) {
            while (a[i].start < p)
                i++;
            while (a[j].start > p)
                j--;
            if (i >= j)
                break;
            struct gt_iv t = a[i]; a[i] = a[j]; a[j] = t;
            i++;
            j--;
        }
        /* recurse into the smaller side, loop on the larger */
        if (j + 1 < n - j - 1) {
            gt_iv_sort(a, j + 1, depth);
            a += j + 1;
            n -= j + 1;
        } else {
            gt_iv_sort(a + j + 1, n - j - 1, depth);
            n = j + 1;
        }
    }
    gt_iv_insertion(a, n);
}

static void gt_iv_sort_all(struct gt_iv *a, size_t n)
{
    size_t unsorted = 0;
    for (size_t i = 1; i < n; i++)
        unsorted += a[i].start < a[i - 1].start;
    if (!unsorted)
        return;
    int depth = 0;
    for (size_t m = n; m; m >>= 1)
        depth += 2;
    gt_iv_sort(a, n, depth);
}

static int gt_dev_by_id(const void *a, const void *b)
{
    int64_t x = ((const struct gt_dev *)a)->device, y = ((const struct gt_dev *)b)->device;
    return x < y ? -1 : x > y;
}

static int gt_listed_by_start(const void *a, const void *b)
{
    uint64_t x = ((const struct gt_listed *)a)->start, y = ((const struct gt_listed *)b)->start;
    return x < y ? -1 : x > y;
}

int gt_gaps_merge(struct gt_gaps *g, uint64_t min_gap_ns, struct gt_report *r)
{
    uint64_t span = r->summary.span_ns;
    if (g->ndevs > 1)
        qsort(g->devs, g->ndevs, sizeof(*g->devs), gt_dev_by_id);
    g->last = 0;
    size_t listed_cap = 0;
    for (size_t k = 0; k < g->ndevs; k++) {
        struct gt_dev *d = &g->devs[k];
        gt_iv_sort_all(d->iv, d->n);
        /* Busy runs, in place: intervals that overlap or touch are one. */
        size_t w = 0;
        for (size_t i = 0; i < d->n; i++) {
            if (w == 0 || d->iv[i].start > d->iv[w - 1].end)
                d->iv[w++] = d->iv[i];
            else if (d->iv[i].end > d->iv[w - 1].end)
                d->iv[w - 1].end = d->iv[i].end;
        }
        d->n = w;
        uint64_t busy = 0;
        for (size_t i = 0; i < w; i++)
            busy += d->iv[i].end - d->iv[i].start;
        if (w > 1 && !(d->st = calloc(w - 1, sizeof(*d->st))))
            return -1;
        for (size_t j = 0; j + 1 < w; j++) {
            uint64_t dur = d->iv[j + 1].start - d->iv[j].end;
            if (dur < min_gap_ns)
                continue;
            if (g->nlisted == listed_cap) {
                size_t cap = listed_cap ? listed_cap * 2 : 16;
                struct gt_listed *l = realloc(g->listed, cap * sizeof(*l));
                if (!l)
                    return -1;
                g->listed = l;
                listed_cap = cap;
            }
            g->listed[g->nlisted++] = (struct gt_listed){.dev = k, .gap = j, .start = d->iv[j].end, .dur = dur};
        }
        if (r->ndevices < GT_MAX_DEVICES) {
            struct gt_device_idle *di = &r->devices[r->ndevices++];
            di->device = (int)d->device;
            di->busy_ns = busy < span ? busy : span;
            di->idle_ns = span - di->busy_ns;
            di->idle_pct = span ? 100.0 * (double)di->idle_ns / (double)span : 0;
        }
    }
    if (g->nlisted > 1)
        qsort(g->listed, g->nlisted, sizeof(*g->listed), gt_listed_by_start);

    /* Busy over all devices: the union of their runs, merged in order. */
    size_t *pos = calloc(g->ndevs + 1, sizeof(*pos));
    if (!pos)
        return -1;
    uint64_t busy = 0, cur_s = 0, cur_e = 0;
    int any = 0;
    for (;;) {
        struct gt_iv *next = NULL;
        size_t from = 0;
        for (size_t k = 0; k < g->ndevs; k++)
            if (pos[k] < g->devs[k].n && (!next || g->devs[k].iv[pos[k]].start < next->start)) {
                next = &g->devs[k].iv[pos[k]];
                from = k;
            }
        if (!next)
            break;
        pos[from]++;
        if (!any || next->start > cur_e) {
            busy += cur_e - cur_s;
            cur_s = next->start;
            cur_e = next->end;
            any = 1;
        } else if (next->end > cur_e) {
            cur_e = next->end;
        }
    }
    busy += cur_e - cur_s;
    free(pos);
    r->summary.busy_ns = busy < span ? busy : span;
    r->summary.idle_ns = span - r->summary.busy_ns;
    r->summary.idle_pct = span ? 100.0 * (double)r->summary.idle_ns / (double)span : 0;
    return 0;
}

/* Coverage units for a gap of dur ns: a shift that keeps dur under 2^31. */
static unsigned gt_gap_shift(uint64_t dur)
{
    unsigned k = 0;
    while ((dur >> k) >= (1ull << 31))
        k++;
    return k;
}

/* The first gap j of d (0 <= j <= gaps) whose end, the start of run j + 1,
 * lies after t; searched outward from the last answer. */
static size_t gt_first_gap_ending_after(struct gt_dev *d, uint64_t t)
{
    size_t gaps = d->n - 1, lo, hi;
    size_t f = d->finger < gaps ? d->finger : gaps;
    if (f == gaps || d->iv[f + 1].start > t) {
        /* the answer is at or before f */
        size_t step = 1;
        hi = f;
        while (hi > 0) {
            size_t probe = hi > step ? hi - step : 0;
            if (d->iv[probe + 1].start <= t) {
                lo = probe + 1;
                goto search;
            }
            hi = probe;
            step *= 2;
        }
        return d->finger = 0;
    }
    /* the answer is after f */
    lo = f + 1;
    {
        size_t step = 1;
        hi = lo;
        while (hi < gaps && d->iv[hi + 1].start <= t) {
            lo = hi + 1;
            hi = hi + step < gaps ? hi + step : gaps;
            step *= 2;
        }
    }
search:
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (d->iv[mid + 1].start > t)
            hi = mid;
        else
            lo = mid + 1;
    }
    return d->finger = lo;
}

static void gt_cover_add(uint32_t *c, uint64_t v)
{
    uint64_t s = (uint64_t)*c + v;
    *c = s > UINT32_MAX ? UINT32_MAX : (uint32_t)s;
}

void gt_gaps_call(struct gt_gaps *g, int cat, uint64_t start, uint64_t end, uint32_t site)
{
    for (size_t k = 0; k < g->ndevs; k++) {
        struct gt_dev *d = &g->devs[k];
        if (d->n < 2)
            continue;
        size_t gaps = d->n - 1;
        size_t j = gt_first_gap_ending_after(d, start);
        if (j > 0) {
            /* gap j - 1 ended at or before this call's start */
            struct gt_gapst *st = &d->st[j - 1];
            uint64_t off = start - d->iv[j].start;
            uint32_t off32 = off > UINT32_MAX ? UINT32_MAX : (uint32_t)off;
            if (!st->after_site || off32 < st->after_off) {
                st->after_off = off32;
                st->after_site = site + 1;
            }
        }
        if (cat < 1 || cat > 3)
            continue;
        for (size_t i = j; i < gaps && d->iv[i].end < end; i++) {
            uint64_t gs = d->iv[i].end, ge = d->iv[i + 1].start;
            uint64_t s = start > gs ? start : gs, e = end < ge ? end : ge;
            if (e > s)
                gt_cover_add(&d->st[i].cover[cat - 1], (e - s) >> gt_gap_shift(ge - gs));
        }
    }
    if (g->nlisted) {
        /* the first listed gap starting after this call: the call may be
         * the last one before it */
        size_t lo = 0, hi = g->nlisted;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (g->listed[mid].start > start)
                hi = mid;
            else
                lo = mid + 1;
        }
        if (lo < g->nlisted) {
            struct gt_listed *l = &g->listed[lo];
            if (!l->before_site || start >= l->before_start) {
                l->before_start = start;
                l->before_site = site + 1;
            }
        }
    }
}

static int gt_cause(const struct gt_gapst *st, uint64_t dur)
{
    uint64_t half = dur >> gt_gap_shift(dur);
    if ((uint64_t)st->cover[0] * 2 >= half)
        return GT_GAP_SYNC;
    if ((uint64_t)st->cover[1] * 2 >= half)
        return GT_GAP_COPY;
    if ((uint64_t)st->cover[2] * 2 >= half)
        return GT_GAP_LAUNCH;
    return GT_GAP_HOST;
}

static int gt_gap_by_dur(const void *a, const void *b)
{
    uint64_t x = ((const struct gt_gap *)a)->dur_ns, y = ((const struct gt_gap *)b)->dur_ns;
    return x > y ? -1 : x < y;
}

static int gt_idle_by_time(const void *a, const void *b)
{
    uint64_t x = ((const struct gt_idle_site *)a)->idle_ns, y = ((const struct gt_idle_site *)b)->idle_ns;
    return x > y ? -1 : x < y;
}

/* The site of a state's site + 1 (0: no call, which reads as no stack). */
static const struct gt_site *gt_site_plus1(struct gt_sites *sites, uint32_t s1)
{
    return s1 ? gt_site_by_index(sites, s1 - 1) : gt_site_of(sites, 0);
}

int gt_gaps_report(struct gt_gaps *g, struct gt_sites *sites, struct gt_report *r)
{
    /* Idle time by the site that ended each gap, indexed by site; gaps no
     * call came after count for the no-stack site. */
    uint32_t none = gt_site_index(sites, 0);
    size_t nsites = gt_site_count(sites);
    uint64_t *idle = calloc(nsites + 1, sizeof(*idle)), *count = calloc(nsites + 1, sizeof(*count));
    if (!idle || !count) {
        free(idle);
        free(count);
        return -1;
    }
    for (size_t k = 0; k < g->ndevs; k++) {
        struct gt_dev *d = &g->devs[k];
        if (d->n < 2)
            continue;
        uint32_t carry = 0; /* the first call after the next gap, for gaps none started in */
        for (size_t j = d->n - 1; j-- > 0;) {
            struct gt_gapst *st = &d->st[j];
            uint64_t dur = d->iv[j + 1].start - d->iv[j].end;
            if (st->after_site)
                carry = st->after_site;
            st->after_site = carry;
            int cause = gt_cause(st, dur);
            r->summary.idle_by_cause[cause] += dur;
            uint32_t s = carry ? carry - 1 : none;
            if (s < nsites) {
                idle[s] += dur;
                count[s]++;
            }
        }
    }
    /* Listed gaps: the last call before each, carried forward in time. */
    if (g->nlisted) {
        r->gaps = calloc(g->nlisted, sizeof(*r->gaps));
        if (!r->gaps) {
            free(idle);
            free(count);
            return -1;
        }
    }
    uint32_t before = 0;
    uint64_t before_start = 0;
    for (size_t i = 0; i < g->nlisted; i++) {
        struct gt_listed *l = &g->listed[i];
        if (l->before_site && (!before || l->before_start >= before_start)) {
            before = l->before_site;
            before_start = l->before_start;
        }
        const struct gt_gapst *st = &g->devs[l->dev].st[l->gap];
        struct gt_gap *out = &r->gaps[r->ngaps++];
        out->device = (int)g->devs[l->dev].device;
        out->start_ns = l->start;
        out->dur_ns = l->dur;
        out->cause = gt_cause(st, l->dur);
        out->before = *gt_site_plus1(sites, before);
        out->after = *gt_site_plus1(sites, st->after_site); /* propagated above */
    }
    if (r->ngaps > 1)
        qsort(r->gaps, r->ngaps, sizeof(*r->gaps), gt_gap_by_dur);

    size_t n = 0;
    for (size_t s = 0; s < nsites; s++)
        n += count[s] > 0;
    if (n && !(r->idle_sites = calloc(n, sizeof(*r->idle_sites)))) {
        free(idle);
        free(count);
        return -1;
    }
    for (size_t s = 0; s < nsites; s++) {
        if (!count[s])
            continue;
        struct gt_idle_site *x = &r->idle_sites[r->nidle_sites++];
        x->site = *gt_site_by_index(sites, (uint32_t)s);
        x->idle_ns = idle[s];
        x->gaps = count[s];
    }
    free(idle);
    free(count);
    if (r->nidle_sites > 1)
        qsort(r->idle_sites, r->nidle_sites, sizeof(*r->idle_sites), gt_idle_by_time);
    return 0;
}

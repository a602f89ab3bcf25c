/* gt_ranks.c: the ranks of a job compared (docs/ranks.md). Collectives
 * are matched across ranks by (stream, step, place in the step) when every
 * rank has NVTX steps, else by (stream, ordinal): a rank's n-th stream to
 * run a collective and the collective's place on it. The GPU start of a
 * rank's collective is its arrival; the latest arrival is when the
 * collective could begin moving data, so each rank waited (latest -
 * arrival) of its collective's time, and the last rank made them wait. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/gt_ranks.h"
#include "base/gt_err.h"

const char *const gt_rank_fig_names[GT_RFIGS] = {
    "span_ns", "gpu_busy_ns", "gpu_idle_ns", "launch_host_ns", "h2d_bytes", "pageable_h2d_pct", "sync_ns",
    "collective_ns", "collective_wait_ns", "collective_data_ns", "compute_ns", "caused_wait_ns"};

static int gt_dcmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double gt_median(double *v, size_t n)
{
    if (!n)
        return 0;
    qsort(v, n, sizeof(*v), gt_dcmp);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int gt_u64cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The outlier rule on one figure over the rows. */
static void gt_outliers(struct gt_ranks *g, int f, double floor)
{
    size_t n = g->nrows;
    double *v = malloc((n ? n : 1) * sizeof(*v));
    if (!v)
        return;
    for (size_t i = 0; i < n; i++)
        v[i] = g->rows[i].fig[f];
    double med = gt_median(v, n);
    for (size_t i = 0; i < n; i++)
        v[i] = fabs(g->rows[i].fig[f] - med);
    double mad = gt_median(v, n);
    free(v);
    double lim = 3 * mad;
    if (0.10 * fabs(med) > lim)
        lim = 0.10 * fabs(med);
    if (floor > lim)
        lim = floor;
    for (size_t i = 0; i < n; i++) {
        double d = g->rows[i].fig[f] - med;
        g->rows[i].outlier[f] = d > lim ? 1 : d < -lim ? -1 : 0;
    }
}

/* A rank's collective under its matching key: (stream, group, pos) is
 * (stream, step + 1, place in the step) by step, (stream, 0, ordinal) by
 * order. */
struct gt_key {
    uint32_t stream;
    int64_t group;
    uint32_t pos;
    size_t row, coll;
};

static int gt_key_cmp(const void *a, const void *b)
{
    const struct gt_key *x = a, *y = b;
    if (x->stream != y->stream)
        return x->stream < y->stream ? -1 : 1;
    if (x->group != y->group)
        return x->group < y->group ? -1 : 1;
    if (x->pos != y->pos)
        return x->pos < y->pos ? -1 : 1;
    return x->row < y->row ? -1 : x->row > y->row;
}

/* By rank, then its stream and step, then its place on the stream. */
static int gt_key_by_row(const void *a, const void *b)
{
    const struct gt_key *x = a, *y = b;
    if (x->row != y->row)
        return x->row < y->row ? -1 : 1;
    if (x->stream != y->stream)
        return x->stream < y->stream ? -1 : 1;
    if (x->group != y->group)
        return x->group < y->group ? -1 : 1;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* A match under construction: its keys are k[a, b). */
struct gt_span {
    size_t a, b;
    uint64_t first;             /* its earliest arrival */
    uint32_t stream;
    size_t key;                 /* a: the key order breaks ties */
};

static int gt_span_cmp(const void *a, const void *b)
{
    const struct gt_span *x = a, *y = b;
    if (x->stream != y->stream)
        return x->stream < y->stream ? -1 : 1;
    if (x->first != y->first)
        return x->first < y->first ? -1 : 1;
    return x->key < y->key ? -1 : x->key > y->key;
}

/* By step when every rank that ran collectives has one in a step: a rank
 * that skipped or added a collective then shifts the matches of that
 * step only, where by order it would shift every later one. */
static int gt_use_steps(const struct gt_ranks *g)
{
    int any = 0;
    for (size_t i = 0; i < g->nrows; i++) {
        const struct gt_rank_sum *s = g->rows[i].sum;
        if (!s->ncoll)
            continue;
        int has = 0;
        for (size_t c = 0; c < s->ncoll && !has; c++)
            has = s->coll[c].step >= 0;
        if (!has)
            return 0;
        any = 1;
    }
    return any;
}

static uint64_t gt_arrival(const struct gt_ranks *g, const struct gt_key *k)
{
    const struct gt_rank_row *r = &g->rows[k->row];
    return (uint64_t)((int64_t)r->sum->coll[k->coll].start_ns + r->offset_ns);
}

/* Matches the collectives and adds up waits. */
static int gt_match(struct gt_ranks *g)
{
    size_t nk = 0;
    for (size_t i = 0; i < g->nrows; i++)
        nk += g->rows[i].sum->ncoll;
    struct gt_key *k = malloc((nk ? nk : 1) * sizeof(*k));
    uint64_t *arr = malloc((g->nrows ? g->nrows : 1) * sizeof(*arr));
    struct gt_span *sp = NULL;
    if (!k || !arr)
        goto oom;
    g->by_step = gt_use_steps(g);
    nk = 0;
    for (size_t i = 0; i < g->nrows; i++)
        for (size_t c = 0; c < g->rows[i].sum->ncoll; c++) {
            const struct gt_rank_coll *x = &g->rows[i].sum->coll[c];
            k[nk++] = (struct gt_key){x->stream, g->by_step ? x->step + 1 : 0, x->ordinal, i, c};
        }
    if (g->by_step) {
        /* place in the step: count each rank's collectives of a stream and step */
        qsort(k, nk, sizeof(*k), gt_key_by_row);
        for (size_t j = 0, p = 0; j < nk; j++) {
            p = j && k[j].row == k[j - 1].row && k[j].stream == k[j - 1].stream && k[j].group == k[j - 1].group
                    ? p + 1 : 0;
            k[j].pos = (uint32_t)p;
        }
    }
    qsort(k, nk, sizeof(*k), gt_key_cmp);
    size_t nsp = 0, cap = 0;
    for (size_t a = 0; a < nk;) {
        size_t b = a;
        while (b < nk && k[b].stream == k[a].stream && k[b].group == k[a].group && k[b].pos == k[a].pos)
            b++;
        if (nsp == cap) {
            cap = cap ? cap * 2 : 256;
            struct gt_span *v = realloc(sp, cap * sizeof(*v));
            if (!v)
                goto oom;
            sp = v;
        }
        struct gt_span *x = &sp[nsp++];
        x->a = a;
        x->b = b;
        x->stream = k[a].stream;
        x->key = a;
        x->first = UINT64_MAX;
        for (size_t j = a; j < b; j++)
            if (gt_arrival(g, &k[j]) < x->first)
                x->first = gt_arrival(g, &k[j]);
        a = b;
    }
    /* the job's order on each stream: by earliest arrival (by order, the
     * same as the ordinals: each rank's collectives arrive in order) */
    qsort(sp, nsp, sizeof(*sp), gt_span_cmp);
    g->colls = calloc(nsp ? nsp : 1, sizeof(*g->colls));
    if (!g->colls)
        goto oom;
    uint32_t max_ord = 0;
    for (size_t i = 0; i < nsp; i++) {
        struct gt_rank_match *m = &g->colls[i];
        m->stream = sp[i].stream;
        m->ordinal = i && sp[i - 1].stream == m->stream ? g->colls[i - 1].ordinal + 1 : 0;
        if (m->ordinal > max_ord)
            max_ord = m->ordinal;
    }
    if (nsp) {
        size_t ords = (size_t)max_ord + 1;
        g->heat_per = (ords + GT_RANK_HEAT_COLS - 1) / GT_RANK_HEAT_COLS;
        g->heat_cols = (ords + g->heat_per - 1) / g->heat_per;
        g->heat = calloc(g->nrows * g->heat_cols, sizeof(*g->heat));
        if (!g->heat)
            g->heat_cols = 0;
    }
    for (size_t i = 0; i < nsp; i++) {
        size_t a = sp[i].a, b = sp[i].b;
        struct gt_rank_match *m = &g->colls[i];
        m->step = g->by_step ? k[a].group - 1 : -1;
        m->in_step = g->by_step ? k[a].pos : 0;
        m->nranks = b - a;
        m->earliest_ns = sp[i].first;
        for (size_t j = a; j < b; j++) {
            uint64_t t = gt_arrival(g, &k[j]);
            arr[j - a] = t;
            if (j == a || t > m->latest_ns) {
                m->latest_ns = t;
                m->last = k[j].row;
            }
        }
        qsort(arr, b - a, sizeof(*arr), gt_u64cmp);
        size_t nr = b - a;
        m->median_ns = nr % 2 ? arr[nr / 2] : arr[nr / 2 - 1] + (arr[nr / 2] - arr[nr / 2 - 1]) / 2;
        m->late_ns = m->latest_ns - m->median_ns;
        if (g->heat_cols) {
            size_t col = m->ordinal / g->heat_per;
            for (size_t j = a; j < b; j++) {
                uint64_t t = gt_arrival(g, &k[j]);
                double late = t > m->median_ns ? (double)(t - m->median_ns) : 0;
                double *cell = &g->heat[k[j].row * g->heat_cols + col];
                if (col < g->heat_cols && late > *cell)
                    *cell = late;
            }
        }
        const struct gt_rank_sum *ls = g->rows[m->last].sum;
        for (size_t j = a; j < b; j++) {
            struct gt_rank_row *r = &g->rows[k[j].row];
            const struct gt_rank_coll *c = &r->sum->coll[k[j].coll];
            uint64_t t = gt_arrival(g, &k[j]);
            uint64_t dur = c->end_ns > c->start_ns ? c->end_ns - c->start_ns : 0;
            uint64_t w = m->latest_ns - t;
            if (w > dur)
                w = dur; /* the kernel cannot have waited longer than it ran */
            r->fig[GT_RF_COLL_WAIT] += (double)w;
            if (k[j].row != m->last)
                m->wait_ns += w;
            if (k[j].row == m->last) {
                snprintf(m->name, sizeof(m->name), "%s", ls->names[c->name]);
                m->where = c->where;
            }
        }
        struct gt_rank_row *lr = &g->rows[m->last];
        lr->fig[GT_RF_CAUSED_WAIT] += (double)m->wait_ns;
        if (nr > 1 && (double)m->late_ns >= g->floor_ns)
            lr->last_count++;
        if (nr > 1 && (lr->worst_coll == SIZE_MAX || m->late_ns > lr->worst_late_ns)) {
            lr->worst_late_ns = m->late_ns;
            lr->worst_coll = i;
        }
    }
    g->ncolls = nsp;
    free(sp);
    free(k);
    free(arr);
    return 0;
oom:
    free(sp);
    free(k);
    free(arr);
    return -1;
}

/* Rows in rank order: numerically when both ranks are numbers, then by
 * text (pids, for traces without a rank, after the ranks). */
static int gt_row_cmp(const void *a, const void *b)
{
    const struct gt_rank_sum *x = ((const struct gt_rank_row *)a)->sum, *y = ((const struct gt_rank_row *)b)->sum;
    if (x->has_rank != y->has_rank)
        return x->has_rank ? -1 : 1;
    char *ex, *ey;
    long long nx = strtoll(x->rank, &ex, 10), ny = strtoll(y->rank, &ey, 10);
    if (x->has_rank && !*ex && !*ey && x->rank[0] && y->rank[0] && nx != ny)
        return nx < ny ? -1 : 1;
    if (!x->has_rank && x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    int c = strcmp(x->rank, y->rank);
    return c ? c : strcmp(x->path, y->path);
}

int gt_ranks_build(struct gt_ranks *g, const struct gt_rank_sum *v, size_t n)
{
    memset(g, 0, sizeof(*g));
    g->rows = calloc(n ? n : 1, sizeof(*g->rows));
    if (!g->rows) {
        gt_err("ranks: out of memory");
        return -1;
    }
    g->nrows = n;
    g->one_host = 1;
    for (size_t i = 1; i < n; i++)
        if (strcmp(v[i].host, v[0].host) != 0)
            g->one_host = 0;
    double *spans = malloc((n ? n : 1) * sizeof(*spans));
    if (!spans) {
        gt_err("ranks: out of memory");
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        g->rows[i].sum = &v[i];
    qsort(g->rows, n, sizeof(*g->rows), gt_row_cmp);
    for (size_t i = 0; i < n; i++) {
        struct gt_rank_row *r = &g->rows[i];
        const struct gt_rank_sum *s = r->sum;
        r->worst_coll = SIZE_MAX;
        /* one host: one CLOCK_MONOTONIC; several: each trace's clock mapped
         * to wall time at its start (docs/ranks.md, Clocks) */
        r->offset_ns = g->one_host ? 0 : s->start_unix_ns - s->start_ns;
        r->fig[GT_RF_SPAN] = (double)s->s.span_ns;
        r->fig[GT_RF_BUSY] = (double)s->s.busy_ns;
        r->fig[GT_RF_IDLE] = (double)s->s.idle_ns;
        r->fig[GT_RF_LAUNCH_HOST] = (double)s->s.launch_host_ns;
        r->fig[GT_RF_H2D] = (double)s->s.h2d_bytes;
        r->fig[GT_RF_PAGEABLE_PCT] =
            s->s.h2d_bytes ? 100.0 * (double)s->s.pageable_h2d_bytes / (double)s->s.h2d_bytes : 0;
        r->fig[GT_RF_SYNC] = (double)s->s.sync_ns;
        r->fig[GT_RF_COLL] = (double)s->coll_ns;
        r->fig[GT_RF_COMPUTE] = s->s.kernel_ns > s->coll_ns ? (double)(s->s.kernel_ns - s->coll_ns) : 0;
        spans[i] = (double)s->s.span_ns;
        if (!s->complete)
            g->ncrashed++;
    }
    g->median_span_ns = gt_median(spans, n);
    free(spans);
    g->floor_ns = g->median_span_ns * GT_RANK_FLOOR_PCT / 100;
    if (gt_match(g) < 0) {
        gt_err("ranks: out of memory");
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        struct gt_rank_row *r = &g->rows[i];
        /* collectives beyond those kept (GT_RANK_MAX_COLL) count as moving data */
        double w = r->fig[GT_RF_COLL_WAIT];
        r->fig[GT_RF_COLL_DATA] = r->fig[GT_RF_COLL] > w ? r->fig[GT_RF_COLL] - w : 0;
    }
    for (int f = 0; f < GT_RFIGS; f++) {
        double floor = f == GT_RF_H2D ? 1048576.0 : f == GT_RF_PAGEABLE_PCT ? 5.0 : g->floor_ns;
        gt_outliers(g, f, floor);
    }
    g->worst = n;
    double worst = 0, others = n > 1 ? (double)(n - 1) : 1;
    for (size_t i = 0; i < n; i++) {
        struct gt_rank_row *r = &g->rows[i];
        double per_other = r->fig[GT_RF_CAUSED_WAIT] / others;
        r->straggler = n > 1 && r->outlier[GT_RF_CAUSED_WAIT] > 0 &&
                       per_other >= g->median_span_ns * GT_RANK_STRAGGLER_PCT / 100;
        if (r->straggler) {
            g->nstragglers++;
            if (per_other > worst) {
                worst = per_other;
                g->worst = i;
            }
        }
    }
    double top = 0;
    for (size_t i = 0; i < n; i++)
        if (g->rows[i].fig[GT_RF_CAUSED_WAIT] / others > top)
            top = g->rows[i].fig[GT_RF_CAUSED_WAIT] / others;
    g->straggler_wait_pct = g->median_span_ns > 0 ? 100.0 * top / g->median_span_ns : 0;
    double *c = malloc((n ? n : 1) * sizeof(*c)), mx = 0;
    if (c) {
        for (size_t i = 0; i < n; i++) {
            c[i] = g->rows[i].fig[GT_RF_COMPUTE];
            if (c[i] > mx)
                mx = c[i];
        }
        double med = gt_median(c, n);
        g->skew_pct = med > 0 ? 100.0 * (mx - med) / med : 0;
        free(c);
    }
    return 0;
}

void gt_ranks_free(struct gt_ranks *g)
{
    free(g->rows);
    free(g->colls);
    free(g->heat);
    memset(g, 0, sizeof(*g));
}

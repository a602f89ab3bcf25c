/* gt_steps.c: the report's steps section (docs/report.md, Steps): step
 * time p50/p99/max, and for each of the slowest steps what it spent more
 * time on than the median step: GPU idle by cause (with the call that
 * ended the most of it), host time in syncs and in copy calls (with the
 * call site of the most of it).
 *
 * Steps are few next to calls: each is a small accumulator, and only the
 * slowest few keep their time per site. */
#include <ctype.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "analysis/gt_launch.h"
#include "analysis/gt_steps.h"
#include "preload/base/gt_config.h" /* gt_is_step_name, shared with the shim */
#include "base/gt_map.h"

struct gt_step_acc {
    int64_t tid, number;
    char *name;
    uint64_t start, end;
    uint64_t idle[GT_CAUSES];
    uint64_t syncs, sync_ns, copies, copy_ns, copy_bytes;
    int slow;                  /* its place among the slowest + 1; 0: not one */
};

struct gt_stepper {
    struct gt_sites *sites;
    struct gt_step_acc *v;     /* by start */
    size_t n;
    uint64_t *maxend;          /* the latest end of v[0..i] */
    size_t *bytid;             /* v's indexes by (thread, start): a thread's steps do not overlap */
    size_t slow[GT_STEP_SLOWEST];
    struct gt_map per_site[GT_STEP_SLOWEST];  /* what << 32 | site -> ns */
    size_t nslow;
    uint64_t p50;
    char rule[256];
    int failed;
};

int gt_step_name(const char *name)
{
    /* The shim's rule (GPUTRACE_TRIGGER, trigger --steps): one rule for both. */
    return gt_is_step_name(name, NULL);
}

/* The number a name ends with; -1: none. */
static int64_t gt_name_number(const char *name)
{
    size_t n = strlen(name), i = n;
    while (i > 0 && isdigit((unsigned char)name[i - 1]))
        i--;
    if (i == n || n - i > 15)
        return -1;
    return strtoll(name + i, NULL, 10);
}

static int gt_by_start(const void *x, const void *y)
{
    const struct gt_step_acc *a = x, *b = y;
    if (a->start != b->start)
        return a->start < b->start ? -1 : 1;
    if (a->end != b->end)
        return a->end > b->end ? -1 : 1; /* the outer one first */
    return a->tid < b->tid ? -1 : a->tid > b->tid;
}

/* for qsort's comparators; per thread: report -j analyses traces on several */
static __thread const struct gt_step_acc *gt_sort_v;

static int gt_by_tid(const void *x, const void *y)
{
    const struct gt_step_acc *a = &gt_sort_v[*(const size_t *)x], *b = &gt_sort_v[*(const size_t *)y];
    if (a->tid != b->tid)
        return a->tid < b->tid ? -1 : 1;
    if (a->start != b->start)
        return a->start < b->start ? -1 : 1;
    /* v is by start, the outer of two that start together first */
    return *(const size_t *)x < *(const size_t *)y ? -1 : 1;
}

static int gt_by_dur(const void *x, const void *y)
{
    const struct gt_step_acc *a = &gt_sort_v[*(const size_t *)x], *b = &gt_sort_v[*(const size_t *)y];
    uint64_t da = a->end - a->start, db = b->end - b->start;
    if (da != db)
        return da > db ? -1 : 1;
    return a->start < b->start ? -1 : a->start > b->start;
}

static int gt_read(struct gt_trace *t, const char *glob, struct gt_stepper *s)
{
    int64_t nview = 0;
    if (t->schema_version < 6 ||
        gt_trace_int(t, "SELECT count(*) FROM sqlite_master WHERE type = 'view' AND name = 'ranges'", &nview) < 0 ||
        !nview)
        return 0;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(t->db, "SELECT tid, name, start_ns, end_ns FROM ranges WHERE end_ns IS NOT NULL "
                           "AND name IS NOT NULL AND end_ns >= start_ns",
                           -1, &st, NULL) != SQLITE_OK)
        return -1;
    size_t cap = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(st, 1);
        if (!name || (glob ? fnmatch(glob, name, 0) != 0 : !gt_step_name(name)))
            continue;
        if (s->n == cap) {
            cap = cap ? cap * 2 : 64;
            struct gt_step_acc *g = realloc(s->v, cap * sizeof(*g));
            if (!g)
                break;
            s->v = g;
        }
        struct gt_step_acc *a = &s->v[s->n];
        memset(a, 0, sizeof(*a));
        a->tid = sqlite3_column_int64(st, 0);
        a->start = (uint64_t)sqlite3_column_int64(st, 2);
        a->end = (uint64_t)sqlite3_column_int64(st, 3);
        if (!(a->name = strdup(name)))
            break;
        s->n++;
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : -1;
}

int gt_steps_open(struct gt_trace *t, const char *glob, struct gt_sites *sites, const struct gt_window *win,
                  struct gt_stepper **out)
{
    *out = NULL;
    struct gt_stepper *s = calloc(1, sizeof(*s));
    if (!s)
        return -1;
    s->sites = sites;
    snprintf(s->rule, sizeof(s->rule), "%s", glob ? glob : "");
    if (gt_read(t, glob, s) < 0) {
        gt_trace_sql_error(t, "steps");
        gt_steps_free(s);
        return -1;
    }
    if (!s->n) {
        gt_steps_free(s);
        return 0;
    }
    /* a step that starts before the last step on its thread ended (one
     * nested in another) is not a step */
    qsort(s->v, s->n, sizeof(*s->v), gt_by_start);
    size_t *ord = malloc(s->n * sizeof(*ord));
    if (!ord)
        goto oom;
    for (size_t i = 0; i < s->n; i++)
        ord[i] = i;
    gt_sort_v = s->v;
    qsort(ord, s->n, sizeof(*ord), gt_by_tid);
    for (size_t i = 1; i < s->n; i++) {
        struct gt_step_acc *a = &s->v[ord[i]];
        for (size_t j = i; j-- > 0;) {
            struct gt_step_acc *b = &s->v[ord[j]];
            if (b->tid != a->tid)
                break;
            if (b->slow == 0) { /* the last step kept on this thread */
                if (a->start < b->end)
                    a->slow = -1;
                break;
            }
        }
    }
    free(ord);
    size_t k = 0;
    for (size_t i = 0; i < s->n; i++) {
        if (s->v[i].slow < 0) {
            free(s->v[i].name);
            continue;
        }
        s->v[k++] = s->v[i];
    }
    s->n = k;
    /* numbers: from the names when every name has one, else by start */
    int named = 1;
    for (size_t i = 0; i < s->n && named; i++)
        named = gt_name_number(s->v[i].name) >= 0;
    for (size_t i = 0; i < s->n; i++)
        s->v[i].number = named ? gt_name_number(s->v[i].name) : (int64_t)i;
    if (win) {
        k = 0;
        for (size_t i = 0; i < s->n; i++) {
            if (!gt_window_inside(win, s->v[i].start, s->v[i].end)) {
                free(s->v[i].name);
                continue;
            }
            s->v[k++] = s->v[i];
        }
        s->n = k;
        if (!s->n) {
            gt_steps_free(s);
            return 0;
        }
    }
    s->maxend = malloc(s->n * sizeof(*s->maxend));
    s->bytid = malloc(s->n * sizeof(*s->bytid));
    uint64_t *durs = malloc(s->n * sizeof(*durs));
    ord = malloc(s->n * sizeof(*ord));
    if (!s->maxend || !s->bytid || !durs || !ord) {
        free(durs);
        free(ord);
        goto oom;
    }
    for (size_t i = 0; i < s->n; i++) {
        s->maxend[i] = i && s->maxend[i - 1] > s->v[i].end ? s->maxend[i - 1] : s->v[i].end;
        s->bytid[i] = ord[i] = i;
        durs[i] = s->v[i].end - s->v[i].start;
    }
    gt_sort_v = s->v;
    qsort(s->bytid, s->n, sizeof(*s->bytid), gt_by_tid);
    s->p50 = gt_percentile(durs, s->n, 50);
    /* the slowest steps, above the median */
    qsort(ord, s->n, sizeof(*ord), gt_by_dur);
    for (size_t i = 0; i < s->n && s->nslow < GT_STEP_SLOWEST; i++) {
        struct gt_step_acc *a = &s->v[ord[i]];
        if (a->end - a->start <= s->p50)
            break;
        s->slow[s->nslow++] = ord[i];
        a->slow = (int)s->nslow;
    }
    free(durs);
    free(ord);
    *out = s;
    return 0;
oom:
    fprintf(stderr, "gputrace: %s: out of memory\n", t->path);
    gt_steps_free(s);
    return -1;
}

int gt_steps_bounds(const struct gt_stepper *s, int64_t number, uint64_t *start, uint64_t *end, int64_t *lo,
                    int64_t *hi)
{
    if (!s || !s->n)
        return -1;
    *lo = *hi = s->v[0].number;
    for (size_t i = 0; i < s->n; i++) {
        const struct gt_step_acc *a = &s->v[i];
        if (a->number == number) {
            *start = a->start;
            *end = a->end;
            return 1;
        }
        if (a->number < *lo)
            *lo = a->number;
        if (a->number > *hi)
            *hi = a->number;
    }
    return 0;
}

int gt_steps_at(const struct gt_stepper *s, int64_t tid, uint64_t at, int64_t *number)
{
    if (!s || !s->n)
        return 0;
    size_t lo = 0, hi = s->n; /* the first of bytid after (tid, at) */
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        const struct gt_step_acc *a = &s->v[s->bytid[mid]];
        if (a->tid < tid || (a->tid == tid && a->start <= at))
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo > 0) {
        const struct gt_step_acc *a = &s->v[s->bytid[lo - 1]];
        if (a->tid == tid && a->start <= at && at < a->end) {
            *number = a->number;
            return 1;
        }
    }
    /* any thread: v is by start and maxend[i] is the latest end of
     * v[0..i], so from the last step to start by `at` back, only those
     * while maxend > at can hold it (a few: steps of threads that overlap) */
    lo = 0, hi = s->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (s->v[mid].start <= at)
            lo = mid + 1;
        else
            hi = mid;
    }
    int found = 0;
    for (size_t j = lo; j-- > 0 && s->maxend[j] > at;)
        if (at < s->v[j].end) {
            *number = s->v[j].number;
            found = 1;
        }
    return found;
}

static void gt_site_add(struct gt_stepper *s, struct gt_step_acc *a, int what, uint32_t site, uint64_t ns)
{
    if (!a->slow || !ns || site == UINT32_MAX)
        return;
    int64_t *v = gt_map_at(&s->per_site[a->slow - 1], (uint64_t)what << 32 | site);
    if (!v)
        s->failed = 1;
    else
        *v += (int64_t)ns;
}

void gt_steps_call(struct gt_stepper *s, const struct gt_rec *c)
{
    int sync = c->cat == GT_RC_SYNC && c->sync_kind != GT_RSYNC_WAIT_EVENT;
    int copy = c->cat == GT_RC_MEMCPY && c->result == 0 && !c->captured;
    if (!s || (!sync && !copy))
        return;
    /* the thread's last step that started at or before the call */
    size_t lo = 0, hi = s->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        const struct gt_step_acc *m = &s->v[s->bytid[mid]];
        if (m->tid < c->tid || (m->tid == c->tid && m->start <= c->start))
            lo = mid + 1;
        else
            hi = mid;
    }
    if (!lo)
        return;
    struct gt_step_acc *a = &s->v[s->bytid[lo - 1]];
    if (a->tid != c->tid || c->start >= a->end)
        return;
    uint64_t ns = c->end > c->start ? c->end - c->start : 0;
    uint32_t site = a->slow ? gt_site_index(s->sites, c->site_key) : UINT32_MAX;
    if (sync) {
        a->syncs++;
        a->sync_ns += ns;
        gt_site_add(s, a, GT_STEP_SYNCS, site, ns);
    } else {
        a->copies++;
        a->copy_ns += ns;
        a->copy_bytes += c->bytes;
        gt_site_add(s, a, GT_STEP_COPIES, site, ns);
    }
}

void gt_steps_gap(uint64_t start, uint64_t len, int cause, uint32_t site, void *stepper)
{
    struct gt_stepper *s = stepper;
    uint64_t end = start + len;
    /* the first step whose end (or an earlier one's) is past the gap's start */
    size_t lo = 0, hi = s->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (s->maxend[mid] <= start)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo; i < s->n && s->v[i].start < end; i++) {
        struct gt_step_acc *a = &s->v[i];
        uint64_t a0 = a->start > start ? a->start : start, a1 = a->end < end ? a->end : end;
        if (a1 <= a0)
            continue;
        a->idle[cause] += a1 - a0;
        gt_site_add(s, a, cause, site, a1 - a0);
    }
}

static int gt_over_cmp(const void *x, const void *y)
{
    const struct gt_step_over *a = x, *b = y;
    uint64_t ea = a->ns - a->median_ns, eb = b->ns - b->median_ns;
    if (ea != eb)
        return ea > eb ? -1 : 1;
    return a->what - b->what;
}

static uint64_t gt_what(const struct gt_step_acc *a, int what)
{
    return what < GT_CAUSES ? a->idle[what] : what == GT_STEP_SYNCS ? a->sync_ns : a->copy_ns;
}

/* The site with the most of the step's time in `what`; ties: by text. */
static int gt_top_site(struct gt_stepper *s, size_t slow, int what, struct gt_site *out)
{
    const struct gt_map *m = &s->per_site[slow];
    const struct gt_site *best = NULL;
    int64_t best_ns = 0;
    for (size_t i = 0; i < m->slots; i++) {
        if (!m->val[i] || (int)(m->key[i] >> 32) != what)
            continue;
        const struct gt_site *x = gt_site_by_index(s->sites, (uint32_t)m->key[i]);
        if (!best || m->val[i] > best_ns || (m->val[i] == best_ns && strcmp(x->text, best->text) < 0)) {
            best = x;
            best_ns = m->val[i];
        }
    }
    if (best)
        *out = *best;
    return best != NULL;
}

int gt_steps_finish(struct gt_stepper *s, uint64_t t0, uint64_t t1, int any_ops, struct gt_report *r)
{
    struct gt_steps *out = &r->steps;
    if (!s || !s->n)
        return 0;
    if (s->failed)
        return -1;
    uint64_t *scratch = malloc(s->n * sizeof(*scratch));
    if (!scratch)
        return -1;
    uint64_t sum = 0;
    for (size_t i = 0; i < s->n; i++) {
        struct gt_step_acc *a = &s->v[i];
        /* outside the trace's span: before the first GPU work, or after
         * the last */
        uint64_t before = (t0 < a->end ? t0 : a->end), after = (t1 > a->start ? t1 : a->start);
        if (before > a->start)
            a->idle[GT_CAUSE_STARTUP] += before - a->start;
        if (a->end > after)
            a->idle[any_ops ? GT_CAUSE_TEARDOWN : GT_CAUSE_STARTUP] += a->end - after;
        scratch[i] = a->end - a->start;
        sum += scratch[i];
    }
    out->count = s->n;
    snprintf(out->rule, sizeof(out->rule), "%s", s->rule);
    snprintf(out->first_name, sizeof(out->first_name), "%s", s->v[0].name);
    out->mean_ns = sum / s->n;
    out->p50_ns = gt_percentile(scratch, s->n, 50);
    out->p99_ns = gt_percentile(scratch, s->n, 99);
    out->max_ns = gt_percentile(scratch, s->n, 100);
    for (int w = 0; w < GT_STEP_WHATS; w++) {
        for (size_t i = 0; i < s->n; i++)
            scratch[i] = gt_what(&s->v[i], w);
        out->median[w] = gt_percentile(scratch, s->n, 50);
    }
    free(scratch);
    if (s->nslow && !(out->slowest = calloc(s->nslow, sizeof(*out->slowest))))
        return -1;
    for (size_t k = 0; k < s->nslow; k++) {
        const struct gt_step_acc *a = &s->v[s->slow[k]];
        struct gt_step_row *x = &out->slowest[out->nslowest++];
        x->number = a->number;
        x->tid = a->tid;
        snprintf(x->name, sizeof(x->name), "%s", a->name);
        x->start_ns = a->start;
        x->offset_ns = a->start > r->summary.origin_ns ? a->start - r->summary.origin_ns : 0;
        x->dur_ns = a->end - a->start;
        memcpy(x->idle_by_cause, a->idle, sizeof(x->idle_by_cause));
        for (int c = 0; c < GT_CAUSES; c++)
            x->gpu_idle_ns += a->idle[c];
        x->gpu_busy_ns = x->dur_ns > x->gpu_idle_ns ? x->dur_ns - x->gpu_idle_ns : 0;
        x->syncs = a->syncs;
        x->sync_ns = a->sync_ns;
        x->copies = a->copies;
        x->copy_ns = a->copy_ns;
        x->copy_bytes = a->copy_bytes;
        for (int w = 0; w < GT_STEP_WHATS; w++) {
            uint64_t v = gt_what(a, w);
            if (v <= out->median[w])
                continue;
            struct gt_step_over *o = &x->over[x->nover++];
            o->what = w;
            o->ns = v;
            o->median_ns = out->median[w];
            o->has_site = gt_top_site(s, k, w, &o->site);
        }
        qsort(x->over, (size_t)x->nover, sizeof(x->over[0]), gt_over_cmp);
    }
    return 0;
}

void gt_steps_free(struct gt_stepper *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++)
        free(s->v[i].name);
    free(s->v);
    free(s->maxend);
    free(s->bytid);
    for (int k = 0; k < GT_STEP_SLOWEST; k++)
        gt_map_free(&s->per_site[k]);
    free(s);
}

/* gt_categories.c: GPU time by kind of work (docs/report.md, Kernel
 * categories). Over the report: each kernel row of the report's kernel
 * table in its name's category (trace/gt_catrules.h), each copy and memset
 * row of its transfers by kind in `copy` or `memset`: no pass of its own.
 * Per phase and per listed step: one pass over the GPU operations the
 * report's busy time is made of (the kernels, memcpys and memsets views,
 * as gt_phases.c reads them; gpu_activity before version 5), only when the
 * report has phases or steps: each kernel's category looked up once per
 * name; each operation adds the part of its interval inside each phase's
 * ranges and each listed step, and counts in those it starts in.
 *
 * Phases and steps overlap little, but may: their intervals are cut into
 * segments at every boundary, each segment listing the groups (phases,
 * then steps) that cover it, so an operation walks only the segments it
 * spans. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/gt_analyze.h"
#include "trace/gt_catrules.h"

const char *const gt_category_names[GT_CATEGORIES] = {
    "matmul", "attention", "convolution", "elementwise", "reduction", "collective", "copy", "memset", "other",
};
enum { GT_CAT_COPY = 6, GT_CAT_MEMSET = 7 };

struct gt_civ {
    uint64_t a, b;
    size_t group;
};

/* The groups' merged intervals cut at every boundary: segment i is
 * [bound[i], bound[i + 1]), covered by the groups cover[at[i] .. at[i + 1]). */
struct gt_segs {
    uint64_t *bound;
    size_t nbound;
    size_t *at, *cover;
};

/* Kernel names seen, with their category: open addressing over strdup'ed
 * names (as many as the trace has kernel names). */
struct gt_name_cat {
    char **name;
    int *cat;
    size_t cap, n;
};

struct gt_cat_pass {
    struct gt_categories *c;
    struct gt_catrules rules;
    struct gt_name_cat seen;
    struct gt_segs segs;
    size_t ngroups;
    int failed;
};

static int gt_civ_cmp(const void *x, const void *y)
{
    const struct gt_civ *a = x, *b = y;
    if (a->group != b->group)
        return a->group < b->group ? -1 : 1;
    return a->a < b->a ? -1 : a->a > b->a;
}

static int gt_u64_cmp(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return a < b ? -1 : a > b;
}

static int gt_cat_index(struct gt_categories *c, const char *name)
{
    for (size_t i = 0; i < c->n; i++)
        if (strcmp(c->names[i], name) == 0)
            return (int)i;
    return -1;
}

/* The report's categories: the usual ones, then any other a rule names. */
static int gt_cat_names(struct gt_categories *c, const struct gt_catrules *rules)
{
    size_t cap = GT_CATEGORIES + rules->n;
    c->names = calloc(cap, sizeof(*c->names));
    if (!c->names)
        return -1;
    for (size_t i = 0; i < GT_CATEGORIES; i++)
        snprintf(c->names[c->n++], GT_CAT_NAME, "%s", gt_category_names[i]);
    for (size_t i = 0; i < rules->n; i++)
        if (gt_cat_index(c, rules->v[i].category) < 0)
            snprintf(c->names[c->n++], GT_CAT_NAME, "%s", rules->v[i].category);
    return 0;
}

static int gt_name_cat_of(struct gt_cat_pass *p, const char *name)
{
    struct gt_name_cat *s = &p->seen;
    if (!name)
        return gt_cat_index(p->c, "other");
    if (s->n * 2 >= s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 256;
        char **nm = calloc(cap, sizeof(*nm));
        int *ct = calloc(cap, sizeof(*ct));
        if (!nm || !ct) {
            free(nm);
            free(ct);
            return -1;
        }
        for (size_t i = 0; i < s->cap; i++) {
            if (!s->name[i])
                continue;
            size_t j = gt_map_hash_text(s->name[i]) & (cap - 1);
            while (nm[j])
                j = (j + 1) & (cap - 1);
            nm[j] = s->name[i];
            ct[j] = s->cat[i];
        }
        free(s->name);
        free(s->cat);
        s->name = nm;
        s->cat = ct;
        s->cap = cap;
    }
    size_t j = gt_map_hash_text(name) & (s->cap - 1);
    for (; s->name[j]; j = (j + 1) & (s->cap - 1))
        if (strcmp(s->name[j], name) == 0)
            return s->cat[j];
    if (!(s->name[j] = strdup(name)))
        return -1;
    s->cat[j] = gt_cat_index(p->c, gt_catrules_match(&p->rules, name));
    s->n++;
    return s->cat[j];
}

/* Merges each group's intervals and cuts them into segments. */
static int gt_segs_build(struct gt_segs *s, struct gt_civ *v, size_t n)
{
    qsort(v, n, sizeof(*v), gt_civ_cmp);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (v[i].b <= v[i].a)
            continue;
        if (k && v[k - 1].group == v[i].group && v[i].a <= v[k - 1].b) {
            if (v[i].b > v[k - 1].b)
                v[k - 1].b = v[i].b;
        } else {
            v[k++] = v[i];
        }
    }
    n = k;
    if (!n)
        return 0;
    s->bound = malloc(2 * n * sizeof(*s->bound));
    if (!s->bound)
        return -1;
    for (size_t i = 0; i < n; i++) {
        s->bound[2 * i] = v[i].a;
        s->bound[2 * i + 1] = v[i].b;
    }
    qsort(s->bound, 2 * n, sizeof(*s->bound), gt_u64_cmp);
    size_t nb = 0;
    for (size_t i = 0; i < 2 * n; i++)
        if (!nb || s->bound[nb - 1] != s->bound[i])
            s->bound[nb++] = s->bound[i];
    s->nbound = nb;
    /* count, then fill, each segment's covering groups */
    s->at = calloc(nb + 1, sizeof(*s->at));
    if (!s->at)
        return -1;
    for (int fill = 0; fill < 2; fill++) {
        size_t *next = NULL;
        if (fill) {
            for (size_t i = 1; i <= nb; i++)
                s->at[i] += s->at[i - 1];
            s->cover = malloc((s->at[nb] + 1) * sizeof(*s->cover));
            next = malloc((nb + 1) * sizeof(*next));
            if (!s->cover || !next) {
                free(next);
                return -1;
            }
            memcpy(next, s->at, (nb + 1) * sizeof(*next));
        }
        for (size_t i = 0; i < n; i++) {
            uint64_t *lo = bsearch(&v[i].a, s->bound, nb, sizeof(*s->bound), gt_u64_cmp);
            for (size_t j = (size_t)(lo - s->bound); j + 1 < nb && s->bound[j] < v[i].b; j++) {
                if (fill)
                    s->cover[next[j]++] = v[i].group;
                else
                    s->at[j + 1]++;
            }
        }
        free(next);
    }
    return 0;
}

/* The segment holding x, or nbound - 1 (none) when x is outside them all. */
static size_t gt_segs_find(const struct gt_segs *s, uint64_t x)
{
    if (!s->nbound || x < s->bound[0] || x >= s->bound[s->nbound - 1])
        return s->nbound ? s->nbound - 1 : 0;
    size_t lo = 0, hi = s->nbound - 1; /* bound[lo] <= x < bound[hi] */
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (s->bound[mid] <= x)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

static void gt_cat_add(struct gt_cat_pass *p, int cat, uint64_t start, uint64_t end)
{
    struct gt_categories *c = p->c;
    const struct gt_segs *s = &p->segs;
    if (s->nbound < 2)
        return;
    size_t first = gt_segs_find(s, start);
    if (first + 1 < s->nbound)
        for (size_t k = s->at[first]; k < s->at[first + 1]; k++) {
            size_t g = s->cover[k];
            if (g < c->nphases)
                c->phase_count[g * c->n + (size_t)cat]++;
            else
                c->step_count[(g - c->nphases) * c->n + (size_t)cat]++;
        }
    /* the time: every segment the operation overlaps */
    size_t j = start < s->bound[0] ? 0 : first;
    for (; j + 1 < s->nbound && s->bound[j] < end; j++) {
        uint64_t lo = s->bound[j] > start ? s->bound[j] : start;
        uint64_t hi = s->bound[j + 1] < end ? s->bound[j + 1] : end;
        if (hi <= lo)
            continue;
        for (size_t k = s->at[j]; k < s->at[j + 1]; k++) {
            size_t g = s->cover[k];
            if (g < c->nphases)
                c->phase_ns[g * c->n + (size_t)cat] += hi - lo;
            else
                c->step_ns[(g - c->nphases) * c->n + (size_t)cat] += hi - lo;
        }
    }
}

/* The phases' top-level ranges and the listed steps, as groups. */
static int gt_cat_groups(struct gt_trace *t, const struct gt_analyze_opts *o, struct gt_report *r,
                         struct gt_cat_pass *p)
{
    size_t n = 0, cap = 16;
    struct gt_civ *v = malloc(cap * sizeof(*v));
    if (!v)
        return -1;
    int rc = 0;
    sqlite3_stmt *st = NULL;
    /* ranges as gt_phases.c reads them: top-level push ranges that ended */
    if (r->nphases &&
        sqlite3_prepare_v2(t->db, "SELECT COALESCE(name, '(unnamed)'), start_ns, end_ns FROM ranges "
                                  "WHERE kind = 'push' AND depth = 0 AND end_ns IS NOT NULL",
                           -1, &st, NULL) != SQLITE_OK) {
        gt_trace_sql_error(t, "ranges");
        free(v);
        return -1;
    }
    while (st && sqlite3_step(st) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(st, 0);
        uint64_t a = (uint64_t)sqlite3_column_int64(st, 1), b = (uint64_t)sqlite3_column_int64(st, 2);
        if (o->win && !gt_window_inside(o->win, a, b))
            continue;
        size_t ph = r->nphases;
        for (size_t i = 0; i < r->nphases && name; i++)
            if (strcmp(r->phases[i].name, name) == 0) {
                ph = i;
                break;
            }
        if (ph == r->nphases)
            continue;
        if (n == cap) {
            cap *= 2;
            struct gt_civ *g = realloc(v, cap * sizeof(*v));
            if (!g) {
                rc = -1;
                break;
            }
            v = g;
        }
        v[n++] = (struct gt_civ){a, b, ph};
    }
    sqlite3_finalize(st);
    for (size_t i = 0; rc == 0 && i < r->steps.nslowest; i++) {
        if (n == cap) {
            cap *= 2;
            struct gt_civ *g = realloc(v, cap * sizeof(*v));
            if (!g) {
                rc = -1;
                break;
            }
            v = g;
        }
        const struct gt_step_row *s = &r->steps.slowest[i];
        v[n++] = (struct gt_civ){s->start_ns, s->start_ns + s->dur_ns, r->nphases + i};
    }
    if (rc == 0)
        rc = gt_segs_build(&p->segs, v, n);
    free(v);
    return rc;
}

/* The report's GPU operations, as gt_phases.c's busy time reads them:
 * (kind 0 kernel 1 copy 2 memset, name, start, end, the start that places
 * it in a window: its call's, else its own). */
static const char *gt_cat_sql(int gpu_times, int version)
{
    /* before version 5 the kernels view left out the GPU work of no
     * recorded call; gpu_activity has it all */
    if (gpu_times && version < 5)
        return "SELECT CASE x.kind WHEN 'kernel' THEN 0 WHEN 'memcpy' THEN 1 ELSE 2 END, x.name, x.start_ns, "
               "x.end_ns, COALESCE(c.start_ns, x.start_ns) FROM gpu_activity x "
               "LEFT JOIN api_calls c ON c.id = x.api_call_id";
    return gpu_times
        ? "SELECT x.kind, x.name, x.start_ns, x.end_ns, COALESCE(c.start_ns, x.start_ns) FROM ("
          "SELECT 0 AS kind, name, api_call_id, start_ns, end_ns FROM kernels WHERE time_source = 'gpu' UNION ALL "
          "SELECT 1, NULL, api_call_id, start_ns, end_ns FROM memcpys WHERE time_source = 'gpu' UNION ALL "
          "SELECT 2, NULL, api_call_id, start_ns, end_ns FROM memsets WHERE time_source = 'gpu') x "
          "LEFT JOIN api_calls c ON c.id = x.api_call_id"
        : "SELECT x.kind, x.name, x.start_ns, x.end_ns, COALESCE(c.start_ns, x.start_ns) FROM ("
          "SELECT 0 AS kind, name, api_call_id, start_ns, end_ns FROM kernels "
          "WHERE time_source = 'host' AND result = 0 AND captured = 0 UNION ALL "
          "SELECT 1, NULL, api_call_id, start_ns, end_ns FROM memcpys "
          "WHERE time_source = 'host' AND result = 0 AND captured = 0 UNION ALL "
          "SELECT 2, NULL, api_call_id, start_ns, end_ns FROM memsets "
          "WHERE time_source = 'host' AND result = 0 AND captured = 0) x "
          "LEFT JOIN api_calls c ON c.id = x.api_call_id";
}

static int gt_cat_alloc(struct gt_categories *c)
{
    size_t np = c->nphases * c->n, ns = c->nsteps * c->n;
    c->count = calloc(c->n, sizeof(*c->count));
    c->gpu_ns = calloc(c->n, sizeof(*c->gpu_ns));
    c->phase_count = calloc(np + 1, sizeof(*c->phase_count));
    c->phase_ns = calloc(np + 1, sizeof(*c->phase_ns));
    c->step_count = calloc(ns + 1, sizeof(*c->step_count));
    c->step_ns = calloc(ns + 1, sizeof(*c->step_ns));
    return c->count && c->gpu_ns && c->phase_count && c->phase_ns && c->step_count && c->step_ns ? 0 : -1;
}

/* The report's own tables, by category. */
static void gt_cat_whole(struct gt_cat_pass *p, const struct gt_report *r)
{
    struct gt_categories *c = p->c;
    for (size_t i = 0; i < r->nkernels; i++) {
        const struct gt_kernel_row *k = &r->kernels[i];
        /* the scan's name for a kernel the trace does not name */
        const char *name = strcmp(k->name, "(unknown kernel)") == 0 ? NULL : k->name;
        int cat = gt_name_cat_of(p, name);
        if (cat < 0)
            continue;
        c->count[cat] += k->count;
        c->gpu_ns[cat] += k->total_ns;
    }
    for (size_t i = 0; i < r->nxfer_kind; i++) {
        const struct gt_xfer_row *x = &r->xfer_kind[i];
        int cat = x->kind == GT_XK_MEMSET ? GT_CAT_MEMSET : GT_CAT_COPY;
        c->count[cat] += x->count;
        c->gpu_ns[cat] += x->total_ns;
    }
    for (size_t i = 0; i < c->n; i++)
        c->total_ns += c->gpu_ns[i];
}

/* Each phase's and listed step's operations: one pass over the views. */
static int gt_cat_groups_pass(struct gt_trace *t, int gpu_times, const struct gt_analyze_opts *o,
                              struct gt_cat_pass *p)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(t->db, gt_cat_sql(gpu_times, t->schema_version), -1, &st, NULL) != SQLITE_OK) {
        gt_trace_sql_error(t, "kernel categories");
        return -1;
    }
    int step, rc = 0;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        if (o->win && !gt_window_has(o->win, (uint64_t)sqlite3_column_int64(st, 4)))
            continue;
        int kind = sqlite3_column_int(st, 0);
        int cat = kind == 1 ? GT_CAT_COPY
                : kind == 2 ? GT_CAT_MEMSET
                            : gt_name_cat_of(p, (const char *)sqlite3_column_text(st, 1));
        if (cat < 0) {
            rc = -1;
            break;
        }
        gt_cat_add(p, cat, (uint64_t)sqlite3_column_int64(st, 2), (uint64_t)sqlite3_column_int64(st, 3));
    }
    sqlite3_finalize(st);
    if (rc == 0 && step != SQLITE_DONE) {
        gt_trace_sql_error(t, "kernel categories");
        return -1;
    }
    if (rc < 0)
        fprintf(stderr, "gputrace: %s: kernel categories: out of memory\n", t->path);
    return rc;
}

int gt_categories(struct gt_trace *t, int gpu_times, const struct gt_analyze_opts *o, struct gt_report *r)
{
    struct gt_categories *c = &r->cats;
    struct gt_cat_pass p;
    memset(&p, 0, sizeof(p));
    p.c = c;
    if (gt_catrules_load(t, o->categories, &p.rules) < 0)
        return -1;
    c->nphases = r->nphases;
    c->nsteps = r->steps.nslowest;
    int rc = gt_cat_names(c, &p.rules) == 0 && gt_cat_alloc(c) == 0 ? 0 : -1;
    if (rc == 0)
        gt_cat_whole(&p, r);
    if (rc == 0 && (c->nphases || c->nsteps)) {
        rc = gt_cat_groups(t, o, r, &p);
        if (rc == 0 && p.segs.nbound > 1)
            rc = gt_cat_groups_pass(t, gpu_times, o, &p);
    } else if (rc < 0) {
        fprintf(stderr, "gputrace: %s: kernel categories: out of memory\n", t->path);
    }
    for (size_t i = 0; i < p.seen.cap; i++)
        free(p.seen.name[i]);
    free(p.seen.name);
    free(p.seen.cat);
    free(p.segs.bound);
    free(p.segs.at);
    free(p.segs.cover);
    gt_catrules_free(&p.rules);
    return rc;
}

void gt_categories_free(struct gt_categories *c)
{
    free(c->names);
    free(c->count);
    free(c->gpu_ns);
    free(c->phase_count);
    free(c->phase_ns);
    free(c->step_count);
    free(c->step_ns);
    memset(c, 0, sizeof(*c));
}

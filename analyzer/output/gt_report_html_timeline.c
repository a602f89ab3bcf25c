/* gt_report_html_timeline.c: the HTML report's interactive timeline.
 *
 * The C side fills the lanes from the rows the report's own pass reads (a
 * tap in gt_analyze: no pass of its own; NVTX ranges from the ranges view
 * after it) and writes them into the page as JSON inside
 * <script type="application/json">; the script
 * (gt_report_html_timeline.js, embedded at build time, as is its style)
 * draws them on a canvas, zooms and pans, and links gaps and their rows.
 *
 * Size is bounded whatever the trace: a lane past GT_TL_LANE_CAP items
 * merges neighbours into blocks at most a quantum long (the quantum
 * doubled until the lane fits),
 * and the whole page past GT_TL_TOTAL_CAP items merges its fullest lanes
 * further. Each lane carries its item count before merging and its
 * quantum, so the page can say what it drew merged.
 *
 * Every trace string reaches the page only as a JSON string in which '<',
 * '>', '&', U+2028 and U+2029 are escaped (no "</script>" or "<!--" can
 * appear) and bytes that are not UTF-8 are U+FFFD; the script shows
 * strings with textContent and canvas text only. */
#include <stdlib.h>
#include <string.h>

#include "base/gt_fmt.h"
#include "output/gt_report_html_timeline.h"
#include "trace/gt_scan.h"

/* The assets, made from the .js and .css files by xxd -i (analyzer.mk). */
#include "gt_report_html_timeline_css.h"
#include "gt_report_html_timeline_js.h"

#define GT_TL_TOTAL_CAP 200000

/* ---- loading ---- */

static uint32_t gt_tl_name(struct gt_tl *tl, const char *s)
{
    if (!s)
        s = "(unnamed)";
    uint64_t h = gt_map_hash_text(s);
    /* probe on collisions: the slot keyed h, h+1, ... that holds this text */
    for (uint64_t k = h;; k++) {
        int64_t *slot = gt_map_at(&tl->name_idx, k);
        if (!slot)
            return GT_TL_MIXED;
        if (*slot) {
            if (strcmp(tl->names[*slot - 1], s) == 0)
                return (uint32_t)(*slot - 1);
            continue;
        }
        if (tl->nnames == tl->capnames) {
            size_t cap = tl->capnames ? tl->capnames * 2 : 64;
            char **nn = realloc(tl->names, cap * sizeof(*nn));
            if (!nn)
                return GT_TL_MIXED;
            tl->names = nn;
            tl->capnames = cap;
        }
        char *copy = strdup(s);
        if (!copy)
            return GT_TL_MIXED;
        tl->names[tl->nnames++] = copy;
        *slot = (int64_t)tl->nnames;
        return (uint32_t)(tl->nnames - 1);
    }
}

static struct gt_tl_lane *gt_tl_lane_new(struct gt_tl *tl, int kind, int64_t a, int64_t b, const char *label)
{
    size_t have = 0;
    for (size_t i = 0; i < tl->nlanes; i++)
        have += tl->lanes[i].kind == kind;
    if (have >= GT_TL_MAX_LANES) {
        tl->dropped[kind]++;
        return NULL;
    }
    if (tl->nlanes == tl->caplanes) {
        size_t cap = tl->caplanes ? tl->caplanes * 2 : 16;
        struct gt_tl_lane *nl = realloc(tl->lanes, cap * sizeof(*nl));
        if (!nl)
            return NULL;
        tl->lanes = nl;
        tl->caplanes = cap;
    }
    struct gt_tl_lane *l = &tl->lanes[tl->nlanes];
    memset(l, 0, sizeof(*l));
    l->cap = 64; /* grown as items come, up to GT_TL_LANE_CAP + 1 */
    l->v = malloc(l->cap * sizeof(*l->v));
    l->label = strdup(label);
    if (!l->v || !l->label) {
        free(l->v);
        free(l->label);
        return NULL;
    }
    l->kind = kind;
    l->a = a;
    l->b = b;
    tl->nlanes++;
    return l;
}

static int gt_tl_item_cmp(const void *pa, const void *pb)
{
    const struct gt_tl_item *x = pa, *y = pb;
    if (x->level != y->level)
        return x->level < y->level ? -1 : 1;
    return x->s < y->s ? -1 : x->s > y->s;
}

/* Whether an item [s, e) joins block p: it starts less than q after p
 * ends, and the block stays at most q long (a busy stream stays many
 * blocks, each about a pixel at full view, not one that hides its names). */
static int gt_tl_near(const struct gt_tl_item *p, int64_t s, int64_t e, uint64_t q)
{
    int64_t end = e > p->e ? e : p->e, start = s < p->s ? s : p->s;
    return s - p->e < (int64_t)q && end - start <= (int64_t)q;
}

static void gt_tl_join(struct gt_tl_item *p, int64_t s, int64_t e, uint32_t name, uint32_t n)
{
    if (s < p->s)
        p->s = s;
    if (e > p->e)
        p->e = e;
    if (p->name != name)
        p->name = GT_TL_MIXED;
    p->n += n;
}

/* Merges each level's neighbours closer than l->q (items sorted by level,
 * then start). */
static void gt_tl_remerge(struct gt_tl_lane *l)
{
    qsort(l->v, l->n, sizeof(*l->v), gt_tl_item_cmp);
    size_t j = 0;
    for (size_t i = 0; i < l->n; i++) {
        struct gt_tl_item *p = j ? &l->v[j - 1] : NULL;
        if (p && p->level == l->v[i].level && gt_tl_near(p, l->v[i].s, l->v[i].e, l->q)) {
            gt_tl_join(p, l->v[i].s, l->v[i].e, l->v[i].name, l->v[i].n);
        } else {
            l->v[j++] = l->v[i];
        }
    }
    l->n = j;
}

/* Doubles the quantum (starting from the span over the cap) until the lane
 * holds at most `fit` items. While the report's pass reads the trace the
 * span is its estimate (gt_tl_begin), or, without one, the lane's extent
 * so far. */
static void gt_tl_squeeze(struct gt_tl *tl, struct gt_tl_lane *l, size_t fit)
{
    while (l->n > fit) {
        if (!l->q) {
            uint64_t span = tl->span;
            if (!span) {
                int64_t lo = l->v[0].s, hi = l->v[0].e;
                for (size_t i = 1; i < l->n; i++) {
                    lo = l->v[i].s < lo ? l->v[i].s : lo;
                    hi = l->v[i].e > hi ? l->v[i].e : hi;
                }
                span = (uint64_t)(hi - lo);
            }
            l->q = span / GT_TL_LANE_CAP ? span / GT_TL_LANE_CAP : 1;
        } else {
            l->q *= 2;
        }
        gt_tl_remerge(l);
    }
}

static void gt_tl_add(struct gt_tl *tl, struct gt_tl_lane *l, int64_t s, int64_t e, uint32_t name, int32_t level)
{
    l->total++;
    if (e < s)
        e = s;
    if (l->q) {
        /* already merging: join the last item of this level when near
         * (rows come about in start order; any order stays correct) */
        for (size_t i = l->n; i-- > 0;) {
            struct gt_tl_item *p = &l->v[i];
            if (p->level != level)
                continue;
            if (gt_tl_near(p, s, e, l->q)) {
                gt_tl_join(p, s, e, name, 1);
                return;
            }
            break;
        }
    }
    if (l->n == l->cap) {
        size_t cap = l->cap * 2 > GT_TL_LANE_CAP + 1 ? GT_TL_LANE_CAP + 1 : l->cap * 2;
        struct gt_tl_item *v = realloc(l->v, cap * sizeof(*v));
        if (!v) {
            l->total--; /* left out: the page counts only what it holds */
            return;
        }
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = (struct gt_tl_item){s, e, name, 1, level};
    if (l->n > GT_TL_LANE_CAP)
        gt_tl_squeeze(tl, l, GT_TL_LANE_CAP * 3 / 4);
}

static int gt_tl_has_view(struct gt_trace *t, const char *name)
{
    sqlite3_stmt *q;
    int has = 0;
    if (sqlite3_prepare_v2(t->db, "SELECT 1 FROM sqlite_master WHERE name = ?", -1, &q, NULL) != SQLITE_OK)
        return 0;
    sqlite3_bind_text(q, 1, name, -1, SQLITE_STATIC);
    has = sqlite3_step(q) == SQLITE_ROW;
    sqlite3_finalize(q);
    return has;
}

/* "thread 1234" or "NAME (tid 1234)", the name NVTX gave it first. */
static void gt_tl_thread_label(struct gt_trace *t, int64_t tid, const char *what, char *buf, size_t len)
{
    char *name = NULL;
    static const char *const sqls[] = {"SELECT name FROM thread_names WHERE tid = ?",
                                       "SELECT name FROM threads WHERE tid = ?"};
    for (int i = 0; i < 2 && !name; i++) {
        sqlite3_stmt *q;
        if (i == 0 && !gt_tl_has_view(t, "thread_names"))
            continue;
        if (sqlite3_prepare_v2(t->db, sqls[i], -1, &q, NULL) != SQLITE_OK)
            continue;
        sqlite3_bind_int64(q, 1, tid);
        if (sqlite3_step(q) == SQLITE_ROW && sqlite3_column_text(q, 0) && *sqlite3_column_text(q, 0))
            name = strdup((const char *)sqlite3_column_text(q, 0));
        sqlite3_finalize(q);
    }
    if (name)
        snprintf(buf, len, "%s%s (tid %lld)", what, name, (long long)tid);
    else
        snprintf(buf, len, "%sthread %lld", what, (long long)tid);
    free(name);
}

/* One query's rows into lanes: columns key a, key b, start, end, name,
 * level (levels < 0: pack start/end ranges into free levels). */
static int gt_tl_rows(struct gt_trace *t, struct gt_tl *tl, const char *sql, int kind)
{
    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(t->db, sql, -1, &q, NULL) != SQLITE_OK) {
        gt_trace_sql_error(t, "timeline");
        return -1;
    }
    struct gt_tl_lane *l = NULL;
    int have = 0, packed = 0;
    int64_t ca = 0, cb = 0;
    int64_t busy[GT_TL_MAX_LEVELS]; /* packed levels: each one's last end */
    int rc;
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        int64_t a = sqlite3_column_int64(q, 0), b = sqlite3_column_int64(q, 1);
        int64_t s = sqlite3_column_int64(q, 2) - (int64_t)tl->t0;
        int64_t e = sqlite3_column_type(q, 3) == SQLITE_NULL ? (int64_t)tl->span
                                                             : sqlite3_column_int64(q, 3) - (int64_t)tl->t0;
        int level = sqlite3_column_int(q, 5);
        int start_end = sqlite3_column_type(q, 5) == SQLITE_NULL;
        if (!have || a != ca || b != cb || start_end != packed) {
            char label[200];
            if (kind == GT_TL_STREAM)
                snprintf(label, sizeof(label), "GPU %lld stream %lld", (long long)a, (long long)b);
            else
                gt_tl_thread_label(t, a, kind == GT_TL_THREAD ? "" : start_end ? "NVTX start/end, " : "NVTX, ",
                                   label, sizeof(label));
            l = gt_tl_lane_new(tl, kind, a, b, label);
            have = 1;
            ca = a;
            cb = b;
            packed = start_end;
            for (int i = 0; i < GT_TL_MAX_LEVELS; i++)
                busy[i] = INT64_MIN;
        }
        if (!l)
            continue;
        if (start_end) {
            /* start/end ranges carry no depth: the first level free at s */
            level = 0;
            while (level < GT_TL_MAX_LEVELS && busy[level] > s)
                level++;
            if (level < GT_TL_MAX_LEVELS)
                busy[level] = e;
        }
        if (level < 0 || level >= GT_TL_MAX_LEVELS) {
            tl->dropped_ranges++;
            continue;
        }
        if (level + 1 > l->levels)
            l->levels = level + 1;
        gt_tl_add(tl, l, s, e, gt_tl_name(tl, (const char *)sqlite3_column_text(q, 4)), level);
    }
    sqlite3_finalize(q);
    if (rc != SQLITE_DONE) {
        gt_trace_sql_error(t, "timeline");
        return -1;
    }
    return 0;
}

static int gt_tl_lane_cmp(const void *pa, const void *pb)
{
    const struct gt_tl_lane *x = pa, *y = pb;
    /* streams first by device and stream; then each thread's calls, then
     * its NVTX lanes (ranges kind, push before start/end) */
    int gx = x->kind == GT_TL_STREAM, gy = y->kind == GT_TL_STREAM;
    if (gx != gy)
        return gx ? -1 : 1;
    if (x->a != y->a)
        return x->a < y->a ? -1 : 1;
    if (x->kind != y->kind)
        return x->kind < y->kind ? -1 : 1;
    return x->b < y->b ? -1 : x->b > y->b;
}

/* ---- calls and GPU work, as the report's own pass reads them ---- */

/* While the report's pass runs (gt_tl_begin to gt_tl_finish), items keep
 * trace times (tl->t0 is 0): the report's start is known only after. */
struct gt_tl_scan {
    struct gt_tl *tl;
    struct gt_trace *t;
    int gpu_times;
    struct gt_map streams, threads; /* key -> lane index + 1; -1: left out */
    struct gt_map by_ptr;           /* interned text's address -> name index + 1 */
    struct gt_map has_ops;          /* calls (gt_rec.link) with GPU records kept apart */
};

/* The lane of a stream or a thread, made on first sight; NULL past the cap. */
static struct gt_tl_lane *gt_tl_lane_at(struct gt_tl_scan *w, int kind, int64_t a, int64_t b)
{
    struct gt_map *m = kind == GT_TL_STREAM ? &w->streams : &w->threads;
    int64_t *slot = gt_map_at(m, kind == GT_TL_STREAM ? (uint64_t)a << 48 ^ (uint64_t)b : (uint64_t)a);
    if (!slot || *slot < 0)
        return NULL;
    if (*slot)
        return &w->tl->lanes[*slot - 1];
    char label[200];
    if (kind == GT_TL_STREAM)
        snprintf(label, sizeof(label), "GPU %lld stream %lld", (long long)a, (long long)b);
    else
        gt_tl_thread_label(w->t, a, "", label, sizeof(label));
    struct gt_tl_lane *l = gt_tl_lane_new(w->tl, kind, a, b, label);
    *slot = l ? (int64_t)(l - w->tl->lanes) + 1 : -1;
    return l;
}

/* A name index for text the scan interned (or a static string): looked
 * up once per address. */
static uint32_t gt_tl_name_ptr(struct gt_tl_scan *w, const char *s)
{
    if (!s)
        return gt_tl_name(w->tl, NULL);
    int64_t *slot = gt_map_at(&w->by_ptr, (uint64_t)(uintptr_t)s);
    if (!slot)
        return gt_tl_name(w->tl, s);
    if (!*slot) {
        uint32_t i = gt_tl_name(w->tl, s);
        if (i == GT_TL_MIXED)
            return i;
        *slot = (int64_t)i + 1;
    }
    return (uint32_t)(*slot - 1);
}

static const char *const gt_tl_copy_names[] = {
    "memcpy HtoD", "memcpy DtoH", "memcpy DtoD", "memcpy HtoH", "memcpy PtoP", "memcpy",
};

static const char *gt_tl_copy_name(int kind)
{
    return gt_tl_copy_names[kind >= 0 && kind <= GT_RCOPY_OTHER ? kind : GT_RCOPY_OTHER];
}

static void gt_tl_op(struct gt_tl_scan *w, const struct gt_op_rec *o, const char *kernel)
{
    struct gt_tl_lane *l = gt_tl_lane_at(w, GT_TL_STREAM, o->device, o->stream);
    if (!l)
        return;
    const char *name = o->kind == GT_OP_KERNEL ? (o->name ? o->name : kernel ? kernel : "kernel")
                     : o->kind == GT_OP_MEMSET ? "memset" : gt_tl_copy_name(o->copy_kind);
    gt_tl_add(w->tl, l, (int64_t)o->start - (int64_t)w->tl->t0, (int64_t)o->end - (int64_t)w->tl->t0,
              gt_tl_name_ptr(w, name), 0);
}

static void gt_tl_on_call(const struct gt_rec *r, const char *api, void *arg)
{
    struct gt_tl_scan *w = arg;
    int64_t t0 = (int64_t)w->tl->t0;
    struct gt_tl_lane *l = gt_tl_lane_at(w, GT_TL_THREAD, r->tid, 0);
    if (l)
        gt_tl_add(w->tl, l, (int64_t)r->start - t0, (int64_t)r->end - t0, gt_tl_name_ptr(w, api), 0);
    if (r->has_op) {
        gt_tl_op(w, &r->op, r->kernel);
        return;
    }
    /* no GPU times: the calls' host times stand in, as for the gaps (and
     * as the kernels, memcpys and memsets views read them) */
    if (w->gpu_times || (r->cat != GT_RC_LAUNCH && r->cat != GT_RC_MEMCPY && r->cat != GT_RC_MEMSET) ||
        r->result || r->captured || (r->link && gt_map_get(&w->has_ops, (uint64_t)r->link)))
        return;
    l = gt_tl_lane_at(w, GT_TL_STREAM, r->device, r->stream);
    if (l) {
        const char *name = r->cat == GT_RC_LAUNCH ? (r->kernel ? r->kernel : "kernel")
                         : r->cat == GT_RC_MEMSET ? "memset" : gt_tl_copy_name(r->copy_kind);
        gt_tl_add(w->tl, l, (int64_t)r->start - t0, (int64_t)r->end - t0, gt_tl_name_ptr(w, name), 0);
    }
}

static void gt_tl_on_op(const struct gt_op_rec *o, void *arg)
{
    struct gt_tl_scan *w = arg;
    gt_tl_op(w, o, NULL);
    if (o->link) {
        int64_t *seen = gt_map_at(&w->has_ops, (uint64_t)o->link);
        if (seen)
            *seen = 1;
    }
}

int gt_tl_begin(struct gt_tl *tl, struct gt_trace *t, const struct gt_window *win, struct gt_analyze_tap *tap)
{
    memset(tl, 0, sizeof(*tl));
    /* the span, estimated, for merging lanes that fill before it is known
     * (the report's start and span are known once its pass has run) */
    uint64_t a, b;
    if (gt_scan_time_hint(t, &a, &b) == 0) {
        if (win && win->n && win->a[0] > a)
            a = win->a[0];
        if (win && win->n && win->b[win->n - 1] < b)
            b = win->b[win->n - 1];
        tl->span = b > a ? b - a : 0;
    }
    struct gt_tl_scan *w = calloc(1, sizeof(*w));
    if (!w)
        return -1;
    w->tl = tl;
    w->t = t;
    /* Each stream's GPU work from the records the gap analysis uses:
     * CUPTI's when the trace has them, else the calls' host times
     * (launches, copies, memsets that ran) */
    char *timing = gt_trace_meta(t, "gpu_timing");
    w->gpu_times = timing && strcmp(timing, "cupti") == 0;
    free(timing);
    tl->scan = w;
    *tap = (struct gt_analyze_tap){.call = gt_tl_on_call, .op = gt_tl_on_op, .arg = w};
    return 0;
}

static void gt_tl_scan_free(struct gt_tl *tl)
{
    struct gt_tl_scan *w = tl->scan;
    if (!w)
        return;
    gt_map_free(&w->streams);
    gt_map_free(&w->threads);
    gt_map_free(&w->by_ptr);
    gt_map_free(&w->has_ops);
    free(w);
    tl->scan = NULL;
}

int gt_tl_finish(struct gt_trace *t, const struct gt_report *r, struct gt_tl *tl)
{
    gt_tl_scan_free(tl);
    tl->loaded = 1;
    /* times from the origin of every +TIME (gt_analyze.c): the gaps table
     * and the timeline say the same time for a gap */
    tl->t0 = r->summary.origin_ns;
    tl->span = r->summary.span_ns + (r->summary.first_ns - r->summary.origin_ns);
    for (size_t i = 0; i < tl->nlanes; i++)
        for (size_t k = 0; k < tl->lanes[i].n; k++) {
            tl->lanes[i].v[k].s -= (int64_t)tl->t0;
            tl->lanes[i].v[k].e -= (int64_t)tl->t0;
        }
    /* NVTX (schema 6): push/pop ranges at their depth, start/end ranges
     * (no depth) packed into levels of a lane of their own */
    if (t->schema_version >= 6 && gt_tl_has_view(t, "ranges") &&
        gt_tl_rows(t, tl,
                   "SELECT tid, kind = 'start', start_ns, end_ns, "
                   "COALESCE(name, '(unnamed range)'), depth FROM ranges ORDER BY tid, kind = 'start', depth, start_ns",
                   GT_TL_RANGES) < 0)
        return -1;
    if (tl->nlanes)
        qsort(tl->lanes, tl->nlanes, sizeof(*tl->lanes), gt_tl_lane_cmp);
    /* the page's bound: squeeze the fullest lane until all fit */
    for (;;) {
        size_t total = 0, big = 0;
        for (size_t i = 0; i < tl->nlanes; i++) {
            total += tl->lanes[i].n;
            if (tl->lanes[i].n > tl->lanes[big].n)
                big = i;
        }
        if (total <= GT_TL_TOTAL_CAP)
            break;
        gt_tl_squeeze(tl, &tl->lanes[big], tl->lanes[big].n - 1);
    }
    for (size_t i = 0; i < tl->nlanes; i++)
        qsort(tl->lanes[i].v, tl->lanes[i].n, sizeof(*tl->lanes[i].v), gt_tl_item_cmp);
    return 0;
}

void gt_tl_free(struct gt_tl *tl)
{
    gt_tl_scan_free(tl);
    for (size_t i = 0; i < tl->nlanes; i++) {
        free(tl->lanes[i].v);
        free(tl->lanes[i].label);
    }
    free(tl->lanes);
    for (size_t i = 0; i < tl->nnames; i++)
        free(tl->names[i]);
    free(tl->names);
    gt_map_free(&tl->name_idx);
    memset(tl, 0, sizeof(*tl));
}

/* ---- writing ---- */

/* Length of the valid UTF-8 sequence at p, 0 if it is not one. */
static int gt_tl_utf8_len(const unsigned char *p)
{
    int n = p[0] < 0x80 ? 1 : (p[0] & 0xe0) == 0xc0 ? 2 : (p[0] & 0xf0) == 0xe0 ? 3 : (p[0] & 0xf8) == 0xf0 ? 4 : 0;
    if (!n || (n == 2 && p[0] < 0xc2) || (n == 4 && p[0] > 0xf4))
        return 0;
    for (int i = 1; i < n; i++)
        if ((p[i] & 0xc0) != 0x80)
            return 0;
    if (n == 3 && ((p[0] == 0xe0 && p[1] < 0xa0) || (p[0] == 0xed && p[1] >= 0xa0)))
        return 0; /* overlong, surrogate */
    if (n == 4 && ((p[0] == 0xf0 && p[1] < 0x90) || (p[0] == 0xf4 && p[1] >= 0x90)))
        return 0;
    return n;
}

/* A JSON string safe inside <script>: nothing that can end the element or
 * open a comment, no line separators that older parsers break on. */
static void gt_tl_str(FILE *out, const char *s)
{
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        int n = gt_tl_utf8_len(p);
        if (!n) {
            fputs("\\ufffd", out);
            p++;
            continue;
        }
        if (n == 3 && p[0] == 0xe2 && p[1] == 0x80 && (p[2] == 0xa8 || p[2] == 0xa9)) {
            fprintf(out, "\\u%04x", p[2] == 0xa8 ? 0x2028 : 0x2029);
        } else if (n > 1) {
            fwrite(p, 1, (size_t)n, out);
        } else if (*p == '"' || *p == '\\') {
            fputc('\\', out);
            fputc(*p, out);
        } else if (*p < 0x20 || *p == 0x7f || *p == '<' || *p == '>' || *p == '&' || *p == '\'') {
            fprintf(out, "\\u%04x", *p);
        } else {
            fputc(*p, out);
        }
        p += n;
    }
    fputc('"', out);
}

void gt_tl_assets(FILE *out)
{
    fputs("<style>\n", out);
    fwrite(gt_report_html_timeline_css, 1, gt_report_html_timeline_css_len, out);
    fputs("</style>\n<script>\n", out);
    fwrite(gt_report_html_timeline_js, 1, gt_report_html_timeline_js_len, out);
    fputs("</script>\n", out);
}

static const char *const gt_tl_kinds[] = {"stream", "thread", "ranges"};

void gt_tl_write(FILE *out, const struct gt_tl *tl, const struct gt_report *r, int section)
{
    fprintf(out, "<div class=gt-tl data-section=%d tabindex=0 aria-label=\"timeline: wheel or W/S or +/- to zoom, drag "
                 "or A/D or arrows to pan, 0 to reset\"></div>\n",
            section);
    fprintf(out, "<script type=\"application/json\" id=\"gt-tl-data-%d\">", section);
    fprintf(out, "{\"span\":%llu,\"dropped_lanes\":{\"stream\":%llu,\"thread\":%llu,\"ranges\":%llu},"
                 "\"dropped_ranges\":%llu,\n\"names\":[",
            (unsigned long long)tl->span, (unsigned long long)tl->dropped[0], (unsigned long long)tl->dropped[1],
            (unsigned long long)tl->dropped[2], (unsigned long long)tl->dropped_ranges);
    for (size_t i = 0; i < tl->nnames; i++) {
        if (i)
            fputc(',', out);
        gt_tl_str(out, tl->names[i]);
    }
    /* gaps: device, start, length, cause, row index in the gaps table */
    fputs("],\n\"gaps\":[", out);
    for (size_t i = 0; i < r->ngaps; i++) {
        const struct gt_gap *g = &r->gaps[i];
        fprintf(out, "%s[%d,%lld,%llu,", i ? "," : "", g->device, (long long)(g->start_ns - tl->t0),
                (unsigned long long)g->dur_ns);
        gt_tl_str(out, gt_cause_text[g->cause]);
        fprintf(out, ",%zu]", i);
    }
    fputs("],\n\"lanes\":[", out);
    for (size_t i = 0; i < tl->nlanes; i++) {
        const struct gt_tl_lane *l = &tl->lanes[i];
        fprintf(out, "%s{\"kind\":\"%s\",\"a\":%lld,\"b\":%lld,\"label\":", i ? ",\n" : "", gt_tl_kinds[l->kind],
                (long long)l->a, (long long)l->b);
        gt_tl_str(out, l->label);
        /* items: start, length, name index (-1: several names), items
         * merged, level */
        fprintf(out, ",\"total\":%llu,\"q\":%llu,\"levels\":%d,\"ev\":[", (unsigned long long)l->total,
                (unsigned long long)l->q, l->levels ? l->levels : 1);
        for (size_t k = 0; k < l->n; k++) {
            const struct gt_tl_item *v = &l->v[k];
            fprintf(out, "%s%lld,%lld,%lld,%u,%d", k ? "," : "", (long long)v->s, (long long)(v->e - v->s),
                    v->name == GT_TL_MIXED ? -1LL : (long long)v->name, v->n, v->level);
        }
        fputs("]}", out);
    }
    fputs("]}</script>\n", out);
}

/* gt_export_perfetto_more.c: the Perfetto export's tracks beside the
 * calls and the GPU work: each stream's "busy %" counter, NVTX ranges and
 * marks (schema 6), idle gaps from the report's own analysis, and host
 * samples (schema 7). Written with gt_export_perfetto.c's helpers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/gt_err.h"
#include "base/gt_fmt.h"
#include "output/gt_export_perfetto_int.h"

/* ---- counters: each stream's busy share ---- */

/* the memory the work's sort holds before it spills to a file */
#define GT_PF_BUSY_MEM (16u << 20)

struct gt_pf_work {
    uint32_t slot, pad;  /* index + 1 into busy */
    int64_t s, e;
};

static int gt_pf_work_cmp(const void *a, const void *b, void *arg)
{
    (void)arg;
    const struct gt_pf_work *x = a, *y = b;
    if (x->slot != y->slot)
        return x->slot < y->slot ? -1 : 1;
    if (x->s != y->s)
        return x->s < y->s ? -1 : 1;
    return (x->e > y->e) - (x->e < y->e);
}

static int gt_pf_work_sum(const void *rec, void *arg)
{
    struct gt_pf *w = arg;
    const struct gt_pf_work *k = rec;
    return gt_buckets_add(&w->busy[k->slot - 1].b, k->s, k->e);
}

void gt_pf_busy_add(struct gt_pf *w, int64_t device, int64_t stream, int64_t s, int64_t e)
{
    int64_t *slot = gt_map_at(&w->busy_idx, (uint64_t)device << 48 ^ (uint64_t)stream);
    if (!slot)
        return;
    if (!*slot) {
        if (w->nbusy == w->capbusy) {
            size_t cap = w->capbusy ? w->capbusy * 2 : 16;
            struct gt_pf_busy *nb = realloc(w->busy, cap * sizeof(*nb));
            if (!nb)
                return;
            w->busy = nb;
            w->capbusy = cap;
        }
        struct gt_pf_busy *b = &w->busy[w->nbusy++];
        memset(b, 0, sizeof(*b));
        b->device = device;
        b->stream = stream;
        b->b.t0 = w->x->origin_ns + (int64_t)w->x->from_ns;
        *slot = (int64_t)w->nbusy;
    }
    if (!w->busy_work_on) {
        gt_xs_init(&w->busy_work, sizeof(struct gt_pf_work), gt_pf_work_cmp, NULL, GT_PF_BUSY_MEM);
        w->busy_work_on = 1;
    }
    struct gt_pf_work k = {.slot = (uint32_t)*slot, .s = s, .e = e};
    gt_xs_add(&w->busy_work, &k);
}

/* A "busy %" counter track under each stream that ran work in the window:
 * its busy share of each bucket, written where it changes, 0 after the
 * last. Buckets are 1 us wide, doubled until the stream's work fits 4,096
 * of them. */
int gt_pf_busy_write(struct gt_pf *w)
{
    /* the work in start order, stream by stream (a failed sort has said
     * why: the export fails rather than draw counters short) */
    if (w->busy_work_on && gt_xs_each(&w->busy_work, gt_pf_work_sum, w) != 0)
        return -1;
    for (size_t i = 0; i < w->nbusy && !w->failed; i++) {
        struct gt_pf_busy *b = &w->busy[i];
        gt_buckets_flush(&b->b);
        if (!b->b.ns)
            continue;
        uint64_t uuid = ++w->next_uuid;
        Perfetto__Protos__TrackDescriptor d = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
        Perfetto__Protos__CounterDescriptor c = PERFETTO__PROTOS__COUNTER_DESCRIPTOR__INIT;
        d.has_uuid = d.has_parent_uuid = 1;
        d.uuid = uuid;
        d.parent_uuid = gt_pf_stream(w, b->device, b->stream);
        d.name = "busy %";
        d.counter = &c;
        gt_packet p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
        p.track_descriptor = &d;
        gt_pf_write(w, &p);
        double last = -1;
        for (size_t k = 0; k <= b->b.n && !w->failed; k++) {
            double v = k < b->b.n ? 100.0 * b->b.ns[k] / (double)b->b.width : 0;
            if (v == last)
                continue;
            last = v;
            gt_tevent e = PERFETTO__PROTOS__TRACK_EVENT__INIT;
            e.has_type = e.has_track_uuid = e.has_double_counter_value = 1;
            e.type = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_COUNTER;
            e.track_uuid = uuid;
            e.double_counter_value = v;
            gt_packet q = PERFETTO__PROTOS__TRACE_PACKET__INIT;
            q.has_timestamp = 1;
            q.timestamp = gt_pf_rel(w, b->b.t0 + (int64_t)(k * b->b.width));
            q.track_event = &e;
            gt_pf_write(w, &q);
        }
    }
    return 0;
}

/* ---- NVTX (schema 6) ---- */

/* A thread's push/pop ranges of one NVTX domain other than the default:
 * each domain keeps its own stack, so its ranges nest among themselves
 * but may cross the default domain's, which a track's slices must not. */
struct gt_pf_domain_track {
    int64_t tid;
    char *domain;
    uint64_t track;
};

static uint64_t gt_pf_domain_track(struct gt_pf *w, struct gt_pf_domain_track **v, size_t *n, int64_t tid,
                                   const char *domain)
{
    for (size_t i = 0; i < *n; i++)
        if ((*v)[i].tid == tid && strcmp((*v)[i].domain, domain) == 0)
            return (*v)[i].track;
    struct gt_pf_domain_track *nv = realloc(*v, (*n + 1) * sizeof(**v));
    char *d = strdup(domain);
    if (!nv || !d) {
        free(d);
        if (nv)
            *v = nv;
        return 0;
    }
    *v = nv;
    uint64_t track = ++w->next_uuid;
    char name[160];
    snprintf(name, sizeof(name), "NVTX domain %.128s", domain);
    gt_pf_track(w, track, gt_pf_thread(w, tid), name, NULL, NULL);
    (*v)[*n] = (struct gt_pf_domain_track){tid, d, track};
    ++*n;
    return track;
}

/* Push/pop ranges on their thread's track (they nest there, around its
 * calls), those of another domain than the default on a child track per
 * domain, each start/end range on a child track of the thread that
 * started it (it may end elsewhere and need not nest), marks as instants
 * on their thread's track. A range still open when the trace was finished
 * ends at the trace's end. */
int gt_pf_nvtx(struct gt_pf *w)
{
    if (w->t->schema_version < 6)
        return 0;
    struct gt_pf_domain_track *domains = NULL;
    size_t ndomains = 0;
    int64_t end_ns = gt_trace_meta_int(w->t, "end_ns", 0);
    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(w->t->db,
                           "SELECT kind = 'push', tid, COALESCE(name, '(unnamed)'), start_ns, end_ns, domain, "
                           GT_SITE_KEY("r") " FROM ranges r ORDER BY start_ns, id",
                           -1, &q, NULL) != SQLITE_OK) {
        gt_trace_sql_error(w->t, "ranges");
        return -1;
    }
    while (sqlite3_step(q) == SQLITE_ROW && !w->failed) {
        int64_t start = sqlite3_column_int64(q, 3);
        if (!gt_export_in_window(w->x, start) || gt_pf_limit(w, start))
            continue;
        int64_t end = sqlite3_column_type(q, 4) == SQLITE_NULL ? (end_ns > start ? end_ns : start)
                                                               : sqlite3_column_int64(q, 4);
        uint64_t track = gt_pf_thread(w, sqlite3_column_int64(q, 1));
        const char *domain = (const char *)sqlite3_column_text(q, 5);
        if (!sqlite3_column_int(q, 0)) {
            uint64_t parent = track;
            track = ++w->next_uuid;
            gt_pf_track(w, track, parent, "NVTX start/end", NULL, NULL);
        } else if (domain) {
            uint64_t own = gt_pf_domain_track(w, &domains, &ndomains, sqlite3_column_int64(q, 1), domain);
            if (!own) {
                w->failed = 1;
                break;
            }
            track = own;
        }
        struct gt_pf_slice s = {.track = track, .start = start, .end = end,
                                .name = (const char *)sqlite3_column_text(q, 2),
                                .site_key = sqlite3_column_int64(q, 6),
                                .domain = (const char *)sqlite3_column_text(q, 5), .nvtx = 1};
        gt_pf_slice(w, &s);
    }
    sqlite3_finalize(q);
    for (size_t i = 0; i < ndomains; i++)
        free(domains[i].domain);
    free(domains);
    if (w->failed)
        return -1;
    if (sqlite3_prepare_v2(w->t->db, "SELECT tid, COALESCE(name, '(unnamed)'), ns, domain, " GT_SITE_KEY("k")
                                     " FROM marks k ORDER BY ns, id",
                           -1, &q, NULL) != SQLITE_OK) {
        gt_trace_sql_error(w->t, "marks");
        return -1;
    }
    while (sqlite3_step(q) == SQLITE_ROW && !w->failed) {
        int64_t ns = sqlite3_column_int64(q, 2);
        if (!gt_export_in_window(w->x, ns) || gt_pf_limit(w, ns))
            continue;
        struct gt_pf_slice s = {.track = gt_pf_thread(w, sqlite3_column_int64(q, 0)), .start = ns, .end = ns,
                                .name = (const char *)sqlite3_column_text(q, 1),
                                .site_key = sqlite3_column_int64(q, 4),
                                .domain = (const char *)sqlite3_column_text(q, 3), .instant = 1, .nvtx = 1};
        gt_pf_slice(w, &s);
    }
    sqlite3_finalize(q);
    return 0;
}

void *gt_pf_gap_run(void *arg)
{
    struct gt_pf_gapjob *j = arg;
    struct gt_trace t;
    j->rc = -1;
    if (gt_trace_open(&t, j->path) != 0)
        return NULL;
    struct gt_analyze_opts o = {.min_gap_ns = j->min_gap_ns, .top = 0};
    j->rc = gt_analyze(&t, &o, &j->r);
    gt_trace_close(&t);
    return NULL;
}

int gt_pf_gaps(struct gt_pf *w, struct gt_pf_gapjob *j)
{
    if (j->rc < 0)
        return -1;
    const struct gt_report r = j->r;
    uint64_t idle[64] = {0};
    for (size_t i = 0; i < r.ngaps && !w->failed; i++) {
        const struct gt_gap *g = &r.gaps[i];
        if (!gt_export_in_window(w->x, (int64_t)g->start_ns) || gt_pf_limit(w, (int64_t)g->start_ns))
            continue;
        if (!idle[g->device & 63]) {
            idle[g->device & 63] = ++w->next_uuid;
            gt_pf_track(w, idle[g->device & 63], gt_pf_gpu(w, g->device), "idle gaps", NULL, NULL);
        }
        char dur[32], name[96];
        snprintf(name, sizeof(name), "idle %s (%s)", gt_fmt_duration((int64_t)g->dur_ns, dur, sizeof(dur)),
                 gt_cause_names[g->cause]);
        struct gt_pf_slice s = {.track = idle[g->device & 63], .start = (int64_t)g->start_ns,
                                .end = (int64_t)(g->start_ns + g->dur_ns), .name = name,
                                .cause = gt_cause_names[g->cause]};
        gt_pf_slice(w, &s);
    }
    return 0;
}

/* Host samples (schema 7): an instant event each on its thread's track,
 * named as the report names them ("train.py:45 in __next__ (blocked in
 * read)"). Names are looked up once per kind of sample. */
int gt_pf_samples(struct gt_pf *w, int64_t from, int64_t to)
{
    if (w->t->schema_version < 7)
        return 0;
    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(w->t->db, "SELECT tid, ns, state, syscall, COALESCE(pystack_id, 0), "
                                     "COALESCE(stack_id, 0) FROM host_samples WHERE ns >= ? AND ns < ? ORDER BY ns",
                           -1, &q, NULL) != SQLITE_OK) {
        gt_err("%s: host samples: %s", w->t->path, sqlite3_errmsg(w->t->db));
        return -1;
    }
    sqlite3_bind_int64(q, 1, from);
    sqlite3_bind_int64(q, 2, to);
    struct gt_sample_names names = {0};
    int rc;
    while ((rc = sqlite3_step(q)) == SQLITE_ROW && !w->failed) {
        int64_t ns = sqlite3_column_int64(q, 1);
        if (!gt_export_in_window(w->x, ns)) /* between two ranges of --range */
            continue;
        if (gt_pf_limit(w, ns))
            break;
        const char *state = (const char *)sqlite3_column_text(q, 2);
        const char *name = gt_sample_name(&names, w->t->db, state, (const char *)sqlite3_column_text(q, 3),
                                          sqlite3_column_int64(q, 4), sqlite3_column_int64(q, 5));
        if (!name)
            break;
        uint64_t track = gt_pf_thread(w, sqlite3_column_int64(q, 0));
        memset(&w->in, 0, sizeof(w->in));
        perfetto__protos__interned_data__init(&w->in);
        perfetto__protos__event_name__init(&w->new_name);
        gt_tevent e = PERFETTO__PROTOS__TRACK_EVENT__INIT;
        e.has_type = e.has_track_uuid = 1;
        e.type = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_INSTANT;
        e.track_uuid = track;
        e.name_iid = gt_pf_name(w, name, 0);
        e.has_name_iid = e.name_iid != 0;
        Perfetto__Protos__DebugAnnotation a = PERFETTO__PROTOS__DEBUG_ANNOTATION__INIT, *ap = &a;
        a.name = "host_sample";
        a.string_value = (char *)(state ? state : "");
        e.n_debug_annotations = 1;
        e.debug_annotations = &ap;
        gt_packet p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
        p.has_timestamp = 1;
        p.timestamp = gt_pf_rel(w, ns);
        p.track_event = &e;
        if (w->in.n_event_names)
            p.interned_data = &w->in;
        gt_pf_write(w, &p);
        w->x->events++;
    }
    sqlite3_finalize(q);
    gt_sample_names_free(&names);
    return w->failed ? -1 : 0;
}

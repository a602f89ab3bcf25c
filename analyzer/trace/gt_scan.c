/* gt_scan.c: a trace's calls and GPU intervals for the analyses.
 *
 * A version 4 trace is read straight from `events`, one row per call, with
 * the small tables it refers to (api_names, launch_configs, strings) held
 * in memory: the views would join them on every row, which on a
 * ten-million-call trace costs more than the analyses themselves. Older
 * versions are read through their own views, which name the same things. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/gt_map.h"
#include "trace/gt_scan.h"

/* Kernel names, one copy each, found by hash. */
struct gt_names {
    char **slot;
    size_t cap, count;
};

struct gt_launch_config {
    const char *kernel;
    int64_t device;
    int captured;
};

struct gt_scan {
    struct gt_trace *t;
    int raw;                    /* version 4: read the storage tables */
    struct gt_names names;
    int *cat_of;                /* api id -> enum gt_rec_cat */
    int64_t ncat;
    struct gt_launch_config *configs; /* by launch_configs.id */
    int64_t nconfigs;
    sqlite3_stmt *gpu_of;       /* a call's first GPU record of a kind, from gpu_ops */
    int skip_gpu;
};

static const char *gt_names_intern(struct gt_names *n, const char *name)
{
    if (!name)
        name = "(unknown kernel)";
    if (n->count * 2 >= n->cap) {
        size_t cap = n->cap ? n->cap * 2 : 256;
        char **slot = calloc(cap, sizeof(*slot));
        if (!slot)
            return NULL;
        for (size_t i = 0; i < n->cap; i++) {
            if (!n->slot[i])
                continue;
            size_t j = gt_map_hash_text(n->slot[i]) & (cap - 1);
            while (slot[j])
                j = (j + 1) & (cap - 1);
            slot[j] = n->slot[i];
        }
        free(n->slot);
        n->slot = slot;
        n->cap = cap;
    }
    size_t j = gt_map_hash_text(name) & (n->cap - 1);
    for (; n->slot[j]; j = (j + 1) & (n->cap - 1))
        if (strcmp(n->slot[j], name) == 0)
            return n->slot[j];
    if (!(n->slot[j] = strdup(name)))
        return NULL;
    n->count++;
    return n->slot[j];
}

static void gt_names_free(struct gt_names *n)
{
    for (size_t i = 0; i < n->cap; i++)
        free(n->slot[i]);
    free(n->slot);
}

static int gt_prepare(struct gt_scan *s, const char *sql, sqlite3_stmt **q)
{
    if (sqlite3_prepare_v2(s->t->db, sql, -1, q, NULL) != SQLITE_OK) {
        gt_trace_sql_error(s->t, "query");
        return -1;
    }
    return 0;
}

/* A query that failed part way through. */
static int gt_step_done(struct gt_scan *s, sqlite3_stmt *q, int rc)
{
    sqlite3_finalize(q);
    if (rc != SQLITE_DONE) {
        gt_trace_sql_error(s->t, "reading the trace");
        return -1;
    }
    return 0;
}

static int gt_category_code(const char *c)
{
    if (!c)
        return GT_RC_OTHER;
    return !strcmp(c, "launch") ? GT_RC_LAUNCH : !strcmp(c, "memcpy") ? GT_RC_MEMCPY
         : !strcmp(c, "memset") ? GT_RC_MEMSET : !strcmp(c, "sync") ? GT_RC_SYNC
         : !strcmp(c, "alloc") ? GT_RC_ALLOC : !strcmp(c, "free") ? GT_RC_FREE : GT_RC_OTHER;
}

/* Slots for a table's rows by id: its largest id + 1, or 1 when that is
 * out of [1, max] (an empty or damaged table). -1: the query failed. */
static int64_t gt_id_slots(struct gt_scan *s, const char *max_id_sql, int64_t max)
{
    int64_t id;
    if (gt_trace_int(s->t, max_id_sql, &id) < 0)
        return -1;
    return id >= 0 && id < max ? id + 1 : 1;
}

static int gt_scan_load_raw(struct gt_scan *s)
{
    sqlite3_stmt *q;
    int rc;
    if ((s->ncat = gt_id_slots(s, "SELECT max(id) FROM api_names", 1 << 20)) < 0 ||
        !(s->cat_of = calloc((size_t)s->ncat, sizeof(*s->cat_of))))
        return -1;
    if (gt_prepare(s, "SELECT id, category FROM api_names", &q) < 0)
        return -1;
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(q, 0);
        if (id >= 0 && id < s->ncat)
            s->cat_of[id] = gt_category_code((const char *)sqlite3_column_text(q, 1));
    }
    if (gt_step_done(s, q, rc) < 0)
        return -1;

    if ((s->nconfigs = gt_id_slots(s, "SELECT max(id) FROM launch_configs", 1 << 26)) < 0 ||
        !(s->configs = calloc((size_t)s->nconfigs, sizeof(*s->configs))))
        return -1;
    if (gt_prepare(s, "SELECT c.id, COALESCE(n.demangled, n.value), c.device, c.captured FROM launch_configs c "
                      "LEFT JOIN strings n ON n.id = c.name_id", &q) < 0)
        return -1;
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(q, 0);
        if (id < 0 || id >= s->nconfigs)
            continue;
        struct gt_launch_config *c = &s->configs[id];
        if (!(c->kernel = gt_names_intern(&s->names, (const char *)sqlite3_column_text(q, 1)))) {
            sqlite3_finalize(q);
            return -1;
        }
        c->device = sqlite3_column_int64(q, 2);
        c->captured = sqlite3_column_int(q, 3);
    }
    if (gt_step_done(s, q, rc) < 0)
        return -1;
    return gt_prepare(s, "SELECT start_ns, start_ns + dur_ns, device, src_kind, dst_kind FROM gpu_ops "
                         "WHERE corr = ? AND kind = ? LIMIT 1", &s->gpu_of);
}

struct gt_scan *gt_scan_open(struct gt_trace *t)
{
    struct gt_scan *s = calloc(1, sizeof(*s));
    if (!s)
        return NULL;
    s->t = t;
    s->raw = t->schema_version >= 4;
    if (s->raw && gt_scan_load_raw(s) < 0) {
        gt_scan_close(s);
        return NULL;
    }
    return s;
}

void gt_scan_skip_gpu(struct gt_scan *s)
{
    s->skip_gpu = 1;
}

void gt_scan_close(struct gt_scan *s)
{
    if (!s)
        return;
    gt_names_free(&s->names);
    free(s->cat_of);
    free(s->configs);
    sqlite3_finalize(s->gpu_of);
    free(s);
}

static uint64_t gt_col_u64(sqlite3_stmt *q, int col)
{
    return (uint64_t)sqlite3_column_int64(q, col);
}

static int64_t gt_site_key_at(sqlite3_stmt *q, int stack_col)
{
    return (int64_t)((uint64_t)sqlite3_column_int64(q, stack_col) & 0xffffffffu) |
           (int64_t)((uint64_t)sqlite3_column_int64(q, stack_col + 1) << 32);
}

/* The host memory a copy touched: CUPTI's memory kinds where its record
 * has them (the driver's own answer), else what the call was given. */
static int gt_copy_host_mem(int copy_kind, int call_mem, int has_gpu, int src, int dst)
{
    static const int cupti_mem[16] = {[1] = GT_RMEM_PAGEABLE + 1, [2] = GT_RMEM_PINNED + 1,
                                      [5] = GT_RMEM_MANAGED + 1};
    if (has_gpu) {
        if ((copy_kind == GT_RCOPY_HTOD || copy_kind == GT_RCOPY_HTOH) && cupti_mem[src & 15])
            return cupti_mem[src & 15] - 1;
        if (copy_kind == GT_RCOPY_DTOH && cupti_mem[dst & 15])
            return cupti_mem[dst & 15] - 1;
    }
    return call_mem;
}

/* A call whose record did not fit in its row: the first of its kind in
 * gpu_ops. */
static void gt_gpu_from_ops(struct gt_scan *s, int64_t corr, int kind, struct gt_rec *r, int *src, int *dst)
{
    sqlite3_bind_int64(s->gpu_of, 1, corr);
    sqlite3_bind_int(s->gpu_of, 2, kind);
    if (sqlite3_step(s->gpu_of) == SQLITE_ROW) {
        r->has_gpu = 1;
        r->gpu_start = gt_col_u64(s->gpu_of, 0);
        r->gpu_end = gt_col_u64(s->gpu_of, 1);
        if (sqlite3_column_type(s->gpu_of, 2) != SQLITE_NULL)
            r->device = sqlite3_column_int64(s->gpu_of, 2);
        *src = sqlite3_column_int(s->gpu_of, 3);
        *dst = sqlite3_column_int(s->gpu_of, 4);
    }
    sqlite3_reset(s->gpu_of);
}

static int gt_scan_calls_raw(struct gt_scan *s, gt_rec_fn fn, void *arg)
{
    sqlite3_stmt *q;
    if (gt_prepare(s, "SELECT api_id, start_ns, dur_ns, result, stack_id, pystack_id, corr, a0, a1, g_start_ns, "
                      "g_dur_ns, g_stream, tid FROM events", &q) < 0)
        return -1;
    int rc;
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        struct gt_rec r;
        memset(&r, 0, sizeof(r));
        int64_t api = sqlite3_column_int64(q, 0);
        r.cat = api >= 0 && api < s->ncat ? s->cat_of[api] : GT_RC_OTHER;
        r.start = gt_col_u64(q, 1);
        r.end = r.start + gt_col_u64(q, 2);
        r.result = sqlite3_column_int(q, 3);
        r.site_key = gt_site_key_at(q, 4);
        r.has_python = sqlite3_column_type(q, 5) != SQLITE_NULL;
        r.tid = sqlite3_column_int64(q, 12);
        if (r.cat == GT_RC_OTHER || r.cat == GT_RC_FREE) {
            fn(&r, arg);
            continue;
        }
        if (r.cat == GT_RC_ALLOC) {
            r.bytes = gt_col_u64(q, 8);
            fn(&r, arg);
            continue;
        }
        int64_t a0 = sqlite3_column_int64(q, 7);
        if (r.cat == GT_RC_SYNC) {
            r.sync_kind = a0 >= 0 && a0 <= GT_RSYNC_WAIT_EVENT ? (int)a0 : GT_RSYNC_OTHER;
            fn(&r, arg);
            continue;
        }
        /* launch, memcpy, memset: arguments, then the GPU record */
        int src = 0, dst = 0;
        if (r.cat == GT_RC_LAUNCH) {
            const struct gt_launch_config *c = a0 > 0 && a0 < s->nconfigs && s->configs[a0].kernel
                                                   ? &s->configs[a0] : NULL;
            r.kernel = c ? c->kernel : gt_names_intern(&s->names, NULL);
            r.device = c ? c->device : 0;
            r.captured = c ? c->captured : 0;
        } else {
            r.async = (int)((a0 >> 6) & 1);
            r.captured = (int)((a0 >> 7) & 1);
            r.device = a0 >> 16;
            r.bytes = gt_col_u64(q, 8);
            if (r.cat == GT_RC_MEMCPY)
                r.copy_kind = (int)(a0 & 7) <= GT_RCOPY_PTOP ? (int)(a0 & 7) : GT_RCOPY_OTHER;
        }
        if (sqlite3_column_type(q, 10) != SQLITE_NULL) {
            r.has_gpu = r.gpu_in_row = 1;
            r.gpu_start = r.start + gt_col_u64(q, 9);
            r.gpu_end = r.gpu_start + gt_col_u64(q, 10);
            r.device = sqlite3_column_int64(q, 11) & 255;
            src = (int)((a0 >> 8) & 15);
            dst = (int)((a0 >> 12) & 15);
        } else if (!s->skip_gpu && sqlite3_column_type(q, 6) != SQLITE_NULL) {
            gt_gpu_from_ops(s, sqlite3_column_int64(q, 6), r.cat - GT_RC_LAUNCH, &r, &src, &dst);
        }
        if (r.cat == GT_RC_MEMCPY) {
            int mem = (int)((a0 >> 3) & 7);
            r.host_mem = gt_copy_host_mem(r.copy_kind, mem <= GT_RMEM_MANAGED ? mem : GT_RMEM_OTHER, r.has_gpu,
                                          src, dst);
        }
        fn(&r, arg);
    }
    return gt_step_done(s, q, rc);
}

static int gt_copy_kind_code(const char *k)
{
    static const char *const kinds[] = {"HtoD", "DtoH", "DtoD", "HtoH", "PtoP"};
    for (int i = 0; k && i < 5; i++)
        if (!strcmp(k, kinds[i]))
            return i;
    return GT_RCOPY_OTHER;
}

static int gt_mem_code(const char *m)
{
    return !m ? GT_RMEM_OTHER : !strcmp(m, "pageable") ? GT_RMEM_PAGEABLE : !strcmp(m, "pinned") ? GT_RMEM_PINNED
         : !strcmp(m, "managed") ? GT_RMEM_MANAGED : GT_RMEM_OTHER;
}

static int gt_sync_code(const char *k)
{
    static const char *const kinds[] = {"device", "context", "stream", "event", "stream_wait_event"};
    for (int i = 0; k && i < 5; i++)
        if (!strcmp(k, kinds[i]))
            return i;
    return GT_RSYNC_OTHER;
}

/* Versions 1 to 3, through the views: one query per kind of call. Every
 * query's columns end with the call's thread and whether it had a Python
 * stack. */
static int gt_scan_calls_views(struct gt_scan *s, gt_rec_fn fn, void *arg)
{
#define GT_VIEW_TAIL ", c.tid, c.pystack_id IS NOT NULL"
    static const char *const sql[] = {
        "SELECT k.name, " GT_SITE_KEY("c") ", k.api_start_ns, k.api_end_ns, k.result, k.captured, k.device, "
        "k.time_source = 'gpu', k.start_ns, k.end_ns" GT_VIEW_TAIL " FROM kernels k JOIN calls c ON c.id = k.api_call_id",
        "SELECT m.kind, " GT_SITE_KEY("c") ", m.api_start_ns, m.api_end_ns, m.result, m.captured, m.device, "
        "m.time_source = 'gpu', m.start_ns, m.end_ns, m.bytes, m.async, m.host_mem" GT_VIEW_TAIL " "
        "FROM memcpys m JOIN calls c ON c.id = m.api_call_id",
        "SELECT NULL, " GT_SITE_KEY("c") ", m.api_start_ns, m.api_end_ns, m.result, m.captured, m.device, "
        "m.time_source = 'gpu', m.start_ns, m.end_ns, m.bytes, m.async" GT_VIEW_TAIL " FROM memsets m "
        "JOIN calls c ON c.id = m.api_call_id",
        "SELECT y.kind, " GT_SITE_KEY("c") ", y.start_ns, y.end_ns, y.result" GT_VIEW_TAIL " FROM syncs y "
        "JOIN calls c ON c.id = y.api_call_id",
        "SELECT c.category, " GT_SITE_KEY("c") ", c.start_ns, c.end_ns, c.result, a.bytes" GT_VIEW_TAIL " "
        "FROM api_calls c LEFT JOIN alloc_args a ON a.call_id = c.id "
        "WHERE c.category NOT IN ('launch', 'memcpy', 'memset', 'sync')",
    };
#undef GT_VIEW_TAIL
    static const int cats[] = {GT_RC_LAUNCH, GT_RC_MEMCPY, GT_RC_MEMSET, GT_RC_SYNC, GT_RC_OTHER};
    for (int k = 0; k < 5; k++) {
        sqlite3_stmt *q;
        if (gt_prepare(s, sql[k], &q) < 0)
            return -1;
        int rc, tail = sqlite3_column_count(q) - 2;
        while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
            struct gt_rec r;
            memset(&r, 0, sizeof(r));
            r.cat = cats[k];
            const char *text = (const char *)sqlite3_column_text(q, 0);
            if (r.cat == GT_RC_OTHER)
                r.cat = gt_category_code(text);
            r.site_key = sqlite3_column_int64(q, 1);
            r.start = gt_col_u64(q, 2);
            r.end = gt_col_u64(q, 3);
            r.result = sqlite3_column_int(q, 4);
            r.tid = sqlite3_column_int64(q, tail);
            r.has_python = sqlite3_column_int(q, tail + 1);
            if (r.cat == GT_RC_SYNC)
                r.sync_kind = gt_sync_code(text);
            if (r.cat == GT_RC_ALLOC)
                r.bytes = gt_col_u64(q, 5);
            if (r.cat == GT_RC_LAUNCH || r.cat == GT_RC_MEMCPY || r.cat == GT_RC_MEMSET) {
                r.captured = sqlite3_column_int(q, 5);
                r.device = sqlite3_column_int64(q, 6);
                r.has_gpu = sqlite3_column_int(q, 7);
                r.gpu_start = gt_col_u64(q, 8);
                r.gpu_end = gt_col_u64(q, 9);
            }
            if (r.cat == GT_RC_LAUNCH && !(r.kernel = gt_names_intern(&s->names, text))) {
                sqlite3_finalize(q);
                return -1;
            }
            if (r.cat == GT_RC_MEMCPY || r.cat == GT_RC_MEMSET) {
                r.bytes = gt_col_u64(q, 10);
                r.async = sqlite3_column_int(q, 11);
            }
            if (r.cat == GT_RC_MEMCPY) {
                r.copy_kind = gt_copy_kind_code(text);
                r.host_mem = gt_mem_code((const char *)sqlite3_column_text(q, 12));
            }
            fn(&r, arg);
        }
        if (gt_step_done(s, q, rc) < 0)
            return -1;
    }
    return 0;
}

int gt_scan_calls(struct gt_scan *s, gt_rec_fn fn, void *arg)
{
    return s->raw ? gt_scan_calls_raw(s, fn, arg) : gt_scan_calls_views(s, fn, arg);
}

int gt_scan_call_times(struct gt_scan *s, gt_rec_fn fn, void *arg)
{
    sqlite3_stmt *q;
    if (gt_prepare(s, s->raw ? "SELECT api_id, start_ns, start_ns + dur_ns, stack_id, pystack_id FROM events"
                             : "SELECT category, start_ns, end_ns, stack_id, pystack_id FROM api_calls",
                   &q) < 0)
        return -1;
    int rc;
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        struct gt_rec r;
        memset(&r, 0, sizeof(r));
        if (s->raw) {
            int64_t api = sqlite3_column_int64(q, 0);
            r.cat = api >= 0 && api < s->ncat ? s->cat_of[api] : GT_RC_OTHER;
        } else {
            r.cat = gt_category_code((const char *)sqlite3_column_text(q, 0));
        }
        r.start = gt_col_u64(q, 1);
        r.end = gt_col_u64(q, 2);
        r.site_key = gt_site_key_at(q, 3);
        fn(&r, arg);
    }
    return gt_step_done(s, q, rc);
}

int gt_scan_intervals(struct gt_scan *s, gt_interval_fn fn, void *arg)
{
    sqlite3_stmt *q;
    if (gt_prepare(s, s->raw ? "SELECT device, start_ns, start_ns + dur_ns FROM gpu_ops WHERE kind < 3"
                             : "SELECT device, start_ns, end_ns FROM gpu_activity",
                   &q) < 0)
        return -1;
    int rc;
    while ((rc = sqlite3_step(q)) == SQLITE_ROW)
        fn(sqlite3_column_int64(q, 0), gt_col_u64(q, 1), gt_col_u64(q, 2), arg);
    return gt_step_done(s, q, rc);
}

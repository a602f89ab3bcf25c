/* gt_scan.c: a trace's calls and GPU operations for the analyses.
 *
 * A version 4 or later trace is read straight from `events`, one row per
 * call, and `gpu_ops`, with the small tables they refer to (api_names,
 * launch_configs, strings) held in memory: the views would join them on
 * every row, which on a ten-million-call trace costs more than the
 * analyses themselves. Older versions are read through their own views,
 * which name the same things. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/gt_map.h"
#include "base/gt_progress.h"
#include "gt_error_names.h"
#include "trace/gt_scan.h"

/* Names (kernels, entry points), one copy each, found by hash. */
struct gt_names {
    char **slot;
    size_t cap, count;
};

struct gt_launch_config {
    const char *kernel;
    int64_t device;
    int captured;
};

struct gt_api {
    const char *name;   /* interned */
    int cat;            /* enum gt_rec_cat */
    int runtime;        /* 1: the runtime API's, 0: the driver's */
};

struct gt_scan {
    struct gt_trace *t;
    int raw;                    /* version 4 on: read the storage tables */
    struct gt_names names;
    struct gt_api *apis;        /* raw: by api_names.id; views: by first sight */
    uint32_t napis, capis;
    struct gt_map api_of;       /* views: name hash -> index + 1 */
    struct gt_launch_config *configs; /* by launch_configs.id */
    int64_t nconfigs;
    sqlite3_stmt *result_name;  /* the trace's own result_names, when it has them */
    int windowed;               /* calls and ops read by start time, within [from, to) */
    int64_t from, to;
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

/* `sql` as is, or when the scan is windowed, limited to rows whose `col`
 * lies in [from, to) and ordered by it (through the start-time indexes).
 * `join` is " WHERE" or " AND", whichever follows `sql`. */
static int gt_prepare_window(struct gt_scan *s, const char *sql, const char *join, const char *col,
                             int64_t from, sqlite3_stmt **q)
{
    if (!s->windowed)
        return gt_prepare(s, sql, q);
    char *full = sqlite3_mprintf("%s%s %s >= ?1 AND %s < ?2 ORDER BY %s", sql, join, col, col, col);
    if (!full)
        return -1;
    int rc = gt_prepare(s, full, q);
    sqlite3_free(full);
    if (rc == 0) {
        sqlite3_bind_int64(*q, 1, from);
        sqlite3_bind_int64(*q, 2, s->to);
    }
    return rc;
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
    static const char *const cats[GT_RC_COUNT] = {
        [GT_RC_OTHER] = "other", [GT_RC_LAUNCH] = "launch", [GT_RC_MEMCPY] = "memcpy", [GT_RC_MEMSET] = "memset",
        [GT_RC_SYNC] = "sync", [GT_RC_ALLOC] = "alloc", [GT_RC_FREE] = "free", [GT_RC_STREAM] = "stream",
        [GT_RC_EVENT] = "event", [GT_RC_GRAPH] = "graph_launch", [GT_RC_MODULE] = "module",
    };
    for (int i = 0; c && i < GT_RC_COUNT; i++)
        if (!strcmp(c, cats[i]))
            return i;
    return GT_RC_OTHER;
}

/* Traces before version 5 do not say which API an entry point is: the
 * runtime's names start with "cuda" (or "__cuda"), the driver's with "cu". */
static int gt_runtime_by_name(const char *name)
{
    return name && (strncmp(name, "cuda", 4) == 0 || strncmp(name, "__cuda", 6) == 0);
}

static int gt_api_grow(struct gt_scan *s, uint32_t need)
{
    if (need <= s->capis)
        return 0;
    uint32_t cap = s->capis ? s->capis : 64;
    while (cap < need)
        cap *= 2;
    struct gt_api *a = realloc(s->apis, cap * sizeof(*a));
    if (!a)
        return -1;
    memset(a + s->capis, 0, (cap - s->capis) * sizeof(*a));
    s->apis = a;
    s->capis = cap;
    return 0;
}

/* Views: the index of an entry point by name, added on first sight. */
static int64_t gt_api_by_name(struct gt_scan *s, const char *name, const char *category)
{
    if (!name)
        name = "(unknown)";
    uint64_t h = gt_map_hash_text(name);
    for (;; h++) {
        int64_t *slot = gt_map_at(&s->api_of, h);
        if (!slot)
            return -1;
        if (!*slot) {
            if (gt_api_grow(s, s->napis + 1) < 0)
                return -1;
            struct gt_api *a = &s->apis[s->napis];
            if (!(a->name = gt_names_intern(&s->names, name)))
                return -1;
            a->cat = gt_category_code(category);
            a->runtime = gt_runtime_by_name(name);
            *slot = (int64_t)++s->napis;
            return *slot - 1;
        }
        if (strcmp(s->apis[*slot - 1].name, name) == 0)
            return *slot - 1;
    }
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

static int gt_has_column(struct gt_scan *s, const char *table, const char *column)
{
    char sql[128];
    snprintf(sql, sizeof(sql), "SELECT count(*) FROM pragma_table_info('%s') WHERE name = '%s'", table, column);
    int64_t n = 0;
    return gt_trace_int(s->t, sql, &n) == 0 && n > 0;
}

static int gt_scan_load_raw(struct gt_scan *s)
{
    sqlite3_stmt *q;
    int rc;
    int64_t n = gt_id_slots(s, "SELECT max(id) FROM api_names", 1 << 16);
    if (n < 0 || gt_api_grow(s, (uint32_t)n) < 0)
        return -1;
    s->napis = (uint32_t)n;
    int has_lib = gt_has_column(s, "api_names", "lib");
    if (gt_prepare(s, has_lib ? "SELECT id, category, name, lib FROM api_names"
                              : "SELECT id, category, name, NULL FROM api_names", &q) < 0)
        return -1;
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(q, 0);
        if (id < 0 || id >= n)
            continue;
        struct gt_api *a = &s->apis[id];
        const char *name = (const char *)sqlite3_column_text(q, 2), *lib = (const char *)sqlite3_column_text(q, 3);
        a->cat = gt_category_code((const char *)sqlite3_column_text(q, 1));
        if (!(a->name = gt_names_intern(&s->names, name ? name : "(unknown)"))) {
            sqlite3_finalize(q);
            return -1;
        }
        a->runtime = lib ? strcmp(lib, "runtime") == 0 : gt_runtime_by_name(name);
    }
    if (gt_step_done(s, q, rc) < 0)
        return -1;
    for (uint32_t i = 0; i < s->napis; i++)
        if (!s->apis[i].name && !(s->apis[i].name = gt_names_intern(&s->names, "(unknown)")))
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
    return gt_step_done(s, q, rc);
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
    int64_t has = 0;
    if (gt_trace_int(t, "SELECT count(*) FROM sqlite_master WHERE name = 'result_names'", &has) == 0 && has)
        sqlite3_prepare_v2(t->db, "SELECT name FROM result_names WHERE lib = ? AND code = ?", -1, &s->result_name,
                           NULL);
    return s;
}

void gt_scan_close(struct gt_scan *s)
{
    if (!s)
        return;
    gt_names_free(&s->names);
    free(s->apis);
    gt_map_free(&s->api_of);
    free(s->configs);
    sqlite3_finalize(s->result_name);
    free(s);
}

uint32_t gt_scan_api_count(const struct gt_scan *s)
{
    return s->napis;
}

const char *gt_scan_api_name(const struct gt_scan *s, uint32_t api)
{
    return api < s->napis && s->apis[api].name ? s->apis[api].name : "(unknown)";
}

static const char *gt_builtin_result_name(int runtime, int code)
{
    const struct gt_error_name *v = runtime ? gt_rt_error_names : gt_drv_error_names;
    size_t n = runtime ? GT_RT_ERROR_NAMES_N : GT_DRV_ERROR_NAMES_N;
    for (size_t i = 0; i < n; i++)
        if (v[i].code == code)
            return v[i].name;
    return NULL;
}

const char *gt_scan_result_name(struct gt_scan *s, uint32_t api, int result, char *buf, size_t len)
{
    int runtime = api < s->napis ? s->apis[api].runtime : 1;
    const char *name = NULL;
    if (s->result_name) {
        sqlite3_bind_text(s->result_name, 1, runtime ? "runtime" : "driver", -1, SQLITE_STATIC);
        sqlite3_bind_int(s->result_name, 2, result);
        if (sqlite3_step(s->result_name) == SQLITE_ROW && sqlite3_column_text(s->result_name, 0)) {
            snprintf(buf, len, "%s", (const char *)sqlite3_column_text(s->result_name, 0));
            name = buf;
        }
        sqlite3_reset(s->result_name);
    }
    if (!name && (name = gt_builtin_result_name(runtime, result)) != NULL) {
        snprintf(buf, len, "%s", name);
        name = buf;
    }
    if (!name) {
        snprintf(buf, len, "error %d", result);
        name = buf;
    }
    return name;
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

/* CUPTI's copy kinds (CUpti_ActivityMemcpyKind) as the calls name them. */
static int gt_cupti_copy_kind(int64_t k)
{
    switch (k) {
    case 1: return GT_RCOPY_HTOD;
    case 2: return GT_RCOPY_DTOH;
    case 8: return GT_RCOPY_DTOD;
    case 9: return GT_RCOPY_HTOH;
    case 10: return GT_RCOPY_PTOP;
    default: return GT_RCOPY_OTHER;
    }
}

/* ---- version 4 on: the storage tables ---- */

static int gt_scan_ops_raw(struct gt_scan *s, gt_op_fn fn, void *arg)
{
    sqlite3_stmt *q;
    if (gt_prepare_window(s, "SELECT g.kind, g.device, g.stream, g.start_ns, g.start_ns + g.dur_ns, g.corr, "
                             "COALESCE(n.demangled, n.value), g.bytes, g.copy_kind, g.src_kind, g.dst_kind "
                             "FROM gpu_ops g LEFT JOIN strings n ON n.id = g.name_id WHERE g.kind < 3",
                          " AND", "g.start_ns", s->from, &q) < 0)
        return -1;
    int rc;
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        gt_progress_row();
        struct gt_op_rec o;
        memset(&o, 0, sizeof(o));
        o.kind = sqlite3_column_int(q, 0);
        if (o.kind < GT_OP_KERNEL || o.kind > GT_OP_MEMSET)
            continue;
        o.device = sqlite3_column_int64(q, 1);
        o.stream = sqlite3_column_int64(q, 2);
        o.start = gt_col_u64(q, 3);
        o.end = gt_col_u64(q, 4);
        o.link = sqlite3_column_int64(q, 5);
        if (o.kind == GT_OP_KERNEL &&
            !(o.name = gt_names_intern(&s->names, (const char *)sqlite3_column_text(q, 6)))) {
            sqlite3_finalize(q);
            return -1;
        }
        o.bytes = gt_col_u64(q, 7);
        o.copy_kind = gt_cupti_copy_kind(sqlite3_column_int64(q, 8));
        o.src_mem = sqlite3_column_int(q, 9);
        o.dst_mem = sqlite3_column_int(q, 10);
        fn(&o, arg);
    }
    return gt_step_done(s, q, rc);
}

static int gt_scan_calls_raw(struct gt_scan *s, gt_rec_fn fn, void *arg)
{
    sqlite3_stmt *q;
    /* A call kept with its GPU record is read when that record starts in
     * the window even if the call started before it. */
    int64_t lag = 0;
    if (s->windowed && gt_trace_int(s->t, "SELECT max(g_start_ns) FROM events", &lag) < 0)
        return -1;
    if (gt_prepare_window(s, "SELECT api_id, start_ns, dur_ns, result, stack_id, pystack_id, corr, a0, a1, "
                             "g_start_ns, g_dur_ns, g_stream, tid, stream, a2 FROM events",
                          " WHERE", "start_ns", lag > 0 && s->from > INT64_MIN + lag ? s->from - lag : s->from,
                          &q) < 0)
        return -1;
    int rc;
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        gt_progress_row();
        struct gt_rec r;
        memset(&r, 0, sizeof(r));
        int64_t api = sqlite3_column_int64(q, 0);
        r.api = api >= 0 && api < s->napis ? (uint32_t)api : 0;
        r.cat = api >= 0 && api < s->napis ? s->apis[api].cat : GT_RC_OTHER;
        r.start = gt_col_u64(q, 1);
        r.end = r.start + gt_col_u64(q, 2);
        r.result = sqlite3_column_int(q, 3);
        r.site_key = gt_site_key_at(q, 4);
        r.has_python = sqlite3_column_type(q, 5) != SQLITE_NULL;
        r.link = sqlite3_column_int64(q, 6);
        r.tid = sqlite3_column_int64(q, 12);
        r.stream = sqlite3_column_int64(q, 13);
        int64_t a0 = sqlite3_column_int64(q, 7);
        switch (r.cat) {
        case GT_RC_ALLOC:
            r.alloc_kind = (int)(a0 & 127); /* bit 7: captured (version 8) */
            r.captured = (int)((a0 >> 7) & 1);
            r.bytes = gt_col_u64(q, 8);
            break;
        case GT_RC_SYNC:
            r.captured = (int)((a0 >> 7) & 1); /* bit 7: captured (version 8) */
            a0 &= 127;
            r.sync_kind = a0 >= 0 && a0 <= GT_RSYNC_STREAM_QUERY ? (int)a0 : GT_RSYNC_OTHER;
            /* a run of not-ready polls folded into one row (version 8): a2 counts them */
            r.polls = (r.sync_kind == GT_RSYNC_EVENT_QUERY || r.sync_kind == GT_RSYNC_STREAM_QUERY) &&
                              sqlite3_column_int64(q, 14) > 1
                          ? (uint64_t)sqlite3_column_int64(q, 14)
                          : 1;
            break;
        case GT_RC_MODULE:
            r.module_jit = (int)((a0 >> 3) & 1);
            r.bytes = gt_col_u64(q, 8);
            break;
        case GT_RC_LAUNCH: {
            const struct gt_launch_config *c = a0 > 0 && a0 < s->nconfigs && s->configs[a0].kernel
                                                   ? &s->configs[a0] : NULL;
            r.kernel = c ? c->kernel : gt_names_intern(&s->names, NULL);
            r.device = c ? c->device : 0;
            r.captured = c ? c->captured : 0;
            break;
        }
        case GT_RC_MEMCPY:
        case GT_RC_MEMSET: {
            r.async = (int)((a0 >> 6) & 1);
            r.captured = (int)((a0 >> 7) & 1);
            r.device = a0 >> 16;
            r.bytes = gt_col_u64(q, 8);
            if (r.cat == GT_RC_MEMCPY) {
                r.copy_kind = (int)(a0 & 7) <= GT_RCOPY_PTOP ? (int)(a0 & 7) : GT_RCOPY_OTHER;
                int mem = (int)((a0 >> 3) & 7);
                r.host_mem = mem <= GT_RMEM_MANAGED ? mem : mem == 5 ? GT_RMEM_MAPPED : GT_RMEM_OTHER;
            }
            break;
        }
        default:
            /* host functions, event records, graph launches: bit 7 of a0
             * when a capture took them (version 8; NULL, 0, before) */
            r.captured = (int)((a0 >> 7) & 1);
            break;
        }
        if ((r.cat == GT_RC_LAUNCH || r.cat == GT_RC_MEMCPY || r.cat == GT_RC_MEMSET) &&
            sqlite3_column_type(q, 10) != SQLITE_NULL) {
            r.has_op = 1;
            r.op.kind = r.cat == GT_RC_LAUNCH ? GT_OP_KERNEL : r.cat == GT_RC_MEMCPY ? GT_OP_MEMCPY : GT_OP_MEMSET;
            r.op.start = r.start + gt_col_u64(q, 9);
            r.op.end = r.op.start + gt_col_u64(q, 10);
            int64_t gs = sqlite3_column_int64(q, 11);
            r.op.device = gs & 255;
            r.op.stream = gs >> 8;
            r.op.bytes = r.bytes;
            r.op.copy_kind = r.copy_kind;
            r.op.src_mem = (int)((a0 >> 8) & 15);
            r.op.dst_mem = (int)((a0 >> 12) & 15);
        }
        fn(&r, arg);
    }
    return gt_step_done(s, q, rc);
}

/* ---- versions 1 to 3: their views ---- */

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
         : !strcmp(m, "managed") ? GT_RMEM_MANAGED : !strcmp(m, "mapped") ? GT_RMEM_MAPPED : GT_RMEM_OTHER;
}

/* CUPTI's memory kind numbers, from the names older views give them. */
static int gt_cupti_mem_code(const char *m)
{
    static const char *const kinds[] = {"unknown", "pageable", "pinned", "device", "array", "managed",
                                        "device_static", "managed_static"};
    for (int i = 0; m && i < 8; i++)
        if (!strcmp(m, kinds[i]))
            return i;
    return 0;
}

static int gt_sync_code(const char *k)
{
    static const char *const kinds[] = {"device", "context", "stream", "event", "stream_wait_event",
                                        "event_query", "stream_query"};
    for (int i = 0; k && i < 7; i++)
        if (!strcmp(k, kinds[i]))
            return i;
    return GT_RSYNC_OTHER;
}

static int gt_scan_ops_views(struct gt_scan *s, gt_op_fn fn, void *arg)
{
    sqlite3_stmt *q;
    if (gt_prepare_window(s, "SELECT kind, device, stream, start_ns, end_ns, api_call_id, name, bytes, copy_kind, "
                             "src_kind, dst_kind FROM gpu_activity", " WHERE", "start_ns", s->from, &q) < 0)
        return -1;
    int rc;
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        gt_progress_row();
        struct gt_op_rec o;
        memset(&o, 0, sizeof(o));
        const char *kind = (const char *)sqlite3_column_text(q, 0);
        o.kind = !kind ? -1 : !strcmp(kind, "kernel") ? GT_OP_KERNEL : !strcmp(kind, "memcpy") ? GT_OP_MEMCPY
               : !strcmp(kind, "memset") ? GT_OP_MEMSET : -1;
        if (o.kind < 0)
            continue;
        o.device = sqlite3_column_int64(q, 1);
        o.stream = sqlite3_column_int64(q, 2);
        o.start = gt_col_u64(q, 3);
        o.end = gt_col_u64(q, 4);
        o.link = sqlite3_column_int64(q, 5);
        if (o.kind == GT_OP_KERNEL &&
            !(o.name = gt_names_intern(&s->names, (const char *)sqlite3_column_text(q, 6)))) {
            sqlite3_finalize(q);
            return -1;
        }
        o.bytes = gt_col_u64(q, 7);
        o.copy_kind = gt_copy_kind_code((const char *)sqlite3_column_text(q, 8));
        o.src_mem = gt_cupti_mem_code((const char *)sqlite3_column_text(q, 9));
        o.dst_mem = gt_cupti_mem_code((const char *)sqlite3_column_text(q, 10));
        fn(&o, arg);
    }
    return gt_step_done(s, q, rc);
}

static int gt_scan_calls_views(struct gt_scan *s, gt_rec_fn fn, void *arg)
{
    sqlite3_stmt *q;
    if (gt_prepare_window(s, "SELECT c.id, c.name, c.category, c.tid, c.start_ns, c.end_ns, c.result, "
                      "COALESCE(c.stack_id, 0) | (COALESCE(c.pystack_id, 0) << 32), c.pystack_id IS NOT NULL, "
                      "c.captured, COALESCE(n.demangled, n.value), l.device, a.kind, a.bytes, a.host_mem, a.async, "
                      "a.device, m.bytes, m.async, m.device, y.kind, al.bytes, c.stream "
                      "FROM api_calls c LEFT JOIN launch_args l ON l.call_id = c.id "
                      "LEFT JOIN strings n ON n.id = l.name_id LEFT JOIN copy_args a ON a.call_id = c.id "
                      "LEFT JOIN memset_args m ON m.call_id = c.id LEFT JOIN sync_args y ON y.call_id = c.id "
                      "LEFT JOIN alloc_args al ON al.call_id = c.id", " WHERE", "c.start_ns", s->from, &q) < 0)
        return -1;
    int rc;
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        gt_progress_row();
        struct gt_rec r;
        memset(&r, 0, sizeof(r));
        int64_t api = gt_api_by_name(s, (const char *)sqlite3_column_text(q, 1),
                                     (const char *)sqlite3_column_text(q, 2));
        if (api < 0) {
            sqlite3_finalize(q);
            return -1;
        }
        r.link = sqlite3_column_int64(q, 0);
        r.api = (uint32_t)api;
        r.cat = s->apis[api].cat;
        r.tid = sqlite3_column_int64(q, 3);
        r.start = gt_col_u64(q, 4);
        r.end = gt_col_u64(q, 5);
        r.result = sqlite3_column_int(q, 6);
        r.site_key = sqlite3_column_int64(q, 7);
        r.has_python = sqlite3_column_int(q, 8);
        r.captured = sqlite3_column_int(q, 9);
        r.stream = sqlite3_column_int64(q, 22);
        switch (r.cat) {
        case GT_RC_LAUNCH:
            if (!(r.kernel = gt_names_intern(&s->names, (const char *)sqlite3_column_text(q, 10)))) {
                sqlite3_finalize(q);
                return -1;
            }
            r.device = sqlite3_column_int64(q, 11);
            break;
        case GT_RC_MEMCPY:
            r.copy_kind = gt_copy_kind_code((const char *)sqlite3_column_text(q, 12));
            r.bytes = gt_col_u64(q, 13);
            r.host_mem = gt_mem_code((const char *)sqlite3_column_text(q, 14));
            r.async = sqlite3_column_int(q, 15);
            r.device = sqlite3_column_int64(q, 16);
            break;
        case GT_RC_MEMSET:
            r.bytes = gt_col_u64(q, 17);
            r.async = sqlite3_column_int(q, 18);
            r.device = sqlite3_column_int64(q, 19);
            break;
        case GT_RC_SYNC:
            r.sync_kind = gt_sync_code((const char *)sqlite3_column_text(q, 20));
            r.polls = 1;
            break;
        case GT_RC_ALLOC:
            r.bytes = gt_col_u64(q, 21);
            break;
        default:
            break;
        }
        fn(&r, arg);
    }
    return gt_step_done(s, q, rc);
}

uint64_t gt_scan_row_estimate(struct gt_trace *t)
{
    int64_t n = 0;
    if (t->schema_version >= 4 &&
        gt_trace_int(t, "SELECT COALESCE((SELECT max(rowid) FROM events), 0) + "
                        "COALESCE((SELECT max(rowid) FROM gpu_ops), 0)", &n) < 0)
        return 0;
    return n > 0 ? (uint64_t)n : 0;
}

int gt_scan_time_hint(struct gt_trace *t, uint64_t *first, uint64_t *last)
{
    int64_t a = -1, b = -1;
    if (t->schema_version < 4 ||
        gt_trace_int(t, "SELECT COALESCE((SELECT start_ns FROM events ORDER BY id LIMIT 1), -1)", &a) < 0 ||
        gt_trace_int(t, "SELECT COALESCE((SELECT start_ns FROM events ORDER BY id DESC LIMIT 1), -1)", &b) < 0 ||
        a < 0 || b < a)
        return -1;
    *first = (uint64_t)a;
    *last = (uint64_t)b;
    return 0;
}

void gt_scan_set_window(struct gt_scan *s, int64_t from, int64_t to)
{
    s->windowed = 1;
    s->from = from;
    s->to = to;
}

int gt_scan_ops(struct gt_scan *s, gt_op_fn fn, void *arg)
{
    return s->raw ? gt_scan_ops_raw(s, fn, arg) : gt_scan_ops_views(s, fn, arg);
}

int gt_scan_calls(struct gt_scan *s, gt_rec_fn fn, void *arg)
{
    return s->raw ? gt_scan_calls_raw(s, fn, arg) : gt_scan_calls_views(s, fn, arg);
}

int gt_scan_call_spans(struct gt_scan *s, gt_span_fn fn, void *arg)
{
    sqlite3_stmt *q;
    if (gt_prepare(s, s->raw ? "SELECT api_id, start_ns, start_ns + dur_ns, NULL, stack_id, pystack_id, NULL "
                               "FROM events ORDER BY start_ns"
                             : "SELECT -1, start_ns, end_ns, category, stack_id, pystack_id, name FROM api_calls "
                               "ORDER BY start_ns",
                   &q) < 0)
        return -1;
    int rc;
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        int cat;
        int64_t api;
        if (s->raw) {
            api = sqlite3_column_int64(q, 0);
            cat = api >= 0 && api < s->napis ? s->apis[api].cat : GT_RC_OTHER;
        } else {
            api = gt_api_by_name(s, (const char *)sqlite3_column_text(q, 6), (const char *)sqlite3_column_text(q, 3));
            if (api < 0) {
                sqlite3_finalize(q);
                return -1;
            }
            cat = s->apis[api].cat;
        }
        fn(cat, gt_col_u64(q, 1), gt_col_u64(q, 2), gt_site_key_at(q, 4), (uint32_t)api, arg);
    }
    return gt_step_done(s, q, rc);
}

/* gt_writer_rows.c: an event becomes its `events` row (schema/gputrace.sql
 * lays the columns out), its launch configuration stored once.
 *
 * Writer thread only. Every column costs SQLite time on every row, so the
 * row is narrow: a launch's kernel, grid, block, shared memory and device
 * are one launch_configs id, and a copy's or memset's small arguments are
 * packed into one flags integer. */
#include <stdlib.h>
#include <string.h>

#include "base/gt_event.h"
#include "hot/gt_hooks.h"
#include "writer/gt_writer_int.h"

/* What makes two launches' configurations the same. */
struct gt_launch_key {
    uint32_t name_id, device, grid[3], block[3], shared_mem, captured;
};

struct gt_launch_slot {
    struct gt_launch_key key;
    int64_t id; /* 0: empty */
};

struct gt_launch_map {
    struct gt_launch_slot *slots;
    size_t cap, count;
    int64_t next_id;
};

/* Distinct configurations are few (a program has few kernels and shapes).
 * Past this many the map starts over: the configurations still in use are
 * stored once more each, rather than the map growing with the run. */
#define GT_LAUNCH_MAP_MAX (1u << 16)

static uint64_t gt_launch_hash(const struct gt_launch_key *k)
{
    const uint32_t *w = (const uint32_t *)k;
    uint64_t h = 0x9e3779b97f4a7c15ull;
    for (size_t i = 0; i < sizeof(*k) / sizeof(uint32_t); i++)
        h = (h ^ w[i]) * 0xff51afd7ed558ccdull;
    return h ^ (h >> 29);
}

static int gt_launch_map_grow(struct gt_launch_map *m)
{
    size_t cap = m->cap ? m->cap * 2 : 256;
    struct gt_launch_slot *n = calloc(cap, sizeof(*n));
    if (!n)
        return -1;
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->slots[i].id)
            continue;
        size_t j = gt_launch_hash(&m->slots[i].key) & (cap - 1);
        while (n[j].id)
            j = (j + 1) & (cap - 1);
        n[j] = m->slots[i];
    }
    free(m->slots);
    m->slots = n;
    m->cap = cap;
    return 0;
}

static void gt_launch_insert(struct gt_writer *w, int64_t id, const struct gt_launch_key *k)
{
    sqlite3_stmt *s = w->st[ST_LAUNCH_CONFIG];
    sqlite3_bind_int64(s, 1, id);
    if (k->name_id)
        sqlite3_bind_int64(s, 2, k->name_id);
    else
        sqlite3_bind_null(s, 2);
    sqlite3_bind_int64(s, 3, k->device);
    for (int i = 0; i < 3; i++) {
        sqlite3_bind_int64(s, 4 + i, k->grid[i]);
        sqlite3_bind_int64(s, 7 + i, k->block[i]);
    }
    sqlite3_bind_int64(s, 10, k->shared_mem);
    sqlite3_bind_int64(s, 11, k->captured);
    gt_step(w, ST_LAUNCH_CONFIG);
}

/* The launch_configs id of an event's launch, stored on first sight. */
static int64_t gt_launch_config_id(struct gt_writer *w, const struct gt_event *e)
{
    struct gt_launch_map *m = w->launches;
    if (!m && !(m = w->launches = calloc(1, sizeof(*m))))
        return 0;
    struct gt_launch_key k;
    memset(&k, 0, sizeof(k));
    k.name_id = e->u.launch.name_id;
    k.device = e->u.launch.device;
    memcpy(k.grid, e->u.launch.grid, sizeof(k.grid));
    memcpy(k.block, e->u.launch.block, sizeof(k.block));
    k.shared_mem = e->u.launch.shared_mem;
    k.captured = e->captured;
    if (m->count >= GT_LAUNCH_MAP_MAX) {
        memset(m->slots, 0, m->cap * sizeof(*m->slots));
        m->count = 0;
    }
    if (m->count * 2 >= m->cap && gt_launch_map_grow(m) < 0)
        return 0;
    size_t j = gt_launch_hash(&k) & (m->cap - 1);
    for (; m->slots[j].id; j = (j + 1) & (m->cap - 1))
        if (memcmp(&m->slots[j].key, &k, sizeof(k)) == 0)
            return m->slots[j].id;
    int64_t id = ++m->next_id;
    m->slots[j].key = k;
    m->slots[j].id = id;
    m->count++;
    gt_launch_insert(w, id, &k);
    return id;
}

void gt_writer_rows_free(struct gt_writer *w)
{
    if (w->launches)
        free(w->launches->slots);
    free(w->launches);
    w->launches = NULL;
}

void gt_event_row(struct gt_writer *w, const struct gt_event *e, struct gt_row *r)
{
    int64_t *v = r->v;
    v[EC_TID] = e->tid;
    v[EC_API] = e->api;
    v[EC_START] = (int64_t)e->start_ns;
    v[EC_DUR] = e->end_ns >= e->start_ns ? (int64_t)(e->end_ns - e->start_ns) : 0;
    v[EC_RESULT] = e->result;
    v[EC_STREAM] = (int64_t)e->stream;
    v[EC_STACK] = e->stack_id;
    v[EC_PYSTACK] = e->pystack_id;
    v[EC_CORR] = (int64_t)e->corr;
    w->rows_with_corr += e->corr != 0;
    w->rows_with_pystack += e->pystack_id != 0;
    uint32_t null_mask = (e->has_stream ? 0 : 1u << EC_STREAM) | (e->stack_id ? 0 : 1u << EC_STACK) |
                         (e->pystack_id ? 0 : 1u << EC_PYSTACK) | (e->corr ? 0 : 1u << EC_CORR) |
                         (7u << EC_G_START);
    unsigned used = 0; /* bit i: a[i] is set */
    int64_t *a = v + EC_A0;
    int cat = e->api < GT_API_COUNT ? gt_hooks[e->api].category : GT_CAT_NONE;
    switch (cat) {
    case GT_CAT_LAUNCH:
        a[0] = gt_launch_config_id(w, e);
        used = a[0] ? 1u : 0u;
        break;
    case GT_CAT_MEMCPY:
        a[0] = (int64_t)(e->u.copy.kind % 5u) | (int64_t)(e->u.copy.host_mem % 6u) << 3 |
               (int64_t)(e->u.copy.async ? 1 : 0) << 6 | (int64_t)(e->captured ? 1 : 0) << 7 |
               (int64_t)e->u.copy.device << 16;
        a[1] = (int64_t)e->u.copy.bytes;
        used = 3;
        break;
    case GT_CAT_MEMSET:
        a[0] = (int64_t)(e->u.memset.async ? 1 : 0) << 6 | (int64_t)(e->captured ? 1 : 0) << 7 |
               (int64_t)e->u.memset.device << 16;
        a[1] = (int64_t)e->u.memset.bytes;
        used = 3;
        break;
    case GT_CAT_SYNC:
    case GT_CAT_QUERY:
        a[0] = (int64_t)(e->u.sync.kind % 7u) | (int64_t)(e->captured ? 1 : 0) << 7;
        a[1] = (int64_t)e->u.sync.target;
        used = 1u | (e->u.sync.kind != GT_SYNC_DEVICE && e->u.sync.kind != GT_SYNC_CONTEXT ? 2u : 0u);
        if (e->u.sync.polls > 1) {
            a[2] = e->u.sync.polls; /* a run of polls folded into this row */
            used |= 4u;
        }
        break;
    case GT_CAT_ALLOC:
    case GT_CAT_FREE:
        a[0] = (int64_t)(e->u.alloc.kind % 6u) | (int64_t)(e->captured ? 1 : 0) << 7;
        a[1] = (int64_t)e->u.alloc.bytes;
        a[2] = (int64_t)e->u.alloc.ptr;
        used = 7;
        break;
    case GT_CAT_MODULE:
        a[0] = (int64_t)(e->u.module.kind % 8u) | (int64_t)(e->u.module.jit ? 1 : 0) << 3 |
               (int64_t)(e->captured ? 1 : 0) << 7;
        a[1] = (int64_t)e->u.module.bytes;
        used = 3;
        break;
    default:
        /* other calls with a stream (host functions, event records, waits,
         * graph launches): a0 says only whether a capture took them */
        if (e->captured) {
            a[0] = 1 << 7;
            used = 1;
        }
        break;
    }
    r->null_mask = null_mask | ((~used & 7u) << EC_A0);
}

void gt_event_row_gpu(struct gt_row *r, uint64_t start, uint64_t end, uint32_t device, uint32_t stream, int has_mem,
                      unsigned src_kind, unsigned dst_kind)
{
    int64_t *v = r->v;
    v[EC_G_START] = (int64_t)(start - (uint64_t)v[EC_START]);
    v[EC_G_DUR] = end >= start ? (int64_t)(end - start) : 0;
    v[EC_G_STREAM] = (int64_t)stream << 8 | (device & 255u);
    if (has_mem)
        v[EC_A0] |= (int64_t)(src_kind & 15u) << 8 | (int64_t)(dst_kind & 15u) << 12;
    /* Its one GPU record is in the row: nothing else needs the id. */
    r->null_mask = (r->null_mask & ~(7u << EC_G_START)) | (1u << EC_CORR);
}

/* ---- rows into SQLite, GT_BATCH_ROWS at a time ---- */

static void gt_bind_row(sqlite3_stmt *s, int first, int cols, const struct gt_row *r)
{
    for (int i = 0; i < cols; i++) {
        /* NULLs are bound too: statements are not cleared between rows,
         * which would cost as much as the row itself. */
        if ((r->null_mask >> i) & 1)
            sqlite3_bind_null(s, first + i);
        else
            sqlite3_bind_int64(s, first + i, r->v[i]);
    }
}

void gt_batch_flush(struct gt_writer *w, struct gt_batch *b)
{
    if (b->n == GT_BATCH_ROWS) {
        for (int i = 0; i < GT_BATCH_ROWS; i++)
            gt_bind_row(w->st[b->many], 1 + i * b->cols, b->cols, &b->rows[i]);
        gt_step_keep(w, b->many);
    } else {
        for (int i = 0; i < b->n && !w->failed; i++) {
            gt_bind_row(w->st[b->one], 1, b->cols, &b->rows[i]);
            gt_step_keep(w, b->one);
        }
    }
    b->n = 0;
}

void gt_batch_done(struct gt_writer *w, struct gt_batch *b)
{
    if (++b->n == GT_BATCH_ROWS)
        gt_batch_flush(w, b);
}

void gt_event_store(struct gt_writer *w, struct gt_row *r)
{
    struct gt_row *b = gt_batch_row(&w->events);
    *b = *r;
    w->events_written++;
    gt_batch_done(w, &w->events);
}

/* gt_writer_pend.c: events waiting for their GPU record, on the writer
 * thread.
 *
 * A launch, copy or memset's GPU record arrives from CUPTI a buffer or a
 * flush period (100 ms, gt_cupti.c) after the call. Its row waits here, so
 * the record is stored in the call's own row: no second row, no index to
 * join them, and readers scan one table. A row whose record does not come
 * within a second, or that the waiting room cannot hold, is stored as it
 * is; its record then goes to gpu_ops, linked by the correlation id.
 *
 * The room starts small and doubles while records lag further behind
 * their calls (a busy machine, a deep GPU queue), up to GT_PEND_MAX rows
 * of 64 bytes; rows leave in the order they came. */
#include <stdlib.h>
#include <string.h>

#include "base/gt_base.h"
#include "base/gt_event.h"
#include "hot/gt_hooks.h"
#include "writer/gt_writer_int.h"

#define GT_PEND_FIRST 16384u           /* a power of two */
#define GT_PEND_MAX (1u << 17)         /* 8 MiB of rows and 1 MiB of index at most */
#define GT_PEND_HOLD_MS 1000u          /* ten CUPTI flush periods */

/* The row of a waiting call, less what such a call never has (a failure,
 * capture, a third argument): 64 bytes. */
struct gt_held {
    int64_t start, stream, corr, a0, a1;
    uint32_t dur, tid, stack_id, pystack_id;
    uint32_t arrival_ms;     /* writer clock, ms */
    uint16_t api;
    uint8_t nulls;           /* GT_HELD_NO_* */
    uint8_t gpu_kind;        /* GT_GPU_*, + 1; 0: left (stored) */
};

enum { GT_HELD_NO_STREAM = 1, GT_HELD_NO_A0 = 2, GT_HELD_NO_A1 = 4 };

struct gt_pend {
    struct gt_held *slot;    /* FIFO; cap a power of two */
    uint32_t *map;           /* by corr hash: slot index + 1; 2 * cap entries, linear probing */
    uint32_t cap, head, tail; /* tail - head slots in use */
};

static uint32_t gt_ms(void)
{
    return (uint32_t)(gt_now_ns() / 1000000u);
}

static size_t gt_pend_home(uint64_t corr, uint32_t mask)
{
    return (size_t)((corr * 0x9e3779b97f4a7c15ull) >> 40) & mask;
}

static long gt_pend_find(const struct gt_pend *p, uint64_t corr)
{
    uint32_t mask = 2 * p->cap - 1;
    for (size_t i = gt_pend_home(corr, mask);; i = (i + 1) & mask) {
        if (!p->map[i])
            return -1;
        if ((uint64_t)p->slot[p->map[i] - 1].corr == corr)
            return (long)i;
    }
}

static void gt_pend_map_put(struct gt_pend *p, uint64_t corr, uint32_t idx)
{
    uint32_t mask = 2 * p->cap - 1;
    size_t i = gt_pend_home(corr, mask);
    while (p->map[i])
        i = (i + 1) & mask;
    p->map[i] = idx + 1;
}

static void gt_pend_unmap(struct gt_pend *p, size_t i)
{
    uint32_t mask = 2 * p->cap - 1;
    p->map[i] = 0;
    for (size_t j = (i + 1) & mask; p->map[j]; j = (j + 1) & mask) {
        size_t home = gt_pend_home((uint64_t)p->slot[p->map[j] - 1].corr, mask);
        /* Move j back into the hole unless its home lies cyclically in (i, j]. */
        if ((j > i && (home <= i || home > j)) || (j < i && home <= i && home > j)) {
            p->map[i] = p->map[j];
            p->map[j] = 0;
            i = j;
        }
    }
}

static int gt_pend_alloc(struct gt_pend *p, uint32_t cap)
{
    p->slot = malloc((size_t)cap * sizeof(*p->slot));
    p->map = calloc(2 * (size_t)cap, sizeof(*p->map));
    if (!p->slot || !p->map) {
        free(p->slot);
        free(p->map);
        return -1;
    }
    p->cap = cap;
    p->head = p->tail = 0;
    return 0;
}

/* Twice the room, the waiting rows kept in order. */
static int gt_pend_grow(struct gt_pend *p)
{
    struct gt_pend old = *p;
    if (gt_pend_alloc(p, old.cap * 2) < 0) {
        *p = old;
        return -1;
    }
    for (uint32_t k = old.head; k != old.tail; k++) {
        const struct gt_held *h = &old.slot[k & (old.cap - 1)];
        if (!h->gpu_kind)
            continue;
        uint32_t idx = p->tail++ & (p->cap - 1);
        p->slot[idx] = *h;
        gt_pend_map_put(p, (uint64_t)h->corr, idx);
    }
    free(old.slot);
    free(old.map);
    return 0;
}

static void gt_held_row(const struct gt_held *h, struct gt_row *r)
{
    int64_t *v = r->v;
    v[EC_TID] = h->tid;
    v[EC_API] = h->api;
    v[EC_START] = h->start;
    v[EC_DUR] = h->dur;
    v[EC_RESULT] = 0;
    v[EC_STREAM] = h->stream;
    v[EC_STACK] = h->stack_id;
    v[EC_PYSTACK] = h->pystack_id;
    v[EC_CORR] = h->corr;
    v[EC_A0] = h->a0;
    v[EC_A1] = h->a1;
    r->null_mask = (h->nulls & GT_HELD_NO_STREAM ? 1u << EC_STREAM : 0) | (h->stack_id ? 0 : 1u << EC_STACK) |
                   (h->pystack_id ? 0 : 1u << EC_PYSTACK) | (h->nulls & GT_HELD_NO_A0 ? 1u << EC_A0 : 0) |
                   (h->nulls & GT_HELD_NO_A1 ? 1u << EC_A1 : 0) | 1u << EC_A2 | 7u << EC_G_START;
}

/* Stores a waiting row as it is, without a GPU record. */
static void gt_pend_release(struct gt_writer *w, struct gt_held *h)
{
    long m = gt_pend_find(w->pend, (uint64_t)h->corr);
    if (m >= 0)
        gt_pend_unmap(w->pend, (size_t)m);
    h->gpu_kind = 0;
    atomic_fetch_sub_explicit(&w->waiting, 1, memory_order_relaxed);
    struct gt_row row;
    gt_held_row(h, &row);
    gt_event_store(w, &row);
}

int gt_pend_hold(struct gt_writer *w, const struct gt_event *e, int gpu_kind)
{
    if (e->end_ns - e->start_ns > UINT32_MAX || e->api > UINT16_MAX)
        return 0;
    struct gt_pend *p = w->pend;
    if (!p) {
        if (!(p = calloc(1, sizeof(*p))) || gt_pend_alloc(p, GT_PEND_FIRST) < 0) {
            free(p);
            return 0;
        }
        w->pend = p;
    }
    if (p->tail - p->head == p->cap && (p->cap >= GT_PEND_MAX || gt_pend_grow(p) < 0)) {
        /* Full at its largest: the oldest goes without its record. */
        while (p->tail - p->head == p->cap) {
            struct gt_held *old = &p->slot[p->head++ & (p->cap - 1)];
            if (old->gpu_kind)
                gt_pend_release(w, old);
        }
    }
    struct gt_row row;
    gt_event_row(w, e, &row);
    uint32_t idx = p->tail++ & (p->cap - 1);
    struct gt_held *h = &p->slot[idx];
    h->start = row.v[EC_START];
    h->stream = row.v[EC_STREAM];
    h->corr = row.v[EC_CORR];
    h->a0 = row.v[EC_A0];
    h->a1 = row.v[EC_A1];
    h->dur = (uint32_t)row.v[EC_DUR];
    h->tid = (uint32_t)row.v[EC_TID];
    h->stack_id = (uint32_t)row.v[EC_STACK];
    h->pystack_id = (uint32_t)row.v[EC_PYSTACK];
    h->api = (uint16_t)e->api;
    h->nulls = (uint8_t)((row.null_mask >> EC_STREAM & 1 ? GT_HELD_NO_STREAM : 0) |
                         (row.null_mask >> EC_A0 & 1 ? GT_HELD_NO_A0 : 0) |
                         (row.null_mask >> EC_A1 & 1 ? GT_HELD_NO_A1 : 0));
    h->gpu_kind = (uint8_t)(gpu_kind + 1);
    h->arrival_ms = gt_ms();
    gt_pend_map_put(p, e->corr, idx);
    atomic_fetch_add_explicit(&w->waiting, 1, memory_order_relaxed);
    return 1;
}

void gt_pend_expire(struct gt_writer *w, int all)
{
    struct gt_pend *p = w->pend;
    if (!p)
        return;
    uint32_t now = gt_ms();
    while (p->head != p->tail) {
        struct gt_held *h = &p->slot[p->head & (p->cap - 1)];
        if (h->gpu_kind && !all && now - h->arrival_ms < GT_PEND_HOLD_MS)
            break;
        /* A transaction only for a row to store: an idle writer writes nothing. */
        if (h->gpu_kind) {
            if (gt_begin_txn(w) < 0)
                return;
            gt_pend_release(w, h);
        }
        p->head++;
    }
}

int gt_pend_fold(struct gt_writer *w, uint64_t ext, int gpu_kind, uint32_t device, uint32_t stream, uint64_t start,
                 uint64_t end, int has_mem, unsigned src_kind, unsigned dst_kind, uint64_t bytes)
{
    struct gt_pend *p = w->pend;
    long m = p && ext ? gt_pend_find(p, ext) : -1;
    if (m < 0)
        return 0;
    struct gt_held *h = &p->slot[p->map[m] - 1];
    if (h->gpu_kind != gpu_kind + 1)
        return 0;
    /* A copy whose record moved fewer bytes than the call (a batch of
     * copies, each its own record) keeps its records in gpu_ops. */
    if (gpu_kind == GT_GPU_MEMCPY && (int64_t)bytes != h->a1)
        return 0;
    gt_pend_unmap(p, (size_t)m);
    h->gpu_kind = 0;
    atomic_fetch_sub_explicit(&w->waiting, 1, memory_order_relaxed);
    struct gt_row row;
    gt_held_row(h, &row);
    gt_event_row_gpu(&row, start, end, device, stream, has_mem, src_kind, dst_kind);
    gt_event_store(w, &row);
    return 1;
}

void gt_writer_pend_free(struct gt_writer *w)
{
    if (w->pend) {
        free(w->pend->slot);
        free(w->pend->map);
    }
    free(w->pend);
    w->pend = NULL;
}

/* gt_writer_gpu.c: storing CUPTI's activity records, on the writer thread. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cupti.h>

#include "gt_core.h"
#include "gt_event.h"
#include "gt_writer_int.h"

/* CUPTI correlation id -> our external id, from CUPTI's external-correlation
 * records, so that each GPU record is stored with the call's own id
 * (events.corr) and no table of pairs is needed. CUPTI's ids count up, so
 * a direct-mapped table keeps the latest 2^18 of them: far more than are
 * in flight between an external-correlation record and the GPU records it
 * names, which follow it in CUPTI's buffers. */
#define GT_CORR_SLOTS (1u << 18)
/* A GPU record whose external-correlation record had not come yet: stored
 * with corr NULL and mended when it comes (not expected; kept for safety,
 * a handful at a time). */
#define GT_CORR_PENDING 1024

struct gt_corrmap {
    uint32_t tag[GT_CORR_SLOTS];  /* CUPTI correlation id + 1; 0: empty */
    uint64_t ext[GT_CORR_SLOTS];
    struct {
        uint32_t correlation_id;
        int64_t row;
    } pending[GT_CORR_PENDING];
    unsigned npending, next_evict;
};

void gt_writer_pend_free(struct gt_writer *w);

void gt_writer_gpu_free(struct gt_writer *w)
{
    free(w->corr);
    w->corr = NULL;
    gt_writer_pend_free(w);
}

static struct gt_corrmap *gt_corrmap(struct gt_writer *w)
{
    if (!w->corr)
        w->corr = calloc(1, sizeof(*w->corr));
    return w->corr;
}

static void gt_corr_learn(struct gt_writer *w, uint32_t correlation_id, uint64_t ext)
{
    struct gt_corrmap *m = gt_corrmap(w);
    if (!m)
        return;
    unsigned slot = correlation_id & (GT_CORR_SLOTS - 1);
    m->tag[slot] = correlation_id + 1;
    m->ext[slot] = ext;
    for (unsigned i = 0; i < m->npending;) {
        if (m->pending[i].correlation_id != correlation_id) {
            i++;
            continue;
        }
        gt_batch_flush(w, &w->gpu); /* the row may still be in the batch */
        sqlite3_bind_int64(w->st[ST_GPU_CORR], 1, (int64_t)ext);
        sqlite3_bind_int64(w->st[ST_GPU_CORR], 2, m->pending[i].row);
        gt_step(w, ST_GPU_CORR);
        m->pending[i] = m->pending[--m->npending];
    }
}

/* Our external id for a CUPTI correlation id; 0: not (yet) known. */
static uint64_t gt_corr_lookup(struct gt_writer *w, uint32_t correlation_id)
{
    struct gt_corrmap *m = w->corr;
    unsigned slot = correlation_id & (GT_CORR_SLOTS - 1);
    return m && m->tag[slot] == correlation_id + 1 ? m->ext[slot] : 0;
}

static void gt_corr_pending(struct gt_writer *w, uint32_t correlation_id, int64_t row)
{
    struct gt_corrmap *m = gt_corrmap(w);
    if (!m)
        return;
    unsigned i = m->npending < GT_CORR_PENDING ? m->npending++ : m->next_evict++ % GT_CORR_PENDING;
    m->pending[i].correlation_id = correlation_id;
    m->pending[i].row = row;
}

static int64_t gt_gpu_name_id(struct gt_writer *w, const char *name)
{
    if (!name)
        return 0;
    int added = 0;
    long idx = gt_strlist_intern(&w->gpu_names, name, &added);
    if (idx < 0)
        return 0;
    int64_t id = GT_GPU_NAME_BASE + idx;
    if (added)
        gt_insert_name(w, id, name);
    return id;
}

/* ---- events waiting for their GPU record ----
 *
 * A launch, copy or memset's GPU record arrives from CUPTI up to a flush
 * period (100 ms, gt_cupti.c) after the call. Its event waits here, so the
 * record is stored in the event's own row: no second row, no index to
 * join them, and readers scan one table. An event whose record does not
 * come in time (or that does not fit) is stored as it is; its record then
 * goes to gpu_ops, linked by the correlation id, as every record did
 * before. */
#define GT_PEND_MAX 65536u            /* a power of two: 7 MiB, 100 ms of a million launches a second */
#define GT_PEND_HOLD_NS 1000000000ull /* ten CUPTI flush periods */

struct gt_pend_slot {
    struct gt_event ev;
    uint64_t arrival_ns;
    uint8_t live, gpu_kind;
};

struct gt_pend {
    struct gt_pend_slot slot[GT_PEND_MAX];
    uint32_t head, tail;             /* FIFO of slots; tail - head of them in use */
    struct {
        uint64_t corr;               /* 0: empty */
        uint32_t idx;
    } map[2 * GT_PEND_MAX];          /* linear probing, deletion by backward shift */
};

static size_t gt_pend_home(uint64_t corr)
{
    return (size_t)((corr * 0x9e3779b97f4a7c15ull) >> 40) & (2 * GT_PEND_MAX - 1);
}

static long gt_pend_find(struct gt_pend *p, uint64_t corr)
{
    for (size_t i = gt_pend_home(corr);; i = (i + 1) & (2 * GT_PEND_MAX - 1)) {
        if (!p->map[i].corr)
            return -1;
        if (p->map[i].corr == corr)
            return (long)i;
    }
}

static void gt_pend_unmap(struct gt_pend *p, size_t i)
{
    const size_t mask = 2 * GT_PEND_MAX - 1;
    p->map[i].corr = 0;
    for (size_t j = (i + 1) & mask; p->map[j].corr; j = (j + 1) & mask) {
        size_t home = gt_pend_home(p->map[j].corr);
        /* Move j back into the hole unless its home lies cyclically in (i, j]. */
        if ((j > i && (home <= i || home > j)) || (j < i && home <= i && home > j)) {
            p->map[i] = p->map[j];
            p->map[j].corr = 0;
            i = j;
        }
    }
}

/* Stores the slot's event as it is (no GPU record in its row). */
static void gt_pend_release(struct gt_writer *w, struct gt_pend_slot *s)
{
    long m = gt_pend_find(w->pend, s->ev.corr);
    if (m >= 0)
        gt_pend_unmap(w->pend, (size_t)m);
    s->live = 0;
    struct gt_row row;
    gt_event_row(w, &s->ev, &row);
    gt_event_store(w, &row);
}

int gt_pend_hold(struct gt_writer *w, const struct gt_event *e, int gpu_kind)
{
    uint64_t corr = e->corr;
    if (!w->pend && !(w->pend = calloc(1, sizeof(*w->pend))))
        return 0;
    struct gt_pend *p = w->pend;
    while (p->tail - p->head == GT_PEND_MAX) {
        struct gt_pend_slot *old = &p->slot[p->head++ & (GT_PEND_MAX - 1)];
        if (old->live)
            gt_pend_release(w, old);
    }
    uint32_t idx = p->tail++ & (GT_PEND_MAX - 1);
    struct gt_pend_slot *s = &p->slot[idx];
    s->ev = *e;
    s->arrival_ns = gt_now_ns();
    s->live = 1;
    s->gpu_kind = (uint8_t)gpu_kind;
    size_t i = gt_pend_home(corr);
    while (p->map[i].corr)
        i = (i + 1) & (2 * GT_PEND_MAX - 1);
    p->map[i].corr = corr;
    p->map[i].idx = idx;
    return 1;
}

void gt_pend_expire(struct gt_writer *w, uint64_t now_ns, int all)
{
    struct gt_pend *p = w->pend;
    if (!p || gt_begin_txn(w) < 0)
        return;
    while (p->head != p->tail) {
        struct gt_pend_slot *s = &p->slot[p->head & (GT_PEND_MAX - 1)];
        if (s->live && !all && now_ns - s->arrival_ns < GT_PEND_HOLD_NS)
            break;
        if (s->live)
            gt_pend_release(w, s);
        p->head++;
    }
}

/* The first GPU record of a held event's kind goes in its row, which is
 * then stored. 0: no such event waits; the record goes to gpu_ops. */
static int gt_pend_fold(struct gt_writer *w, uint64_t ext, int gpu_kind, uint32_t device, uint32_t stream,
                        uint64_t start, uint64_t end, int has_mem, unsigned src_kind, unsigned dst_kind,
                        uint64_t bytes)
{
    struct gt_pend *p = w->pend;
    long m = p && ext ? gt_pend_find(p, ext) : -1;
    if (m < 0)
        return 0;
    struct gt_pend_slot *s = &p->slot[p->map[m].idx];
    if (!s->live || s->gpu_kind != gpu_kind)
        return 0;
    /* A copy whose record moved fewer bytes than the call (a batch of
     * copies, each its own record) keeps its records in gpu_ops. */
    if (gpu_kind == GT_GPU_MEMCPY && bytes != s->ev.u.copy.bytes)
        return 0;
    gt_pend_unmap(p, (size_t)m);
    s->live = 0;
    struct gt_row row;
    gt_event_row(w, &s->ev, &row);
    gt_event_row_gpu(&row, start, end, device, stream, has_mem, src_kind, dst_kind);
    gt_event_store(w, &row);
    return 1;
}

void gt_writer_pend_free(struct gt_writer *w)
{
    free(w->pend);
    w->pend = NULL;
}


/* Columns of ST_GPU, from 0: id, kind, corr, correlation_id, device,
 * stream, start_ns, dur_ns, name_id, bytes, copy_kind, src_kind, dst_kind,
 * sync_type. */
enum { GC_ID, GC_KIND, GC_CORR, GC_CORRELATION, GC_DEVICE, GC_STREAM, GC_START, GC_DUR, GC_NAME, GC_BYTES,
       GC_COPY_KIND, GC_SRC_KIND, GC_DST_KIND, GC_SYNC_TYPE };

/* A gpu_ops row with the columns every kind has; the caller sets its own
 * (clearing their NULL bits) and calls gt_store_gpu. */
static struct gt_row *gt_gpu_row(struct gt_writer *w, int kind, uint32_t correlation_id, int has_device,
                                 uint32_t dev, uint32_t stream, uint64_t start, uint64_t end)
{
    struct gt_row *r = gt_batch_row(&w->gpu);
    uint64_t ext = gt_corr_lookup(w, correlation_id);
    r->v[GC_ID] = ++w->next_gpu_id;
    r->v[GC_KIND] = kind;
    r->v[GC_CORR] = (int64_t)ext;
    r->v[GC_CORRELATION] = correlation_id;
    r->v[GC_DEVICE] = dev;
    r->v[GC_STREAM] = stream;
    r->v[GC_START] = (int64_t)start;
    r->v[GC_DUR] = end >= start ? (int64_t)(end - start) : 0;
    r->null_mask = (ext ? 0 : 1u << GC_CORR) | (has_device ? 0 : 1u << GC_DEVICE) | (0x3fu << GC_NAME);
    return r;
}

static void gt_set(struct gt_row *r, int col, int64_t v)
{
    r->v[col] = v;
    r->null_mask &= ~(1u << col);
}

static void gt_store_gpu(struct gt_writer *w, struct gt_row *r)
{
    if ((r->null_mask >> GC_CORR) & 1 && r->v[GC_CORRELATION])
        gt_corr_pending(w, (uint32_t)r->v[GC_CORRELATION], r->v[GC_ID]);
    gt_batch_done(w, &w->gpu);
}

void gt_write_gpu_record(const void *record, void *arg)
{
    struct gt_writer *w = arg;
    const CUpti_Activity *rec = record;
    if (gt_begin_txn(w) < 0)
        return;
    struct gt_row *r;
    switch (rec->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
        const CUpti_ActivityKernel10 *k = record;
        if (gt_pend_fold(w, gt_corr_lookup(w, k->correlationId), GT_GPU_KERNEL, k->deviceId, k->streamId, k->start,
                         k->end, 0, 0, 0, 0))
            break;
        int64_t name = gt_gpu_name_id(w, k->name);
        r = gt_gpu_row(w, GT_GPU_KERNEL, k->correlationId, 1, k->deviceId, k->streamId, k->start, k->end);
        if (name)
            gt_set(r, GC_NAME, name);
        gt_store_gpu(w, r);
        break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
        const CUpti_ActivityMemcpy6 *m = record;
        if (gt_pend_fold(w, gt_corr_lookup(w, m->correlationId), GT_GPU_MEMCPY, m->deviceId, m->streamId, m->start,
                         m->end, 1, m->srcKind, m->dstKind, m->bytes))
            break;
        r = gt_gpu_row(w, GT_GPU_MEMCPY, m->correlationId, 1, m->deviceId, m->streamId, m->start, m->end);
        gt_set(r, GC_BYTES, (int64_t)m->bytes);
        gt_set(r, GC_COPY_KIND, m->copyKind);
        gt_set(r, GC_SRC_KIND, m->srcKind);
        gt_set(r, GC_DST_KIND, m->dstKind);
        gt_store_gpu(w, r);
        break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
        const CUpti_ActivityMemset4 *m = record;
        if (gt_pend_fold(w, gt_corr_lookup(w, m->correlationId), GT_GPU_MEMSET, m->deviceId, m->streamId, m->start,
                         m->end, 0, 0, 0, 0))
            break;
        r = gt_gpu_row(w, GT_GPU_MEMSET, m->correlationId, 1, m->deviceId, m->streamId, m->start, m->end);
        gt_set(r, GC_BYTES, (int64_t)m->bytes);
        gt_store_gpu(w, r);
        break;
    }
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
        const CUpti_ActivitySynchronization2 *y = record;
        r = gt_gpu_row(w, GT_GPU_SYNC, y->correlationId, 0, 0, y->streamId, y->start, y->end);
        gt_set(r, GC_SYNC_TYPE, y->type);
        gt_store_gpu(w, r);
        break;
    }
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
        const CUpti_ActivityExternalCorrelation *x = record;
        if (x->externalKind != CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2)
            break; /* someone else's (the PyTorch profiler's, say) */
        gt_corr_learn(w, x->correlationId, x->externalId);
        break;
    }
    case CUPTI_ACTIVITY_KIND_OVERHEAD: {
        const CUpti_ActivityOverhead3 *o = record;
        /* DRIVER_COMPILER is 1; the CUPTI kinds count up in steps of 1 << 16. */
        static const char *const kinds[] = {"driver_compiler", "cupti_buffer_flush", "cupti_instrumentation",
                                            "cupti_resource", "runtime_triggered_module_loading",
                                            "lazy_function_loading", "command_buffer_full",
                                            "activity_buffer_request", "uvm_activity_init"};
        unsigned v = (unsigned)o->overheadKind;
        unsigned k = v == 0 ? 99 : v == 1 ? 0 : (v & 0xffff) == 0 ? v >> 16 : 99;
        const char *kind = k < sizeof(kinds) / sizeof(kinds[0]) ? kinds[k] : "unknown";
        sqlite3_bind_text(w->st[ST_OVERHEAD], 1, kind, -1, SQLITE_STATIC);
        sqlite3_bind_int64(w->st[ST_OVERHEAD], 2, (int64_t)o->start);
        sqlite3_bind_int64(w->st[ST_OVERHEAD], 3, (int64_t)o->end);
        gt_step(w, ST_OVERHEAD);
        break;
    }
    default:
        break;
    }
}

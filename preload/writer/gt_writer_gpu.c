/* gt_writer_gpu.c: storing CUPTI's activity records, on the writer thread. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cupti.h>

#include "cupti/gt_cupti.h"
#include "cupti/gt_cupti_app.h"
#include "writer/gt_writer_int.h"

/* CUPTI correlation id -> our external id, from CUPTI's external-correlation
 * records, so that each GPU record is stored with the call's own id
 * (events.corr) and no table of pairs is needed. CUPTI's ids count up, so
 * a direct-mapped table keeps the latest 2^18 of them: far more than are
 * in flight between an external-correlation record and the GPU records it
 * names, which follow it in CUPTI's buffers. */
#define GT_CORR_SLOTS (1u << 18)
/* A GPU record whose external-correlation record had not come yet is
 * stored with corr NULL and mended when it comes, found by its CUPTI id in
 * a second direct-mapped table: CUPTI hands buffers back on more than one
 * thread (its own, and each one that flushes), and a buffer of thousands
 * of kernel records may reach the writer before the one holding their
 * external-correlation records. */
struct gt_corrmap {
    uint32_t tag[GT_CORR_SLOTS];  /* CUPTI correlation id + 1; 0: empty */
    uint64_t ext[GT_CORR_SLOTS];
    uint32_t wait_tag[GT_CORR_SLOTS]; /* a record waits for this id's external id: id + 1 */
    int64_t wait_row[GT_CORR_SLOTS];  /* its gpu_ops row */
};

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
    if (m->wait_tag[slot] == correlation_id + 1) {
        gt_batch_flush(w, &w->gpu); /* the row may still be in the batch */
        sqlite3_bind_int64(w->st[ST_GPU_CORR], 1, (int64_t)ext);
        sqlite3_bind_int64(w->st[ST_GPU_CORR], 2, m->wait_row[slot]);
        gt_step(w, ST_GPU_CORR);
        m->wait_tag[slot] = 0;
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
    unsigned slot = correlation_id & (GT_CORR_SLOTS - 1);
    m->wait_tag[slot] = correlation_id + 1;
    m->wait_row[slot] = row;
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

/* Columns of ST_GPU, from 0: id, kind, corr, correlation_id, device,
 * stream, start_ns, dur_ns, name_id, bytes, copy_kind, src_kind, dst_kind,
 * sync_type, graph_id, graph_node_id. */
enum { GC_ID, GC_KIND, GC_CORR, GC_CORRELATION, GC_DEVICE, GC_STREAM, GC_START, GC_DUR, GC_NAME, GC_BYTES,
       GC_COPY_KIND, GC_SRC_KIND, GC_DST_KIND, GC_SYNC_TYPE, GC_GRAPH, GC_GRAPH_NODE };

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
    r->null_mask = (ext ? 0 : 1u << GC_CORR) | (has_device ? 0 : 1u << GC_DEVICE) | (0xffu << GC_NAME);
    return r;
}

static void gt_set(struct gt_row *r, int col, int64_t v)
{
    r->v[col] = v;
    r->null_mask &= ~(1u << col);
}

/* Work a graph launch replayed: its graph and node (0: none). */
static void gt_set_graph(struct gt_row *r, uint32_t graph, uint64_t node)
{
    if (!node)
        return;
    gt_set(r, GC_GRAPH, graph);
    gt_set(r, GC_GRAPH_NODE, (int64_t)node);
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
    if (w->windowed && (rec->kind == CUPTI_ACTIVITY_KIND_KERNEL || rec->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL ||
                        rec->kind == CUPTI_ACTIVITY_KIND_MEMCPY || rec->kind == CUPTI_ACTIVITY_KIND_MEMSET)) {
        uint32_t c = rec->kind == CUPTI_ACTIVITY_KIND_MEMCPY ? ((const CUpti_ActivityMemcpy6 *)record)->correlationId
                   : rec->kind == CUPTI_ACTIVITY_KIND_MEMSET ? ((const CUpti_ActivityMemset4 *)record)->correlationId
                                                             : ((const CUpti_ActivityKernel10 *)record)->correlationId;
        uint64_t ext = gt_corr_lookup(w, c);
        if (gt_writer_left_out(w, ext))
            return; /* the call that made it was outside the window */
        /* Work no recorded call made (CUPTI runs a little past the window's
         * edges): kept only where the GPU ran it during the window. */
        const CUpti_ActivityKernel10 *k = record;
        uint64_t start = rec->kind == CUPTI_ACTIVITY_KIND_MEMCPY ? ((const CUpti_ActivityMemcpy6 *)record)->start
                       : rec->kind == CUPTI_ACTIVITY_KIND_MEMSET ? ((const CUpti_ActivityMemset4 *)record)->start
                                                                 : k->start;
        uint64_t end = rec->kind == CUPTI_ACTIVITY_KIND_MEMCPY ? ((const CUpti_ActivityMemcpy6 *)record)->end
                     : rec->kind == CUPTI_ACTIVITY_KIND_MEMSET ? ((const CUpti_ActivityMemset4 *)record)->end
                                                               : k->end;
        uint64_t until = atomic_load(&w->until_ns);
        if (!ext && (end < atomic_load(&w->since_ns) || (until && start >= until)))
            return;
    }
    switch (rec->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
        const CUpti_ActivityKernel10 *k = record;
        if (!k->graphNodeId && gt_pend_fold(w, gt_corr_lookup(w, k->correlationId), GT_GPU_KERNEL, k->deviceId,
                                            k->streamId, k->start, k->end, 0, 0, 0, 0))
            break;
        int64_t name = gt_gpu_name_id(w, k->name);
        r = gt_gpu_row(w, GT_GPU_KERNEL, k->correlationId, 1, k->deviceId, k->streamId, k->start, k->end);
        if (name)
            gt_set(r, GC_NAME, name);
        gt_set_graph(r, k->graphId, k->graphNodeId);
        gt_store_gpu(w, r);
        break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
        const CUpti_ActivityMemcpy6 *m = record;
        if (!m->graphNodeId && gt_pend_fold(w, gt_corr_lookup(w, m->correlationId), GT_GPU_MEMCPY, m->deviceId,
                                            m->streamId, m->start, m->end, 1, m->srcKind, m->dstKind, m->bytes))
            break;
        r = gt_gpu_row(w, GT_GPU_MEMCPY, m->correlationId, 1, m->deviceId, m->streamId, m->start, m->end);
        gt_set(r, GC_BYTES, (int64_t)m->bytes);
        gt_set(r, GC_COPY_KIND, m->copyKind);
        gt_set(r, GC_SRC_KIND, m->srcKind);
        gt_set(r, GC_DST_KIND, m->dstKind);
        gt_set_graph(r, m->graphId, m->graphNodeId);
        gt_store_gpu(w, r);
        break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
        const CUpti_ActivityMemset4 *m = record;
        if (!m->graphNodeId && gt_pend_fold(w, gt_corr_lookup(w, m->correlationId), GT_GPU_MEMSET, m->deviceId,
                                            m->streamId, m->start, m->end, 0, 0, 0, 0))
            break;
        r = gt_gpu_row(w, GT_GPU_MEMSET, m->correlationId, 1, m->deviceId, m->streamId, m->start, m->end);
        gt_set(r, GC_BYTES, (int64_t)m->bytes);
        gt_set_graph(r, m->graphId, m->graphNodeId);
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

void gt_writer_cupti_counters(struct gt_writer *w)
{
    gt_meta_u64(w, "cupti_dropped_records", gt_cupti_dropped());
    const char *mode = gt_cupti_app_mode();
    if (!mode)
        return;
    gt_meta(w, "cupti_program", mode);
    gt_meta_u64(w, "cupti_program_records", gt_cupti_app_records());
    gt_meta_u64(w, "cupti_program_dropped", gt_cupti_app_records_dropped());
    double rate;
    int64_t off;
    if (gt_cupti_app_clock(&rate, &off)) {
        char v[48];
        snprintf(v, sizeof(v), "%lld", (long long)off);
        gt_meta(w, "cupti_clock_offset_ns", v);
        snprintf(v, sizeof(v), "%.9f", rate);
        gt_meta(w, "cupti_clock_ns_per_tick", v);
    }
}

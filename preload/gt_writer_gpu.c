/* gt_writer_gpu.c: storing CUPTI's activity records, on the writer thread. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cupti.h>

#include "gt_writer_int.h"

/* CUPTI's enumerations, as the schema spells them. */
static const char *gt_cupti_copy_kind(unsigned k)
{
    static const char *const n[] = {"unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
                                    "AtoD", "DtoA", "DtoD", "HtoH", "PtoP"};
    return k < sizeof(n) / sizeof(n[0]) ? n[k] : "unknown";
}

static const char *gt_cupti_mem_kind(unsigned k)
{
    static const char *const n[] = {"unknown", "pageable", "pinned", "device", "array",
                                    "managed", "device_static", "managed_static"};
    return k < sizeof(n) / sizeof(n[0]) ? n[k] : "unknown";
}

static const char *gt_cupti_sync_type(unsigned k)
{
    static const char *const n[] = {"unknown", "event_synchronize", "stream_wait_event", "stream_synchronize",
                                    "context_synchronize"};
    return k < sizeof(n) / sizeof(n[0]) ? n[k] : "unknown";
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

static void gt_bind_gpu_common(sqlite3_stmt *s, const char *kind, uint32_t corr, uint32_t dev, uint32_t ctx,
                               uint32_t stream, uint64_t start, uint64_t end)
{
    sqlite3_bind_text(s, 1, kind, -1, SQLITE_STATIC);
    sqlite3_bind_int64(s, 2, corr);
    sqlite3_bind_int64(s, 3, dev);
    sqlite3_bind_int64(s, 4, ctx);
    sqlite3_bind_int64(s, 5, stream);
    sqlite3_bind_int64(s, 6, (int64_t)start);
    sqlite3_bind_int64(s, 7, (int64_t)end);
}

void gt_write_gpu_record(const void *record, void *arg)
{
    struct gt_writer *w = arg;
    const CUpti_Activity *r = record;
    if (gt_begin_txn(w) < 0)
        return;
    sqlite3_stmt *s = w->st[ST_GPU];
    switch (r->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
        const CUpti_ActivityKernel10 *k = record;
        gt_bind_gpu_common(s, "kernel", k->correlationId, k->deviceId, k->contextId, k->streamId, k->start,
                           k->end);
        int64_t name = gt_gpu_name_id(w, k->name);
        if (name)
            sqlite3_bind_int64(s, 8, name);
        gt_step(w, ST_GPU);
        break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
        const CUpti_ActivityMemcpy6 *m = record;
        gt_bind_gpu_common(s, "memcpy", m->correlationId, m->deviceId, m->contextId, m->streamId, m->start,
                           m->end);
        sqlite3_bind_int64(s, 9, (int64_t)m->bytes);
        sqlite3_bind_text(s, 10, gt_cupti_copy_kind(m->copyKind), -1, SQLITE_STATIC);
        sqlite3_bind_text(s, 11, gt_cupti_mem_kind(m->srcKind), -1, SQLITE_STATIC);
        sqlite3_bind_text(s, 12, gt_cupti_mem_kind(m->dstKind), -1, SQLITE_STATIC);
        gt_step(w, ST_GPU);
        break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
        const CUpti_ActivityMemset4 *m = record;
        gt_bind_gpu_common(s, "memset", m->correlationId, m->deviceId, m->contextId, m->streamId, m->start,
                           m->end);
        sqlite3_bind_int64(s, 9, (int64_t)m->bytes);
        gt_step(w, ST_GPU);
        break;
    }
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
        const CUpti_ActivitySynchronization2 *y = record;
        gt_bind_gpu_common(s, "sync", y->correlationId, 0, y->contextId, y->streamId, y->start, y->end);
        sqlite3_bind_null(s, 3);
        sqlite3_bind_text(s, 13, gt_cupti_sync_type(y->type), -1, SQLITE_STATIC);
        gt_step(w, ST_GPU);
        break;
    }
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
        const CUpti_ActivityExternalCorrelation *x = record;
        if (x->externalKind != CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2)
            break; /* someone else's (the PyTorch profiler's, say) */
        sqlite3_bind_int64(w->st[ST_EXT], 1, x->correlationId);
        sqlite3_bind_int64(w->st[ST_EXT], 2, (int64_t)x->externalId);
        gt_step(w, ST_EXT);
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

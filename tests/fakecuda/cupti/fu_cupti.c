/* fu_cupti.c: the simulated CUPTI Activity API over the simulated driver.
 *
 * Records are packed into the client's buffers with the real record
 * structs, and handed back as real CUPTI does: when a buffer fills, on a
 * flush period, and on cuptiActivityFlushAll, from a thread of its own. The
 * GPU's times come from the simulated driver (fakecuda.h), late and in any
 * order across streams. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cupti.h>

#include "fu_api_select.h"
#include "fakecuda.h"

#define FU_API __attribute__((visibility("default")))
#define FU_EXT_KINDS 8
#define FU_EXT_DEPTH 32

struct fu_done {
    uint8_t *buf;
    size_t size, valid;
    struct fu_done *next;
};

static pthread_mutex_t fu_lock = PTHREAD_MUTEX_INITIALIZER;

/* fork(): the child's lock starts afresh (its driver still calls in at
 * each of its calls; a lock the delivering thread held at the fork would
 * never be let go). */
static void fu_after_fork_child(void) { pthread_mutex_init(&fu_lock, NULL); }

__attribute__((constructor)) static void fu_atfork(void)
{
    pthread_atfork(NULL, NULL, fu_after_fork_child);
}
static pthread_cond_t fu_wake = PTHREAD_COND_INITIALIZER;
static CUpti_BuffersCallbackRequestFunc fu_request;
static CUpti_BuffersCallbackCompleteFunc fu_complete;
static CUpti_TimestampCallbackFunc fu_clock;
/* The client's clock as a line over the GPU's: c = c0 + (g - g0) * rate
 * (a clock of its own may count other units, as a TSC's ticks do). */
static uint64_t fu_clock_c0, fu_clock_g0;
static double fu_clock_rate = 1.0;
static uint8_t fu_enabled[64];
static uint8_t *fu_buf;
static size_t fu_size, fu_used;
static struct fu_done *fu_done_head, *fu_done_tail;
static size_t fu_dropped;
static uint32_t fu_period_ms;
static int fu_thread_started;

static __thread uint64_t fu_ext[FU_EXT_KINDS][FU_EXT_DEPTH];
static __thread int fu_ext_depth[FU_EXT_KINDS];

static struct {
    void (*activity_subscribe)(fakecuda_activity_cb, void *);
    void (*api_subscribe)(fakecuda_api_cb, void *);
    void (*flush)(void);
    uint64_t (*now)(void);
} fu_drv;

static int fu_env(const char *name)
{
    const char *v = getenv(name);
    return v && strcmp(v, "1") == 0;
}

static uint64_t fu_gpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t fu_ts(uint64_t gpu)
{
    if (!fu_clock_g0)
        return gpu;
    return (uint64_t)((int64_t)fu_clock_c0 + (int64_t)((double)((int64_t)gpu - (int64_t)fu_clock_g0) * fu_clock_rate));
}

/* ---- buffers ---- */

static size_t fu_record_size(CUpti_ActivityKind k)
{
    switch (k) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return sizeof(CUpti_ActivityKernel10);
    case CUPTI_ACTIVITY_KIND_MEMCPY: return sizeof(CUpti_ActivityMemcpy6);
    case CUPTI_ACTIVITY_KIND_MEMSET: return sizeof(CUpti_ActivityMemset4);
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: return sizeof(CUpti_ActivitySynchronization2);
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: return sizeof(CUpti_ActivityExternalCorrelation);
    case CUPTI_ACTIVITY_KIND_OVERHEAD: return sizeof(CUpti_ActivityOverhead3);
    case CUPTI_ACTIVITY_KIND_DRIVER:
    case CUPTI_ACTIVITY_KIND_RUNTIME: return sizeof(CUpti_ActivityAPI);
    default: return 0;
    }
}

static size_t fu_align(size_t n)
{
    return (n + 7) & ~(size_t)7;
}

/* Moves the current buffer to the completed list. Lock held. */
static void fu_retire_locked(void)
{
    if (!fu_buf)
        return;
    struct fu_done *d = malloc(sizeof(*d));
    if (!d)
        return;
    *d = (struct fu_done){fu_buf, fu_size, fu_used, NULL};
    if (fu_done_tail)
        fu_done_tail->next = d;
    else
        fu_done_head = d;
    fu_done_tail = d;
    fu_buf = NULL;
    fu_size = fu_used = 0;
    pthread_cond_signal(&fu_wake);
}

/* Room for one record, from the client's buffers. Lock held. NULL: dropped. */
static void *fu_reserve_locked(size_t n)
{
    n = fu_align(n);
    if (fu_buf && fu_used + n > fu_size)
        fu_retire_locked();
    if (!fu_buf) {
        uint8_t *b = NULL;
        size_t size = 0, max = 0;
        if (fu_request)
            fu_request(&b, &size, &max);
        if (!b || size < n) {
            fu_dropped++;
            return NULL;
        }
        fu_buf = b;
        fu_size = size;
        fu_used = 0;
    }
    void *p = fu_buf + fu_used;
    memset(p, 0, n);
    fu_used += n;
    return p;
}

/* FAKECUDA_CUPTI_EXT_LATE=1: external-correlation records land after the
 * activity record that follows them, as they may when CUPTI hands back
 * per-context and per-thread buffers in another order: a tracer must link
 * them either way. Lock held for all of these. */
#define FU_LATE_MAX 1024
static struct {
    int on;
    unsigned n;
    CUpti_ActivityExternalCorrelation r[FU_LATE_MAX];
} fu_late;

static void fu_late_emit_locked(void)
{
    unsigned n = fu_late.n;
    fu_late.n = 0;
    for (unsigned i = 0; i < n; i++) {
        CUpti_ActivityExternalCorrelation *r = fu_reserve_locked(sizeof(*r));
        if (r)
            *r = fu_late.r[i];
    }
}

/* Room for an activity record (a kernel, a copy, ...), followed by any
 * external-correlation records held back. */
static void *fu_reserve_activity_locked(size_t n)
{
    void *p = fu_reserve_locked(n);
    if (p && fu_late.n)
        fu_late_emit_locked();
    return p;
}

static int fu_on(CUpti_ActivityKind k)
{
    return (unsigned)k < sizeof(fu_enabled) && fu_enabled[k];
}

/* As real CUPTI, a call's work is recorded if its kind was on when the
 * call was made (it instruments the launch), not when the work ends: the
 * kinds on at each call, by correlation id. Lock held for these. */
#define FU_CALLS (1u << 16)
static struct {
    uint32_t tag; /* correlation id + 1 */
    uint64_t on;  /* kinds < 64 */
} fu_at_call[FU_CALLS];

static uint64_t fu_enabled_mask; /* fu_enabled as bits */

static void fu_note_call_locked(uint32_t corr)
{
    fu_at_call[corr & (FU_CALLS - 1)].tag = corr + 1;
    fu_at_call[corr & (FU_CALLS - 1)].on = fu_enabled_mask;
}

/* Kind k on for the call `corr` made (now, for a call not seen). */
static int fu_on_for(CUpti_ActivityKind k, uint32_t corr)
{
    if (corr && fu_at_call[corr & (FU_CALLS - 1)].tag == corr + 1)
        return (unsigned)k < 64 && (fu_at_call[corr & (FU_CALLS - 1)].on >> k) & 1;
    return fu_on(k);
}

/* ---- records from the simulated GPU ---- */

static void fu_on_activity(const struct fakecuda_activity *a, void *arg)
{
    (void)arg;
    pthread_mutex_lock(&fu_lock);
    switch (a->kind) {
    case FAKECUDA_ACT_KERNEL: {
        uint32_t c = a->correlation_id;
        CUpti_ActivityKind k = fu_on_for(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, c) ? CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL
                               : fu_on_for(CUPTI_ACTIVITY_KIND_KERNEL, c)         ? CUPTI_ACTIVITY_KIND_KERNEL
                                                                                  : CUPTI_ACTIVITY_KIND_INVALID;
        CUpti_ActivityKernel10 *r = k ? fu_reserve_activity_locked(sizeof(*r)) : NULL;
        if (!r)
            break;
        r->kind = k;
        r->start = fu_ts(a->start_ns);
        r->end = r->completed = fu_ts(a->end_ns);
        r->queued = r->submitted = CUPTI_TIMESTAMP_UNKNOWN;
        r->deviceId = a->device;
        r->contextId = a->context_id;
        r->streamId = a->stream_id;
        r->gridX = (int32_t)a->grid[0];
        r->gridY = (int32_t)a->grid[1];
        r->gridZ = (int32_t)a->grid[2];
        r->blockX = (int32_t)a->block[0];
        r->blockY = (int32_t)a->block[1];
        r->blockZ = (int32_t)a->block[2];
        r->dynamicSharedMemory = (int32_t)a->shared_mem;
        r->correlationId = a->correlation_id;
        r->name = a->name;
        r->graphId = a->graph_id;
        r->graphNodeId = a->graph_node_id;
        break;
    }
    case FAKECUDA_ACT_MEMCPY: {
        CUpti_ActivityMemcpy6 *r = fu_on_for(CUPTI_ACTIVITY_KIND_MEMCPY, a->correlation_id) ? fu_reserve_activity_locked(sizeof(*r)) : NULL;
        if (!r)
            break;
        r->kind = CUPTI_ACTIVITY_KIND_MEMCPY;
        r->copyKind = (uint8_t)a->copy_kind;
        r->srcKind = (uint8_t)a->src_kind;
        r->dstKind = (uint8_t)a->dst_kind;
        r->bytes = a->bytes;
        r->start = fu_ts(a->start_ns);
        r->end = fu_ts(a->end_ns);
        r->deviceId = a->device;
        r->contextId = a->context_id;
        r->streamId = a->stream_id;
        r->correlationId = a->correlation_id;
        r->graphId = a->graph_id;
        r->graphNodeId = a->graph_node_id;
        break;
    }
    case FAKECUDA_ACT_MEMSET: {
        CUpti_ActivityMemset4 *r = fu_on_for(CUPTI_ACTIVITY_KIND_MEMSET, a->correlation_id) ? fu_reserve_activity_locked(sizeof(*r)) : NULL;
        if (!r)
            break;
        r->kind = CUPTI_ACTIVITY_KIND_MEMSET;
        r->value = (uint32_t)a->memset_value;
        r->bytes = a->bytes;
        r->start = fu_ts(a->start_ns);
        r->end = fu_ts(a->end_ns);
        r->deviceId = a->device;
        r->contextId = a->context_id;
        r->streamId = a->stream_id;
        r->correlationId = a->correlation_id;
        r->memoryKind = (uint16_t)a->dst_kind;
        r->graphId = a->graph_id;
        r->graphNodeId = a->graph_node_id;
        break;
    }
    case FAKECUDA_ACT_SYNC: {
        CUpti_ActivitySynchronization2 *r =
            fu_on_for(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, a->correlation_id) ? fu_reserve_activity_locked(sizeof(*r)) : NULL;
        if (!r)
            break;
        r->kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
        r->type = (CUpti_ActivitySynchronizationType)a->sync_type;
        r->start = fu_ts(a->start_ns);
        r->end = fu_ts(a->end_ns);
        r->correlationId = a->correlation_id;
        r->contextId = a->context_id;
        r->streamId = a->stream_id;
        break;
    }
    default:
        break;
    }
    pthread_mutex_unlock(&fu_lock);
}

/* On the calling thread, as each driver call starts (or runtime call: the
 * driver calls inside it take its correlation id and have no record of
 * their own, fk_activity.c): its API record, if
 * the function gets one (fu_api_select.c), preceded by an external-
 * correlation record for each external id the thread has pushed. As in
 * CUPTI, a call with no API record has no external-correlation record. */
static void fu_on_api(uint32_t corr, const char *api, void *arg)
{
    (void)arg;
    uint32_t cbid = 0;
    CUpti_ActivityKind kind = CUPTI_ACTIVITY_KIND_DRIVER;
    int selected = fu_api_selected(api, &cbid, &kind);
    pthread_mutex_lock(&fu_lock);
    fu_note_call_locked(corr);
    if (!selected) {
        pthread_mutex_unlock(&fu_lock);
        return;
    }
    if (fu_on(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION)) {
        for (int k = 0; k < FU_EXT_KINDS; k++) {
            if (fu_ext_depth[k] <= 0)
                continue;
            if (fu_late.on && fu_late.n == FU_LATE_MAX)
                fu_late_emit_locked(); /* held back long enough */
            CUpti_ActivityExternalCorrelation *r =
                fu_late.on ? &fu_late.r[fu_late.n++] : fu_reserve_locked(sizeof(*r));
            if (!r)
                break;
            memset(r, 0, sizeof(*r));
            r->kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
            r->externalKind = (CUpti_ExternalCorrelationKind)k;
            r->externalId = fu_ext[k][fu_ext_depth[k] - 1];
            r->correlationId = corr;
        }
    }
    /* The call's start only (an instant), written as the call starts. */
    CUpti_ActivityAPI *d = fu_reserve_locked(sizeof(*d));
    if (d) {
        memset(d, 0, sizeof(*d));
        d->kind = kind;
        d->cbid = cbid;
        d->start = d->end = fu_ts(fu_gpu_now());
        d->processId = (uint32_t)getpid();
        d->threadId = (uint32_t)gettid();
        d->correlationId = corr;
    }
    pthread_mutex_unlock(&fu_lock);
}

/* ---- delivery ---- */

static void fu_deliver_done(void)
{
    pthread_mutex_lock(&fu_lock);
    struct fu_done *d = fu_done_head;
    fu_done_head = fu_done_tail = NULL;
    CUpti_BuffersCallbackCompleteFunc cb = fu_complete;
    pthread_mutex_unlock(&fu_lock);
    while (d) {
        struct fu_done *next = d->next;
        if (cb)
            cb(NULL, 0, d->buf, d->size, d->valid);
        free(d);
        d = next;
    }
}

static void fu_flush_current(int with_overhead)
{
    uint64_t t0 = fu_gpu_now();
    if (fu_drv.flush)
        fu_drv.flush();
    pthread_mutex_lock(&fu_lock);
    if (fu_late.n)
        fu_late_emit_locked();
    if (with_overhead && fu_on(CUPTI_ACTIVITY_KIND_OVERHEAD) && fu_buf) {
        CUpti_ActivityOverhead3 *o = fu_reserve_locked(sizeof(*o));
        if (o) {
            o->kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
            o->overheadKind = CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH;
            o->objectKind = CUPTI_ACTIVITY_OBJECT_PROCESS;
            o->start = fu_ts(t0);
            o->end = fu_ts(fu_gpu_now());
        }
    }
    if (fu_buf && fu_used)
        fu_retire_locked();
    pthread_mutex_unlock(&fu_lock);
    fu_deliver_done();
}

static void *fu_thread(void *arg)
{
    (void)arg;
    for (;;) {
        pthread_mutex_lock(&fu_lock);
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        uint32_t ms = fu_period_ms ? fu_period_ms : 1000;
        ts.tv_sec += ms / 1000;
        ts.tv_nsec += (long)(ms % 1000) * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        if (!fu_done_head)
            pthread_cond_timedwait(&fu_wake, &fu_lock, &ts);
        int periodic = fu_period_ms && !fu_done_head;
        pthread_mutex_unlock(&fu_lock);
        if (periodic)
            fu_flush_current(1);
        else
            fu_deliver_done();
    }
    return NULL;
}

/* ---- setup ---- */

static CUptiResult fu_attach(void)
{
    if (fu_env("FAKECUDA_CUPTI_FAIL"))
        return CUPTI_ERROR_NOT_INITIALIZED;
    fu_late.on = fu_env("FAKECUDA_CUPTI_EXT_LATE");
    if (fu_drv.activity_subscribe)
        return CUPTI_SUCCESS;
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (!h)
        h = dlopen("libcuda.so.1", RTLD_NOW);
    if (!h)
        return CUPTI_ERROR_NOT_INITIALIZED;
    *(void **)&fu_drv.activity_subscribe = dlsym(h, "fakecuda_activity_subscribe");
    *(void **)&fu_drv.api_subscribe = dlsym(h, "fakecuda_api_subscribe");
    *(void **)&fu_drv.flush = dlsym(h, "fakecuda_activity_flush");
    *(void **)&fu_drv.now = dlsym(h, "fakecuda_now_ns");
    if (!fu_drv.activity_subscribe || !fu_drv.api_subscribe || !fu_drv.flush) {
        fu_drv.activity_subscribe = NULL;
        return CUPTI_ERROR_NOT_INITIALIZED; /* a real driver: not ours to profile */
    }
    fu_drv.activity_subscribe(fu_on_activity, NULL);
    fu_drv.api_subscribe(fu_on_api, NULL);
    return CUPTI_SUCCESS;
}

FU_API CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc req,
                                                  CUpti_BuffersCallbackCompleteFunc done)
{
    if (!req || !done)
        return CUPTI_ERROR_INVALID_PARAMETER;
    CUptiResult r = fu_attach();
    if (r != CUPTI_SUCCESS)
        return r;
    pthread_mutex_lock(&fu_lock);
    fu_request = req;
    fu_complete = done;
    if (!fu_thread_started) {
        pthread_t t;
        if (pthread_create(&t, NULL, fu_thread, NULL) == 0) {
            pthread_detach(t);
            fu_thread_started = 1;
        }
    }
    pthread_mutex_unlock(&fu_lock);
    return CUPTI_SUCCESS;
}

/* The client's clock read between two readings of the GPU's, taken close
 * together (a thread descheduled between them would skew the line): the
 * GPU's time of the reading in *g. */
static uint64_t fu_read_between(CUpti_TimestampCallbackFunc cb, uint64_t *g)
{
    uint64_t best = ~0ull, c = 0;
    for (int i = 0; i < 20 && best > 500; i++) {
        uint64_t a = fu_gpu_now(), v = cb(), b = fu_gpu_now();
        if (b - a < best) {
            best = b - a;
            c = v;
            *g = a / 2 + b / 2;
        }
    }
    return c;
}

/* Timestamps go on the client's clock, mapped from the GPU's by a line
 * measured here over 5 ms, as CUPTI calibrates its clocks. A clock within a
 * microsecond of the GPU's is taken to be the same clock (CLOCK_MONOTONIC
 * both). */
FU_API CUptiResult cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc cb)
{
    if (!cb)
        return CUPTI_ERROR_INVALID_PARAMETER;
    uint64_t g0, c0 = fu_read_between(cb, &g0), g1 = g0, c1 = c0;
    int64_t off = (int64_t)c0 - (int64_t)g0;
    int same = off > -1000 && off < 1000;
    while (!same && fu_gpu_now() - g0 < 5000000)
        ;
    if (!same)
        c1 = fu_read_between(cb, &g1);
    pthread_mutex_lock(&fu_lock);
    fu_clock = cb;
    fu_clock_g0 = same ? 0 : g0;
    fu_clock_c0 = c0;
    fu_clock_rate = same ? 1.0 : (double)(c1 - c0) / (double)(g1 - g0);
    if (fu_clock_rate > 0.9999 && fu_clock_rate < 1.0001)
        fu_clock_rate = 1.0; /* nanoseconds, as the GPU's: the offset alone */
    pthread_mutex_unlock(&fu_lock);
    return CUPTI_SUCCESS;
}

static CUptiResult fu_set_kind(CUpti_ActivityKind k, uint8_t on)
{
    if (!fu_record_size(k))
        return CUPTI_ERROR_INVALID_KIND;
    CUptiResult r = fu_attach();
    if (r != CUPTI_SUCCESS)
        return r;
    if (k == CUPTI_ACTIVITY_KIND_DRIVER || k == CUPTI_ACTIVITY_KIND_RUNTIME)
        fu_api_select_all(k, on);
    pthread_mutex_lock(&fu_lock);
    fu_enabled[k] = on;
    if ((unsigned)k < 64)
        fu_enabled_mask = on ? fu_enabled_mask | 1ull << k : fu_enabled_mask & ~(1ull << k);
    pthread_mutex_unlock(&fu_lock);
    return CUPTI_SUCCESS;
}

FU_API CUptiResult cuptiActivityEnable(CUpti_ActivityKind k)
{
    return fu_set_kind(k, 1);
}

FU_API CUptiResult cuptiActivityDisable(CUpti_ActivityKind k)
{
    return fu_set_kind(k, 0);
}

FU_API CUptiResult cuptiActivityFlushAll(uint32_t flag)
{
    (void)flag;
    fu_flush_current(1);
    return CUPTI_SUCCESS;
}

FU_API CUptiResult cuptiActivityFlushPeriod(uint32_t ms)
{
    pthread_mutex_lock(&fu_lock);
    fu_period_ms = ms;
    pthread_cond_signal(&fu_wake);
    pthread_mutex_unlock(&fu_lock);
    return CUPTI_SUCCESS;
}

FU_API CUptiResult cuptiActivityGetNextRecord(uint8_t *buffer, size_t valid, CUpti_Activity **record)
{
    if (!buffer || !record)
        return CUPTI_ERROR_INVALID_PARAMETER;
    uint8_t *p = buffer;
    if (*record) {
        size_t n = fu_record_size((*record)->kind);
        if (!n)
            return CUPTI_ERROR_INVALID_KIND;
        p = (uint8_t *)*record + fu_align(n);
    }
    if (p < buffer || p + sizeof(CUpti_Activity) > buffer + valid) {
        *record = NULL;
        return CUPTI_ERROR_MAX_LIMIT_REACHED;
    }
    *record = (CUpti_Activity *)p;
    return CUPTI_SUCCESS;
}

FU_API CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext ctx, uint32_t stream, size_t *dropped)
{
    (void)ctx;
    (void)stream;
    if (!dropped)
        return CUPTI_ERROR_INVALID_PARAMETER;
    pthread_mutex_lock(&fu_lock);
    *dropped = fu_dropped;
    fu_dropped = 0;
    pthread_mutex_unlock(&fu_lock);
    return CUPTI_SUCCESS;
}

FU_API CUptiResult cuptiActivityPushExternalCorrelationId(CUpti_ExternalCorrelationKind kind, uint64_t id)
{
    if ((unsigned)kind >= FU_EXT_KINDS || kind == CUPTI_EXTERNAL_CORRELATION_KIND_INVALID)
        return CUPTI_ERROR_INVALID_PARAMETER;
    if (fu_ext_depth[kind] >= FU_EXT_DEPTH)
        return CUPTI_ERROR_OUT_OF_MEMORY;
    fu_ext[kind][fu_ext_depth[kind]++] = id;
    return CUPTI_SUCCESS;
}

FU_API CUptiResult cuptiActivityPopExternalCorrelationId(CUpti_ExternalCorrelationKind kind, uint64_t *last)
{
    if ((unsigned)kind >= FU_EXT_KINDS)
        return CUPTI_ERROR_INVALID_PARAMETER;
    if (fu_ext_depth[kind] <= 0)
        return CUPTI_ERROR_QUEUE_EMPTY;
    uint64_t id = fu_ext[kind][--fu_ext_depth[kind]];
    if (last)
        *last = id;
    return CUPTI_SUCCESS;
}

FU_API CUptiResult cuptiGetTimestamp(uint64_t *t)
{
    if (!t)
        return CUPTI_ERROR_INVALID_PARAMETER;
    *t = fu_clock ? fu_clock() : fu_gpu_now();
    return CUPTI_SUCCESS;
}

/* CUPTI's state goes, as in the real one: kinds off, and the buffer
 * callbacks forgotten (a client must register again). */
FU_API CUptiResult cuptiFinalize(void)
{
    fu_flush_current(0);
    pthread_mutex_lock(&fu_lock);
    memset(fu_enabled, 0, sizeof(fu_enabled));
    fu_enabled_mask = 0;
    fu_request = NULL;
    fu_complete = NULL;
    pthread_mutex_unlock(&fu_lock);
    return CUPTI_SUCCESS;
}

/* Graph and node ids, as the driver gave them (the ids its records carry). */
static void *fu_driver_sym(const char *name)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    return h ? dlsym(h, name) : NULL;
}

FU_API CUptiResult cuptiGetGraphNodeId(CUgraphNode node, uint64_t *id)
{
    int (*fn)(CUgraphNode, uint64_t *) = (int (*)(CUgraphNode, uint64_t *))fu_driver_sym("fakecuda_graph_node_id");
    if (!node || !id)
        return CUPTI_ERROR_INVALID_PARAMETER;
    if (!fn)
        return CUPTI_ERROR_NOT_INITIALIZED;
    return fn(node, id) == 0 ? CUPTI_SUCCESS : CUPTI_ERROR_INVALID_PARAMETER;
}

FU_API CUptiResult cuptiGetGraphId(CUgraph graph, uint32_t *id)
{
    int (*fn)(CUgraph, uint32_t *) = (int (*)(CUgraph, uint32_t *))fu_driver_sym("fakecuda_graph_id");
    if (!graph || !id)
        return CUPTI_ERROR_INVALID_PARAMETER;
    if (!fn)
        return CUPTI_ERROR_NOT_INITIALIZED;
    return fn(graph, id) == 0 ? CUPTI_SUCCESS : CUPTI_ERROR_INVALID_PARAMETER;
}

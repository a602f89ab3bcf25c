/* gt_cupti.c: finding, starting and draining CUPTI.
 *
 * CUPTI fills buffers we hand it and gives them back on its own thread;
 * that thread only queues them (under a mutex, a few times a second), and
 * the writer parses and stores the records. */
#include <dlfcn.h>
#include <link.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cupti.h>

#include "base/gt_base.h"
#include "cupti/gt_cupti.h"
#include "cupti/gt_cupti_int.h"

/* CUPTI's records take about 240 bytes a launch: at a million launches a
 * second, a buffer fills in 8 ms. Buffers are recycled. Once the writer
 * drains (gt_cupti_bound_buffers), never more than GT_CUPTI_MAX_BUFFERS
 * exist: when the writer falls that far behind, CUPTI drops records and
 * counts them (meta.cupti_dropped_records) rather than the tracer's memory
 * growing with the run. Before that, while the writer makes its trace file
 * and drains nothing (tens of milliseconds at the program's start on a
 * busy machine), every request is served: a slow start of ours must not
 * cost the program's first records; the pool shrinks back to its bound as
 * the writer hands the buffers back. */
#define GT_CUPTI_BUFFER (2u << 20)
#define GT_CUPTI_MAX_BUFFERS 8
/* A buffer handed back nearly empty (a flush: the program's collector, as
 * the PyTorch profiler's, flushes CUPTI at each window's end) is copied
 * out and lent again at once: a program flushing faster than the writer
 * drains would otherwise hold every buffer with a few records each, and
 * CUPTI drop the rest. The copies are bounded too. */
#define GT_CUPTI_COPY_MAX (GT_CUPTI_BUFFER / 16)
#define GT_CUPTI_COPIES_MAX (16u << 20)
struct gt_cupti_buf {
    uint8_t *data;
    size_t valid;
    int copy; /* a copy of a nearly empty buffer: freed, not lent again */
    struct gt_cupti_buf *next;
};

struct gt_cupti_api gt_cu;
_Atomic int gt_cupti_holding;
_Atomic(uint64_t) gt_cupti_tracer_kinds;
_Atomic int gt_cupti_enabled;
#define gt_cupti_on gt_cupti_enabled
static char gt_cupti_lib[PATH_MAX];
static pthread_mutex_t gt_cupti_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int gt_cupti_outstanding; /* buffers lent to CUPTI, not yet handed back */
static struct gt_cupti_buf *gt_cupti_head, *gt_cupti_tail;
/* Under gt_cupti_lock: every buffer of ours that exists (mine), those
 * written out and ready to lend again (spare), both arrays gt_cupti_cap
 * long; whether the pool is bounded yet. */
static uint8_t **gt_cupti_spare, **gt_cupti_mine;
static int gt_cupti_nspare, gt_cupti_nbuffers, gt_cupti_cap;
static int gt_cupti_bounded;
static _Atomic(uint64_t) gt_cupti_dropped_records;
static _Atomic(size_t) gt_cupti_copied; /* bytes in copies not yet drained */
static int gt_cupti_forked; /* CUPTI was running in the parent */

/* Room in mine and spare for one more buffer. Lock held. 0: none. */
static int gt_cupti_grow_locked(void)
{
    if (gt_cupti_nbuffers < gt_cupti_cap)
        return 1;
    int cap = gt_cupti_cap ? gt_cupti_cap * 2 : GT_CUPTI_MAX_BUFFERS;
    uint8_t **mine = realloc(gt_cupti_mine, (size_t)cap * sizeof(*mine));
    if (!mine)
        return 0;
    gt_cupti_mine = mine;
    uint8_t **spare = realloc(gt_cupti_spare, (size_t)cap * sizeof(*spare));
    if (!spare)
        return 0;
    gt_cupti_spare = spare;
    gt_cupti_cap = cap;
    return 1;
}

static uint64_t CUPTIAPI gt_cupti_clock(void)
{
    return gt_now_ns();
}

static void CUPTIAPI gt_cupti_buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    *buffer = NULL;
    *size = 0;
    *max_records = 0;
    void *p = NULL;
    pthread_mutex_lock(&gt_cupti_lock);
    if (gt_cupti_nspare)
        p = gt_cupti_spare[--gt_cupti_nspare];
    else if ((!gt_cupti_bounded || gt_cupti_nbuffers < GT_CUPTI_MAX_BUFFERS) && gt_cupti_grow_locked() &&
             posix_memalign(&p, 8, GT_CUPTI_BUFFER) == 0)
        gt_cupti_mine[gt_cupti_nbuffers++] = p;
    else
        p = NULL;
    pthread_mutex_unlock(&gt_cupti_lock);
    if (p) {
        *buffer = p;
        *size = GT_CUPTI_BUFFER;
        atomic_fetch_add(&gt_cupti_outstanding, 1);
    }
}

/* A buffer back from CUPTI, its records written or not wanted. */
static void gt_cupti_recycle(uint8_t *data)
{
    pthread_mutex_lock(&gt_cupti_lock);
    int keep = !gt_cupti_bounded || gt_cupti_nbuffers <= GT_CUPTI_MAX_BUFFERS;
    if (keep) {
        gt_cupti_spare[gt_cupti_nspare++] = data; /* room for every buffer there is */
    } else {
        /* one of those lent while the writer was not draining: the pool
         * shrinks back to its bound */
        for (int i = 0; i < gt_cupti_nbuffers; i++)
            if (gt_cupti_mine[i] == data) {
                gt_cupti_mine[i] = gt_cupti_mine[--gt_cupti_nbuffers];
                break;
            }
    }
    pthread_mutex_unlock(&gt_cupti_lock);
    if (!keep)
        free(data);
}

void gt_cupti_bound_buffers(void)
{
    pthread_mutex_lock(&gt_cupti_lock);
    gt_cupti_bounded = 1;
    pthread_mutex_unlock(&gt_cupti_lock);
}

static int gt_cupti_is_mine(const uint8_t *data)
{
    pthread_mutex_lock(&gt_cupti_lock);
    int mine = 0;
    for (int i = 0; i < gt_cupti_nbuffers && !mine; i++)
        mine = gt_cupti_mine[i] == data;
    pthread_mutex_unlock(&gt_cupti_lock);
    return mine;
}

/* A nearly empty buffer's records copied out, and the buffer lent again. */
static void gt_cupti_copy_out(struct gt_cupti_buf *b)
{
    if (b->valid > GT_CUPTI_COPY_MAX)
        return;
    if (atomic_fetch_add(&gt_cupti_copied, b->valid) + b->valid > GT_CUPTI_COPIES_MAX) {
        atomic_fetch_sub(&gt_cupti_copied, b->valid); /* over the bound: the buffer waits for the writer */
        return;
    }
    uint8_t *c = malloc(b->valid);
    if (!c) {
        atomic_fetch_sub(&gt_cupti_copied, b->valid);
        return;
    }
    memcpy(c, b->data, b->valid);
    gt_cupti_recycle(b->data);
    b->data = c;
    b->copy = 1;
}

static void CUPTIAPI gt_cupti_buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
                                               size_t valid)
{
    if (!gt_cupti_is_mine(buffer)) {
        /* The program's, lent to CUPTI before the tracer took it over. */
        gt_cupti_share_foreign(buffer, size, valid);
        return;
    }
    size_t dropped = 0;
    if (gt_cu.dropped && gt_cu.dropped(ctx, stream, &dropped) == CUPTI_SUCCESS && dropped)
        atomic_fetch_add(&gt_cupti_dropped_records, dropped);
    gt_cupti_dump_buffer(buffer, valid);
    gt_cupti_share_forward(buffer, valid);
    /* Between windows only the program's kinds are on: not the writer's. */
    struct gt_cupti_buf *b = valid && atomic_load(&gt_cupti_on) ? malloc(sizeof(*b)) : NULL;
    if (!b) {
        gt_cupti_recycle(buffer);
        atomic_fetch_sub(&gt_cupti_outstanding, 1);
        return;
    }
    b->data = buffer;
    b->valid = valid;
    b->copy = 0;
    b->next = NULL;
    gt_cupti_copy_out(b);
    pthread_mutex_lock(&gt_cupti_lock);
    if (gt_cupti_tail)
        gt_cupti_tail->next = b;
    else
        gt_cupti_head = b;
    gt_cupti_tail = b;
    pthread_mutex_unlock(&gt_cupti_lock);
    atomic_fetch_sub(&gt_cupti_outstanding, 1);
}

struct gt_find_dir {
    char dir[PATH_MAX];
};

/* Where the process's CUDA runtime lives: PyTorch wheels ship a CUPTI of
 * the same version beside it (nvidia/cuda_cupti/lib next to
 * nvidia/cuda_runtime/lib). */
static int gt_find_cudart_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct gt_find_dir *f = arg;
    const char *name = info->dlpi_name;
    const char *base = name ? strrchr(name, '/') : NULL;
    if (!base || strncmp(base + 1, "libcudart.so", 12) != 0)
        return 0;
    size_t n = (size_t)(base - name);
    if (n >= sizeof(f->dir))
        return 0;
    memcpy(f->dir, name, n);
    f->dir[n] = 0;
    return 1;
}

static void *gt_try_open(const char *path)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (h) {
        struct link_map *lm = NULL;
        if (dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name && lm->l_name[0])
            snprintf(gt_cupti_lib, sizeof(gt_cupti_lib), "%s", lm->l_name);
        else
            snprintf(gt_cupti_lib, sizeof(gt_cupti_lib), "%s", path);
    }
    return h;
}

static void *gt_open_cupti(char *why, size_t why_len)
{
    const char *env = getenv("GPUTRACE_CUPTI_PATH");
    if (env && *env) {
        void *h = gt_try_open(env);
        if (!h)
            snprintf(why, why_len, "GPUTRACE_CUPTI_PATH=%s cannot be loaded: %s", env, dlerror());
        return h;
    }
    struct gt_find_dir f = {{0}};
    dl_iterate_phdr(gt_find_cudart_cb, &f);
    static const char *const names[] = {"libcupti.so.13", "libcupti.so.12"};
    char path[PATH_MAX + 64];
    if (f.dir[0]) {
        for (size_t i = 0; i < 2; i++) {
            snprintf(path, sizeof(path), "%s/%s", f.dir, names[i]);
            if (access(path, R_OK) == 0) {
                void *h = gt_try_open(path);
                if (h)
                    return h;
            }
            snprintf(path, sizeof(path), "%s/../../cuda_cupti/lib/%s", f.dir, names[i]);
            if (access(path, R_OK) == 0) {
                void *h = gt_try_open(path);
                if (h)
                    return h;
            }
        }
    }
    for (size_t i = 0; i < 2; i++) {
        void *h = gt_try_open(names[i]);
        if (h)
            return h;
    }
    static const char *const toolkit[] = {"/usr/local/cuda/lib64/libcupti.so.13",
                                          "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13"};
    for (size_t i = 0; i < 2; i++) {
        void *h = gt_try_open(toolkit[i]);
        if (h)
            return h;
    }
    snprintf(why, why_len, "no CUPTI library found (set GPUTRACE_CUPTI_PATH)");
    return NULL;
}

#define GT_SYM(field, name)                                                 \
    do {                                                                    \
        *(void **)&gt_cu.field = dlsym(h, name);                            \
        if (!gt_cu.field) {                                                 \
            snprintf(why, why_len, "%s lacks %s", gt_cupti_lib, name);      \
            return 0;                                                       \
        }                                                                   \
    } while (0)

static const char *gt_cupti_err(CUptiResult r)
{
    const char *s = NULL;
    if (gt_cu.result_string && gt_cu.result_string(r, &s) == CUPTI_SUCCESS && s)
        return s;
    return "error";
}

static int gt_cupti_registered; /* callbacks and clock given to CUPTI: once a process */
static const char *gt_cupti_api_records = "none"; /* which API records are on (gt_cupti_api.c) */

static const CUpti_ActivityKind gt_cupti_kinds[] = {
    CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
    CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
    CUPTI_ACTIVITY_KIND_OVERHEAD,
};
#define GT_CUPTI_NKINDS (sizeof(gt_cupti_kinds) / sizeof(gt_cupti_kinds[0]))

static int gt_cupti_enable_kinds(char *why, size_t why_len)
{
    for (size_t i = 0; i < GT_CUPTI_NKINDS; i++) {
        CUptiResult r = gt_cu.enable(gt_cupti_kinds[i]);
        if (r == CUPTI_SUCCESS)
            atomic_fetch_or(&gt_cupti_tracer_kinds, 1ull << gt_cupti_kinds[i]);
        /* Overhead records are a bonus; the rest are the point. */
        if (r != CUPTI_SUCCESS && gt_cupti_kinds[i] != CUPTI_ACTIVITY_KIND_OVERHEAD) {
            for (size_t j = 0; j < i; j++)
                if (!gt_cupti_share_wants(gt_cupti_kinds[j])) {
                    gt_cu.disable(gt_cupti_kinds[j]);
                    atomic_fetch_and(&gt_cupti_tracer_kinds, ~(1ull << gt_cupti_kinds[j]));
                }
            snprintf(why, why_len, "CUPTI refused activity kind %d: %s", (int)gt_cupti_kinds[i], gt_cupti_err(r));
            return 0;
        }
    }
    gt_cupti_share_kernels_served();
    gt_cupti_api_records = gt_cupti_api_records_on();
    if (gt_cu.flush_period)
        gt_cu.flush_period(100); /* records reach the writer while their calls still wait (gt_writer_pend.c) */
    atomic_store(&gt_cupti_on, 1);
    return 1;
}

static int gt_cupti_load(char *why, size_t why_len)
{
    void *h = gt_open_cupti(why, why_len);
    if (!h)
        return 0;
    GT_SYM(register_callbacks, "cuptiActivityRegisterCallbacks");
    GT_SYM(register_timestamp, "cuptiActivityRegisterTimestampCallback");
    GT_SYM(enable, "cuptiActivityEnable");
    GT_SYM(disable, "cuptiActivityDisable");
    GT_SYM(flush_all, "cuptiActivityFlushAll");
    GT_SYM(next_record, "cuptiActivityGetNextRecord");
    GT_SYM(dropped, "cuptiActivityGetNumDroppedRecords");
    GT_SYM(push, "cuptiActivityPushExternalCorrelationId");
    GT_SYM(pop, "cuptiActivityPopExternalCorrelationId");
    *(void **)&gt_cu.result_string = dlsym(h, "cuptiGetResultString");
    *(void **)&gt_cu.graph_node_id = dlsym(h, "cuptiGetGraphNodeId");
    *(void **)&gt_cu.graph_id = dlsym(h, "cuptiGetGraphId");
    *(void **)&gt_cu.flush_period = dlsym(h, "cuptiActivityFlushPeriod");
    *(void **)&gt_cu.enable_driver_api = dlsym(h, "cuptiActivityEnableDriverApi");
    *(void **)&gt_cu.enable_runtime_api = dlsym(h, "cuptiActivityEnableRuntimeApi");
    *(void **)&gt_cu.callback_name = dlsym(h, "cuptiGetCallbackName");
    return 1;
}

int gt_cupti_start(const char *mode, char *why, size_t why_len)
{
    why[0] = 0;
    if (mode && strcmp(mode, "off") == 0) {
        snprintf(why, why_len, "GPUTRACE_GPU_TIMING=off");
        return 0;
    }
    if (gt_cupti_forked) {
        snprintf(why, why_len, "CUPTI stays with the parent process after fork()");
        return 0;
    }
    if (gt_cupti_registered) /* a standby window after the first: CUPTI is loaded and ours */
        return gt_cupti_enable_kinds(why, why_len);
    /* Our lookups get CUPTI's own functions, not the hooks that answer the
     * program's calls to them (hot/gt_dlsym.c passes a busy thread's). */
    int was_busy = gt_tls_busy;
    gt_tls_busy = 1;
    int ok = gt_cupti_load(why, why_len);
    gt_tls_busy = was_busy;
    if (!ok)
        return 0;

    CUptiResult r = gt_cupti_clock_program() ? CUPTI_SUCCESS : gt_cu.register_timestamp(gt_cupti_clock);
    if (r != CUPTI_SUCCESS) {
        snprintf(why, why_len, "CUPTI refused our clock: %s", gt_cupti_err(r));
        return 0;
    }
    gt_cupti_share_take();
    r = gt_cu.register_callbacks(gt_cupti_buffer_requested, gt_cupti_buffer_completed);
    if (r != CUPTI_SUCCESS) {
        snprintf(why, why_len, "CUPTI refused buffer callbacks: %s", gt_cupti_err(r));
        return 0;
    }
    gt_cupti_registered = 1;
    atomic_store(&gt_cupti_holding, 1);
    gt_cupti_share_taken();
    return gt_cupti_enable_kinds(why, why_len);
}

int gt_cupti_active(void)
{
    return atomic_load_explicit(&gt_cupti_on, memory_order_relaxed);
}

uint64_t gt_cupti_graph_node_id(void *node)
{
    uint64_t id = 0;
    if (!node || !atomic_load_explicit(&gt_cupti_on, memory_order_acquire) || !gt_cu.graph_node_id ||
        gt_cu.graph_node_id((CUgraphNode)node, &id) != CUPTI_SUCCESS)
        return 0;
    return id;
}

uint32_t gt_cupti_graph_id(void *graph)
{
    uint32_t id = 0;
    if (!graph || !atomic_load_explicit(&gt_cupti_on, memory_order_acquire) || !gt_cu.graph_id ||
        gt_cu.graph_id((CUgraph)graph, &id) != CUPTI_SUCCESS)
        return 0;
    return id;
}

void gt_cupti_push(uint64_t id)
{
    gt_cu.push(GT_EXT_KIND, id);
}

void gt_cupti_note_call(uint64_t id)
{
    gt_cupti_share_note(id);
}

void gt_cupti_pop(void)
{
    uint64_t last;
    gt_cu.pop(GT_EXT_KIND, &last);
}

void gt_cupti_flush(int forced)
{
    if (gt_cupti_active())
        gt_cu.flush_all(forced ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0);
}

void gt_cupti_stop(void)
{
    if (!gt_cupti_active())
        return;
    gt_cu.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    /* A buffer CUPTI's own thread was handing back while the flush ran may
     * still be on its way: wait for every buffer lent, a bounded time. */
    for (int ms = 0; ms < 1000 && atomic_load(&gt_cupti_outstanding) > 0; ms++)
        usleep(1000);
    /* Records dropped since the last buffer came back (none may come back
     * after them: CUPTI had no buffer to fill) are counted only if asked. */
    size_t dropped = 0;
    if (gt_cu.dropped && gt_cu.dropped(NULL, 0, &dropped) == CUPTI_SUCCESS && dropped)
        atomic_fetch_add(&gt_cupti_dropped_records, dropped);
    atomic_store(&gt_cupti_on, 0);
}

void gt_cupti_end(void)
{
    gt_cupti_share_end();
    gt_cupti_stop();
}

void gt_cupti_pause(void)
{
    if (!gt_cupti_active())
        return;
    /* The program's own kinds stay on: it gets their records still. */
    for (size_t i = 0; i < GT_CUPTI_NKINDS; i++) {
        if (gt_cupti_share_wants(gt_cupti_kinds[i]))
            continue;
        gt_cu.disable(gt_cupti_kinds[i]);
        atomic_fetch_and(&gt_cupti_tracer_kinds, ~(1ull << gt_cupti_kinds[i]));
    }
    gt_cupti_api_records_off(gt_cupti_share_wants(CUPTI_ACTIVITY_KIND_DRIVER),
                             gt_cupti_share_wants(CUPTI_ACTIVITY_KIND_RUNTIME));
    gt_cupti_stop();
}

void gt_cupti_release_buffers(void)
{
    pthread_mutex_lock(&gt_cupti_lock);
    while (gt_cupti_nspare) {
        uint8_t *p = gt_cupti_spare[--gt_cupti_nspare];
        for (int i = 0; i < gt_cupti_nbuffers; i++)
            if (gt_cupti_mine[i] == p) {
                gt_cupti_mine[i] = gt_cupti_mine[--gt_cupti_nbuffers];
                break;
            }
        free(p);
    }
    pthread_mutex_unlock(&gt_cupti_lock);
}

/* A record on the program's clock mapped onto ours: the times the writer
 * reads. */
static void gt_cupti_shift(CUpti_Activity *rec)
{
    switch (rec->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
        CUpti_ActivityKernel10 *k = (void *)rec;
        k->start = gt_cupti_clock_map(k->start);
        k->end = gt_cupti_clock_map(k->end);
        break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
        CUpti_ActivityMemcpy6 *m = (void *)rec;
        m->start = gt_cupti_clock_map(m->start);
        m->end = gt_cupti_clock_map(m->end);
        break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
        CUpti_ActivityMemset4 *m = (void *)rec;
        m->start = gt_cupti_clock_map(m->start);
        m->end = gt_cupti_clock_map(m->end);
        break;
    }
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
        CUpti_ActivitySynchronization2 *y = (void *)rec;
        y->start = gt_cupti_clock_map(y->start);
        y->end = gt_cupti_clock_map(y->end);
        break;
    }
    case CUPTI_ACTIVITY_KIND_OVERHEAD: {
        CUpti_ActivityOverhead3 *o = (void *)rec;
        o->start = gt_cupti_clock_map(o->start);
        o->end = gt_cupti_clock_map(o->end);
        break;
    }
    default:
        break;
    }
}

void gt_cupti_drain(gt_cupti_record_fn fn, void *arg)
{
    pthread_mutex_lock(&gt_cupti_lock);
    struct gt_cupti_buf *b = gt_cupti_head;
    gt_cupti_head = gt_cupti_tail = NULL;
    pthread_mutex_unlock(&gt_cupti_lock);
    int foreign = gt_cupti_clock_foreign();
    if (foreign && b)
        gt_cupti_clock_sample();
    while (b) {
        CUpti_Activity *rec = NULL;
        while (gt_cu.next_record(b->data, b->valid, &rec) == CUPTI_SUCCESS) {
            if (foreign)
                gt_cupti_shift(rec);
            fn(rec, arg);
        }
        struct gt_cupti_buf *next = b->next;
        if (b->copy) {
            free(b->data);
            atomic_fetch_sub(&gt_cupti_copied, b->valid);
        } else {
            gt_cupti_recycle(b->data);
        }
        free(b);
        b = next;
    }
}

uint64_t gt_cupti_dropped(void)
{
    return atomic_load(&gt_cupti_dropped_records);
}

const char *gt_cupti_library(void)
{
    return gt_cupti_lib;
}

const char *gt_cupti_api_records_kind(void)
{
    return gt_cupti_api_records;
}

void gt_cupti_after_fork_child(void)
{
    /* CUPTI's state and thread stay with the parent. */
    if (atomic_load(&gt_cupti_on) || gt_cupti_registered)
        gt_cupti_forked = 1;
    atomic_store(&gt_cupti_on, 0);
    gt_cupti_head = gt_cupti_tail = NULL;
    gt_cupti_nspare = gt_cupti_nbuffers = 0;
    atomic_store(&gt_cupti_outstanding, 0);
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    gt_cupti_lock = fresh;
    gt_cupti_share_after_fork_child();
    gt_cupti_clock_after_fork_child();
}

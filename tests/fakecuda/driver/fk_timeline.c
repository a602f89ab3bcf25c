/* fk_timeline.c: the GPU in real time. Work gets its start and end when it
 * is submitted (a stream runs in order; the legacy default stream waits for
 * every blocking stream and they for it); waiting means sleeping until a
 * time; activity records are delivered once their work has ended. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fk_driver.h"

/* Each device's legacy default stream (CUPTI numbers it 7 in each context). */
#define FK_LEGACY(d) {.magic = FK_MAGIC_STREAM, .id = 7, .legacy = 1, .device = d}
static struct CUstream_st fk_legacy[FK_MAX_DEVICES] = {FK_LEGACY(0), FK_LEGACY(1), FK_LEGACY(2), FK_LEGACY(3),
                                                       FK_LEGACY(4), FK_LEGACY(5), FK_LEGACY(6), FK_LEGACY(7)};
_Atomic int fk_pending_host;
static struct CUstream_st **fk_streams;
static size_t fk_nstreams;
static uint32_t fk_next_stream_id = 13;
static __thread struct CUstream_st *fk_tls_pts[FK_MAX_DEVICES]; /* this thread's per-thread default streams */

static void fk_register_stream_locked(struct CUstream_st *s)
{
    struct CUstream_st **v = realloc(fk_streams, (fk_nstreams + 1) * sizeof(*v));
    if (!v)
        return;
    fk_streams = v;
    fk_streams[fk_nstreams++] = s;
}

struct CUstream_st *fk_stream_create(unsigned flags, int priority)
{
    struct CUstream_st *s = calloc(1, sizeof(*s));
    if (!s)
        return NULL;
    s->magic = FK_MAGIC_STREAM;
    s->flags = flags;
    s->device = fk_current_device();
    s->priority = priority;
    pthread_mutex_lock(&fk_lock);
    s->id = fk_next_stream_id++;
    fk_register_stream_locked(s);
    pthread_mutex_unlock(&fk_lock);
    return s;
}

void fk_stream_destroy(struct CUstream_st *s)
{
    pthread_mutex_lock(&fk_lock);
    for (size_t i = 0; i < fk_nstreams; i++)
        if (fk_streams[i] == s) {
            fk_streams[i] = fk_streams[--fk_nstreams];
            break;
        }
    pthread_mutex_unlock(&fk_lock);
    s->magic = 0;
    /* Not freed: a late activity record or a racing query may still look. */
}

int fk_stream_valid(CUstream s)
{
    uintptr_t v = (uintptr_t)s;
    if (v <= 2)
        return 1;
    return ((struct CUstream_st *)s)->magic == FK_MAGIC_STREAM;
}

/* NULL is the legacy stream, or in a per-thread entry point this thread's own. */
struct CUstream_st *fk_stream(CUstream s, int per_thread)
{
    uintptr_t v = (uintptr_t)s;
    int d = fk_current_device();
    if (v == 0 && !per_thread)
        return &fk_legacy[d];
    if (v == (uintptr_t)CU_STREAM_LEGACY)
        return &fk_legacy[d];
    if (v == 0 || v == (uintptr_t)CU_STREAM_PER_THREAD) {
        if (!fk_tls_pts[d])
            fk_tls_pts[d] = fk_stream_create(0, 0);
        return fk_tls_pts[d];
    }
    return (struct CUstream_st *)s;
}

/* When everything submitted so far to s, and what s implicitly waits on, ends. */
static uint64_t fk_ready_locked(struct CUstream_st *s)
{
    uint64_t t = s->tail;
    if (s->legacy) {
        for (size_t i = 0; i < fk_nstreams; i++)
            if (fk_streams[i]->device == s->device && !(fk_streams[i]->flags & CU_STREAM_NON_BLOCKING) &&
                fk_streams[i]->tail > t)
                t = fk_streams[i]->tail;
    } else if (!(s->flags & CU_STREAM_NON_BLOCKING) && fk_legacy[s->device].tail > t) {
        t = fk_legacy[s->device].tail;
    }
    return t;
}

/* A stream's queue holds fk_cfg.queue_depth pieces of work not yet ended;
 * a submission to a full queue waits, on the host, for the oldest to end
 * (as a launch blocks once the real driver's push buffer is full). */
static void fk_queue_admit(struct CUstream_st *s)
{
    if (!fk_cfg.queue_depth)
        return;
    pthread_mutex_lock(&fk_lock);
    if (!s->queue)
        s->queue = calloc(fk_cfg.queue_depth, sizeof(*s->queue));
    uint64_t oldest = s->queue ? s->queue[s->queue_pos] : 0;
    pthread_mutex_unlock(&fk_lock);
    fk_wait_until(oldest);
}

uint64_t fk_submit(struct CUstream_st *s, uint64_t dur, uint64_t *start)
{
    fk_coll_settle();
    fk_queue_admit(s);
    pthread_mutex_lock(&fk_lock);
    uint64_t now = fakecuda_now_ns() + fk_cfg.launch_latency_ns;
    uint64_t ready = fk_ready_locked(s);
    uint64_t st = ready > now ? ready : now;
    s->tail = st + dur;
    if (s->queue) {
        s->queue[s->queue_pos] = st + dur;
        s->queue_pos = (s->queue_pos + 1) % fk_cfg.queue_depth;
    }
    pthread_mutex_unlock(&fk_lock);
    *start = st;
    return st + dur;
}

uint64_t fk_graph_open(struct CUstream_st *s)
{
    fk_coll_settle();
    fk_queue_admit(s);
    pthread_mutex_lock(&fk_lock);
    uint64_t now = fakecuda_now_ns() + fk_cfg.launch_latency_ns;
    uint64_t ready = fk_ready_locked(s);
    pthread_mutex_unlock(&fk_lock);
    return ready > now ? ready : now;
}

void fk_graph_close(struct CUstream_st *s, uint64_t end)
{
    pthread_mutex_lock(&fk_lock);
    if (end > s->tail)
        s->tail = end;
    if (s->queue) {
        s->queue[s->queue_pos] = end;
        s->queue_pos = (s->queue_pos + 1) % fk_cfg.queue_depth;
    }
    pthread_mutex_unlock(&fk_lock);
}

uint64_t fk_stream_done_time(struct CUstream_st *s)
{
    fk_coll_settle();
    pthread_mutex_lock(&fk_lock);
    uint64_t t = fk_ready_locked(s);
    pthread_mutex_unlock(&fk_lock);
    return t;
}

uint64_t fk_all_done_time(int device)
{
    fk_coll_settle();
    pthread_mutex_lock(&fk_lock);
    uint64_t t = fk_legacy[device].tail;
    for (size_t i = 0; i < fk_nstreams; i++)
        if (fk_streams[i]->device == device && fk_streams[i]->tail > t)
            t = fk_streams[i]->tail;
    pthread_mutex_unlock(&fk_lock);
    return t;
}

/* Sleep most of the way, spin the rest, so waits end on time. */
void fk_wait_until(uint64_t t)
{
    for (;;) {
        uint64_t now = fakecuda_now_ns();
        if (now >= t)
            return;
        uint64_t left = t - now;
        if (left > 200000) {
            struct timespec ts = {(time_t)((left - 100000) / 1000000000ull),
                                  (long)((left - 100000) % 1000000000ull)};
            nanosleep(&ts, NULL);
        }
    }
}

/* ---- events ---- */

uint64_t fk_stream_effect(struct CUstream_st *s)
{
    if (s->legacy)
        return fk_effect_last();
    uint64_t t = atomic_load(&s->last_effect);
    if (!(s->flags & CU_STREAM_NON_BLOCKING)) {
        uint64_t l = atomic_load(&fk_legacy[s->device].last_effect);
        if (l > t)
            t = l;
    }
    return t;
}

void fk_event_record(struct CUevent_st *e, struct CUstream_st *s)
{
    fk_coll_settle();
    e->effect = fk_stream_effect(s);
    pthread_mutex_lock(&fk_lock);
    uint64_t now = fakecuda_now_ns();
    uint64_t t = fk_ready_locked(s);
    e->time = t > now ? t : now;
    e->recorded = 1;
    pthread_mutex_unlock(&fk_lock);
}

void fk_stream_wait_event(struct CUstream_st *s, struct CUevent_st *e)
{
    pthread_mutex_lock(&fk_lock);
    if (e->recorded && e->time > s->tail)
        s->tail = e->time;
    pthread_mutex_unlock(&fk_lock);
}

void fk_wait_host_functions(struct CUstream_st *s)
{
    for (;;) {
        int pending = s ? atomic_load(&s->pending_host) : atomic_load(&fk_pending_host);
        if (!pending)
            return;
        struct timespec ts = {0, 20000};
        nanosleep(&ts, NULL);
    }
}

/* fk_activity.c: correlation ids for API calls, and activity records
 * delivered late, on the driver's own thread, once their work has ended
 * (as a profiler sees them), for the simulated CUPTI. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fk_driver.h"

static fakecuda_activity_cb fk_act_cb;
static void *fk_act_arg;
static fakecuda_api_cb fk_api_cb;
static void *fk_api_arg;
static uint32_t fk_next_corr;
static pthread_mutex_t fk_act_lock = PTHREAD_MUTEX_INITIALIZER;
/* Held from taking a batch to the end of its delivery: a flush must not
 * return while the driver's thread still carries records it took, or a
 * profiler flushing at exit would lose them (CUPTI's forced flush hands
 * over every record of work that has ended). */
static pthread_mutex_t fk_deliver_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t fk_act_cond = PTHREAD_COND_INITIALIZER;
static struct fakecuda_activity *fk_pending;
static size_t fk_npending, fk_cap;
static int fk_thread_started;
static FILE *fk_log;

/* fork(): a child has one thread, the forking one; a lock another thread
 * held at the fork (the driver's delivering thread's) would never be let
 * go, and the child's next call would wait for ever. The child's locks
 * start afresh. (Taking them around the fork instead would order them
 * against the simulated CUPTI's, which the delivering thread calls.) */
static void fk_act_after_fork_child(void)
{
    pthread_mutex_init(&fk_act_lock, NULL);
    pthread_mutex_init(&fk_deliver_lock, NULL);
}

__attribute__((constructor)) static void fk_act_atfork(void)
{
    pthread_atfork(NULL, NULL, fk_act_after_fork_child);
}

FK_API void fakecuda_api_subscribe(fakecuda_api_cb cb, void *arg)
{
    pthread_mutex_lock(&fk_act_lock);
    fk_api_cb = cb;
    fk_api_arg = arg;
    pthread_mutex_unlock(&fk_act_lock);
}

/* A runtime call in progress on this thread (fakecuda_runtime_api): its
 * correlation id, which the driver calls it makes take as their own. */
static __thread uint32_t fk_rt_corr;
static __thread int fk_rt_depth;

static uint32_t fk_new_corr(const char *api)
{
    pthread_mutex_lock(&fk_act_lock);
    uint32_t id = ++fk_next_corr;
    fakecuda_api_cb cb = fk_api_cb;
    void *arg = fk_api_arg;
    pthread_mutex_unlock(&fk_act_lock);
    if (cb)
        cb(id, api, arg);
    return id;
}

/* As CUPTI sees a runtime: each runtime call has its correlation id and
 * API record, taken as the call starts; the driver calls it makes inside
 * have none of their own, and their work carries the runtime call's id. */
FK_API void fakecuda_runtime_api(const char *api, int enter)
{
    if (enter) {
        if (fk_rt_depth++ == 0)
            fk_rt_corr = fk_new_corr(api);
    } else if (fk_rt_depth > 0 && --fk_rt_depth == 0) {
        fk_rt_corr = 0;
    }
}

uint32_t fk_api_enter(const char *api)
{
    if (fk_rt_corr)
        return fk_rt_corr;
    return fk_new_corr(api);
}

static const char *fk_mem_name(int kind)
{
    static const char *const names[] = {"unknown", "pageable", "pinned", "device", "?", "managed"};
    return kind >= 0 && kind <= 5 ? names[kind] : "?";
}

/* FAKECUDA_LOG: kind name stream start end bytes correlation graph-id
 * graph-node-id, then what a copy did (direction, source's and
 * destination's memory) and a kernel's grid and block ("-" elsewhere). */
static void fk_log_line(const struct fakecuda_activity *a)
{
    static const char *const kinds[] = {"?", "kernel", "memcpy", "memset", "sync"};
    char copy[64] = "- - -", shape[64] = "- -";
    if (a->kind == FAKECUDA_ACT_MEMCPY) {
        const char *dir = a->copy_kind == 1 ? "HtoD" : a->copy_kind == 2 ? "DtoH" : a->copy_kind == 8 ? "DtoD"
                        : a->copy_kind == 10 ? "PtoP" : a->copy_kind == 11 ? "HtoH" : "?";
        snprintf(copy, sizeof copy, "%s %s %s", dir, fk_mem_name(a->src_kind), fk_mem_name(a->dst_kind));
    }
    if (a->kind == FAKECUDA_ACT_KERNEL)
        snprintf(shape, sizeof shape, "%u,%u,%u %u,%u,%u", a->grid[0], a->grid[1], a->grid[2], a->block[0],
                 a->block[1], a->block[2]);
    fprintf(fk_log, "%s %s %u %llu %llu %llu %u %u %llu %s %s\n", kinds[a->kind & 7], a->name ? a->name : "-",
            a->stream_id, (unsigned long long)a->start_ns, (unsigned long long)a->end_ns,
            (unsigned long long)a->bytes, a->correlation_id, a->graph_id, (unsigned long long)a->graph_node_id, copy,
            shape);
    fflush(fk_log);
}

static void fk_deliver(struct fakecuda_activity *a, size_t n)
{
    pthread_mutex_lock(&fk_act_lock);
    fakecuda_activity_cb cb = fk_act_cb;
    void *arg = fk_act_arg;
    pthread_mutex_unlock(&fk_act_lock);
    for (size_t i = 0; i < n; i++) {
        if (fk_log)
            fk_log_line(&a[i]);
        if (cb)
            cb(&a[i], arg);
    }
}

/* Takes the records whose work ended by `until` (all of them if ~0). */
static size_t fk_take(uint64_t until, struct fakecuda_activity **out)
{
    size_t n = 0;
    *out = NULL;
    pthread_mutex_lock(&fk_act_lock);
    struct fakecuda_activity *batch = fk_npending ? malloc(fk_npending * sizeof(*batch)) : NULL;
    if (batch) {
        size_t keep = 0;
        for (size_t i = 0; i < fk_npending; i++) {
            if (fk_pending[i].end_ns <= until)
                batch[n++] = fk_pending[i];
            else
                fk_pending[keep++] = fk_pending[i];
        }
        fk_npending = keep;
    }
    pthread_mutex_unlock(&fk_act_lock);
    *out = batch;
    return n;
}

static void *fk_activity_thread(void *arg)
{
    (void)arg;
    useconds_t lag = (useconds_t)fk_cfg.activity_lag_us;
    for (;;) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
        struct fakecuda_activity *batch;
        pthread_mutex_lock(&fk_deliver_lock);
        size_t n = fk_take(fakecuda_now_ns(), &batch);
        if (n && lag)
            usleep(lag);
        fk_deliver(batch, n);
        pthread_mutex_unlock(&fk_deliver_lock);
        free(batch);
    }
    return NULL;
}

/* Hands over the records of work that has ended: as CUPTI's flush does, it
 * cannot hand over the record of a kernel still running. */
FK_API void fakecuda_activity_flush(void)
{
    fk_coll_settle();
    struct fakecuda_activity *batch;
    pthread_mutex_lock(&fk_deliver_lock);
    size_t n = fk_take(fakecuda_now_ns(), &batch);
    fk_deliver(batch, n);
    pthread_mutex_unlock(&fk_deliver_lock);
    free(batch);
}

/* At exit, with no CUPTI subscriber to flush them, the records not yet
 * handed out would be lost to FAKECUDA_LOG: the log gets every one (work
 * still queued runs to its end on the GPU). With a subscriber, its own
 * flush at exit writes them. */
static void fk_log_at_exit(void)
{
    pthread_mutex_lock(&fk_act_lock);
    int subscribed = fk_act_cb != NULL;
    pthread_mutex_unlock(&fk_act_lock);
    if (subscribed)
        return;
    struct fakecuda_activity *batch;
    pthread_mutex_lock(&fk_deliver_lock);
    size_t n = fk_take(~0ull, &batch);
    for (size_t i = 0; i < n && fk_log; i++)
        fk_log_line(&batch[i]);
    pthread_mutex_unlock(&fk_deliver_lock);
    free(batch);
}

FK_API void fakecuda_activity_subscribe(fakecuda_activity_cb cb, void *arg)
{
    pthread_mutex_lock(&fk_act_lock);
    fk_act_cb = cb;
    fk_act_arg = arg;
    pthread_mutex_unlock(&fk_act_lock);
}

void fk_activity_emit(const struct fakecuda_activity *a)
{
    if (a->kind == FAKECUDA_ACT_KERNEL)
        fk_busy_add((int)a->device, a->start_ns, a->end_ns);
    pthread_mutex_lock(&fk_act_lock);
    if (!fk_act_cb && !getenv("FAKECUDA_LOG")) {
        pthread_mutex_unlock(&fk_act_lock);
        return;
    }
    if (!fk_thread_started) {
        fk_thread_started = 1;
        const char *log = getenv("FAKECUDA_LOG");
        if (log && (fk_log = fopen(log, "a")) != NULL)
            atexit(fk_log_at_exit);
        pthread_t t;
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        if (pthread_create(&t, NULL, fk_activity_thread, NULL) == 0)
            pthread_detach(t);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
    }
    if (fk_npending == fk_cap) {
        size_t cap = fk_cap ? fk_cap * 2 : 1024;
        struct fakecuda_activity *p = realloc(fk_pending, cap * sizeof(*p));
        if (!p) {
            pthread_mutex_unlock(&fk_act_lock);
            return;
        }
        fk_pending = p;
        fk_cap = cap;
    }
    fk_pending[fk_npending++] = *a;
    pthread_cond_signal(&fk_act_cond);
    pthread_mutex_unlock(&fk_act_lock);
}

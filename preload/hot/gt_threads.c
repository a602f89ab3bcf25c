/* gt_threads.c: the registry of threads that called CUDA (gt_threads.h).
 * Slots are claimed with a compare-and-swap on the tid and cleared by
 * their thread at exit; the sampler may read a slot as it is cleared and
 * then samples a thread that just ended, which its own checks catch (the
 * thread's /proc entry is gone, or its frames fail validation). */
#include "hot/gt_threads.h"

GT_TLS struct gt_thread_slot *gt_tls_thread;
GT_TLS uintptr_t gt_tls_pystate;

static struct gt_thread_slot gt_thread_slots[GT_THREADS_MAX];
static _Atomic(uint32_t) gt_thread_high; /* slots ever used */
#define GT_TRACER_MAX 16
static _Atomic(uint32_t) gt_tracer_tids[GT_TRACER_MAX];

void gt_threads_register(uint32_t tid)
{
    for (uint32_t i = 0; i < GT_THREADS_MAX; i++) {
        uint32_t expect = 0;
        if (atomic_load_explicit(&gt_thread_slots[i].tid, memory_order_relaxed) == 0 &&
            atomic_compare_exchange_strong(&gt_thread_slots[i].tid, &expect, tid)) {
            atomic_store(&gt_thread_slots[i].pystate, gt_tls_pystate);
            uint32_t high = atomic_load(&gt_thread_high);
            while (high < i + 1 && !atomic_compare_exchange_weak(&gt_thread_high, &high, i + 1))
                ;
            gt_tls_thread = &gt_thread_slots[i];
            return;
        }
    }
}

void gt_threads_exit(void)
{
    struct gt_thread_slot *s = gt_tls_thread;
    gt_tls_thread = NULL;
    if (s) {
        atomic_store(&s->pystate, 0);
        atomic_store(&s->tid, 0);
    }
}

size_t gt_threads_snapshot(uint32_t *tids, uintptr_t *pystates, size_t max)
{
    size_t n = 0;
    uint32_t high = atomic_load(&gt_thread_high);
    for (uint32_t i = 0; i < high && n < max; i++) {
        uint32_t tid = atomic_load(&gt_thread_slots[i].tid);
        if (!tid)
            continue;
        tids[n] = tid;
        pystates[n] = atomic_load(&gt_thread_slots[i].pystate);
        n++;
    }
    return n;
}

static _Atomic(uint32_t) gt_tracer_next;

/* The last GT_TRACER_MAX marked are kept: a standby process starts
 * a writer and a sampler per window, and the newest are the live ones. */
void gt_threads_mark_tracer(uint32_t tid)
{
    for (int i = 0; i < GT_TRACER_MAX; i++)
        if (atomic_load(&gt_tracer_tids[i]) == tid)
            return;
    uint32_t i = atomic_fetch_add(&gt_tracer_next, 1) % GT_TRACER_MAX;
    atomic_store(&gt_tracer_tids[i], tid);
}

int gt_threads_is_tracer(uint32_t tid)
{
    for (int i = 0; i < GT_TRACER_MAX; i++)
        if (atomic_load(&gt_tracer_tids[i]) == tid)
            return 1;
    return 0;
}

void gt_threads_after_fork_child(void)
{
    /* Only the forking thread came across; it registers again with its
     * next ring (the rings start a new generation). */
    for (uint32_t i = 0; i < GT_THREADS_MAX; i++) {
        atomic_store(&gt_thread_slots[i].tid, 0);
        atomic_store(&gt_thread_slots[i].pystate, 0);
    }
    for (int i = 0; i < GT_TRACER_MAX; i++)
        atomic_store(&gt_tracer_tids[i], 0);
    atomic_store(&gt_tracer_next, 0);
    atomic_store(&gt_thread_high, 0);
    gt_tls_thread = NULL;
}

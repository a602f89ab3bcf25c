/* gt_threads.h: the threads that have called CUDA, for the sampler
 * (preload/sampler/): each one's kernel thread id and, where it runs
 * Python, its interpreter thread state. A thread claims a slot with its
 * first ring and gives it back as it exits; the sampler reads the slots
 * without a lock. */
#ifndef GT_THREADS_H
#define GT_THREADS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "base/gt_base.h"

#define GT_THREADS_MAX 1024

struct gt_thread_slot {
    _Atomic(uint32_t) tid;       /* 0: free */
    _Atomic(uintptr_t) pystate;  /* PyThreadState *, 0: none seen */
};

extern GT_TLS struct gt_thread_slot *gt_tls_thread;
extern GT_TLS uintptr_t gt_tls_pystate;

/* The calling thread, at its first ring. */
void gt_threads_register(uint32_t tid);
/* The calling thread is exiting. */
void gt_threads_exit(void);
/* Its Python thread state, as the call-time reader found it (one load
 * and, the first time, two stores). */
static inline void gt_threads_note_pystate(uintptr_t ts)
{
    if (__builtin_expect(gt_tls_pystate != ts, 0)) {
        gt_tls_pystate = ts;
        struct gt_thread_slot *s = gt_tls_thread;
        if (s)
            atomic_store_explicit(&s->pystate, ts, memory_order_relaxed);
    }
}
/* Copies up to max live slots; returns how many. */
size_t gt_threads_snapshot(uint32_t *tids, uintptr_t *pystates, size_t max);
/* The tracer's own threads (writer, sampler, control): left out of
 * GPUTRACE_SAMPLE_THREADS=all. */
void gt_threads_mark_tracer(uint32_t tid);
int gt_threads_is_tracer(uint32_t tid);
void gt_threads_after_fork_child(void);

#endif

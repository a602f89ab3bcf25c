/* gt_core.h: the path every hooked call takes (guard, clock, record) and
 * the session lifecycle behind it. */
#ifndef GT_CORE_H
#define GT_CORE_H

#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>
#include "gt_event.h"

#define GT_EXPORT __attribute__((visibility("default")))
#define GT_TLS __thread __attribute__((tls_model("initial-exec")))

enum gt_state { GT_STATE_IDLE, GT_STATE_ACTIVE, GT_STATE_DISABLED, GT_STATE_FINISHED };

/* Set while this thread is inside the tracer (a hook, or the tracer's own
 * threads): calls made then go straight to CUDA and are not recorded. */
extern GT_TLS int gt_tls_busy;
extern _Atomic int gt_state;

static inline uint64_t gt_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct gt_call {
    struct gt_event ev;
    int saved_errno;
};

/* Set once CUPTI records GPU times (gt_cupti.c). */
extern _Atomic int gt_cupti_enabled;

void gt_session_start(void);
uint64_t gt_next_corr(void);
void gt_cupti_push(uint64_t id);
void gt_cupti_pop(void);

static inline int gt_makes_gpu_work(int category)
{
    return category == GT_CAT_LAUNCH || category == GT_CAT_MEMCPY || category == GT_CAT_MEMSET ||
           category == GT_CAT_SYNC || category == GT_CAT_GRAPH;
}

/* Returns 0 when the call must pass through unrecorded. The first call that
 * is recorded starts the session (file, writer, CUPTI). */
static inline int gt_call_begin(struct gt_call *c, uint32_t api, int category)
{
    if (gt_tls_busy)
        return 0;
    /* Acquire: what the session start set up (ring size, CUPTI's entry
     * points) is visible to a thread that sees it active. Free on x86. */
    int st = atomic_load_explicit(&gt_state, memory_order_acquire);
    if (st >= GT_STATE_DISABLED)
        return 0;
    gt_tls_busy = 1;
    if (__builtin_expect(st == GT_STATE_IDLE, 0) && category != GT_CAT_NONE) {
        gt_session_start();
        if (atomic_load_explicit(&gt_state, memory_order_relaxed) != GT_STATE_ACTIVE) {
            gt_tls_busy = 0;
            return 0;
        }
    }
    c->ev.api = api;
    c->ev.stream = 0;
    c->ev.has_stream = 0;
    c->ev.captured = 0;
    c->ev.stack_id = 0;
    c->ev.pystack_id = 0;
    c->ev.corr = 0;
    if (gt_makes_gpu_work(category) && atomic_load_explicit(&gt_cupti_enabled, memory_order_acquire)) {
        c->ev.corr = gt_next_corr();
        gt_cupti_push(c->ev.corr);
    }
    c->ev.start_ns = gt_now_ns();
    return 1;
}

/* Right after the real call returns: its end time and errno. */
static inline void gt_call_stop(struct gt_call *c)
{
    c->saved_errno = errno;
    c->ev.end_ns = gt_now_ns();
    if (c->ev.corr)
        gt_cupti_pop();
}

/* Records the event (unless its category is NONE) and leaves the guard. */
void gt_call_end(struct gt_call *c, int result, int category);

/* Before _exit: finishes this process's trace through the writer thread,
 * waiting a bounded time. Does nothing in a vfork child (it shares the
 * parent's memory, and the trace is the parent's) or without a session.
 * Returns 0 when it did nothing, 1 when the trace was finished, 2 when the
 * writer did not answer in time. */
int gt_finish_at_exit(void);
/* Before exec: the same. After an exec that failed and returned: the trace
 * is finished, so the rest of the process goes untraced, said once. */
int gt_finish_before_exec(void);
void gt_exec_returned(int finished);

/* Called by the fork handler and tests. */
void gt_core_after_fork_child(void);

/* One line on stderr, prefixed "gputrace: ". */
void gt_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif

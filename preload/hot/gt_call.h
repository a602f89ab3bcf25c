/* gt_call.h: the path every hooked call takes on the program's thread:
 * guard, clock, record. No locks and no allocation once the session runs;
 * the first recorded call starts the session through gt_call_starter. */
#ifndef GT_CALL_H
#define GT_CALL_H

#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>

#include "base/gt_base.h"
#include "base/gt_event.h"
#include "cupti/gt_cupti.h"

struct gt_call {
    struct gt_event ev;
    int saved_errno;
};

/* The call this thread is inside, for the flight recorder's hang and
 * crash windows (session/gt_flight.c), which copy it from another thread
 * with process_vm_readv: seq is odd while `ev` is being run. */
struct gt_inflight {
    volatile uint64_t seq;
    struct gt_event *volatile ev;
};
extern GT_TLS struct gt_inflight gt_tls_inflight;

/* Starts the session (file, writer, CUPTI) on the first recorded call.
 * Defined and initialized statically by the session layer (session/), so
 * it is set before any constructor can make a CUDA call, and this layer
 * calls upward only through it. */
extern void (*const gt_call_starter)(void);

uint64_t gt_next_corr(void);
/* The external id on this thread's CUPTI stack, waiting for the thread's
 * next work-making call (0: none): pushed ahead, when the last such call
 * ended. A runtime linked statically into the program or a library
 * (NVIDIA's cuBLAS and cuDNN, nvcc -cudart static) is seen by CUPTI at its
 * own API's entry, where CUPTI takes the external ids then pushed, before
 * the driver call the tracer hooks inside it: the id must already be there
 * (docs/validation.md). */
extern GT_TLS uint64_t gt_tls_ext_ahead;

/* The id ahead taken off CUPTI's stack: tracing paused (a standby
 * window closed, or CUPTI off between the flight recorder's windows),
 * or CUPTI, still on, would tie the work of every call made since to the
 * one that took it last. */
static inline void gt_drop_ext_ahead(void)
{
    if (__builtin_expect(gt_tls_ext_ahead != 0, 0)) {
        gt_cupti_pop();
        gt_tls_ext_ahead = 0;
    }
}

static inline int gt_makes_gpu_work(int category)
{
    return category == GT_CAT_LAUNCH || category == GT_CAT_MEMCPY || category == GT_CAT_MEMSET ||
           category == GT_CAT_SYNC || category == GT_CAT_GRAPH;
}

/* Returns 1 when the call is recorded; 0 when it must pass through
 * unrecorded; -1 when it must pass through with the guard held, left by
 * gt_call_pass_end: in standby, where a window may open while the call
 * runs, and the calls it makes inside (the runtime's into the driver),
 * which would then be recorded as calls of their own, are parts of a call
 * made before the window. */
static inline int gt_call_begin(struct gt_call *c, uint32_t api, int category)
{
    if (gt_tls_busy)
        return 0;
    /* Acquire: what the session start set up (ring size, CUPTI's entry
     * points) is visible to a thread that sees it active. Free on x86. */
    int st = atomic_load_explicit(&gt_state, memory_order_acquire);
    if (st >= GT_STATE_DISABLED) {
        if (st != GT_STATE_STANDBY)
            return 0;
        gt_drop_ext_ahead();
        gt_tls_busy = 1;
        return -1;
    }
    gt_tls_busy = 1;
    if (__builtin_expect(st == GT_STATE_IDLE, 0) && category != GT_CAT_NONE) {
        gt_call_starter();
        st = atomic_load_explicit(&gt_state, memory_order_relaxed);
        if (!gt_state_records(st)) {
            if (st == GT_STATE_STANDBY)
                return -1; /* the guard held, as above */
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
    int cupti = atomic_load_explicit(&gt_cupti_enabled, memory_order_acquire);
    if (!cupti)
        gt_drop_ext_ahead();
    if (category != GT_CAT_NONE && cupti) {
        /* the thread's first recorded call of any kind puts one ahead: a
         * static runtime's next call (its first copy after its cudaMalloc)
         * finds it at its entry */
        if (!gt_tls_ext_ahead) {
            gt_tls_ext_ahead = gt_next_corr();
            gt_cupti_push(gt_tls_ext_ahead);
        }
        if (gt_makes_gpu_work(category))
            c->ev.corr = gt_tls_ext_ahead;
    }
    c->ev.start_ns = gt_now_ns();
    /* after the start time: a call that started after the program turned
     * a kind on is one its CUPTI records (the sharing layer's bounds) */
    if (c->ev.corr)
        gt_cupti_note_call(c->ev.corr);
    gt_tls_inflight.seq++;
    atomic_signal_fence(memory_order_release);
    gt_tls_inflight.ev = &c->ev;
    return 1;
}

/* Right after the real call returns: its end time and errno. */
static inline void gt_call_stop(struct gt_call *c)
{
    c->saved_errno = errno;
    c->ev.end_ns = gt_now_ns();
    gt_tls_inflight.ev = NULL;
    atomic_signal_fence(memory_order_release);
    gt_tls_inflight.seq++;
    if (c->ev.corr) {
        /* this call's id off, the next one's on */
        gt_cupti_pop();
        gt_tls_ext_ahead = gt_next_corr();
        gt_cupti_push(gt_tls_ext_ahead);
    }
}

/* After a call that passed through with the guard held (-1 above). */
static inline void gt_call_pass_end(void)
{
    gt_tls_busy = 0;
}

/* Records the event (unless its category is NONE) and leaves the guard. */
void gt_call_end(struct gt_call *c, int result, int category);

#endif

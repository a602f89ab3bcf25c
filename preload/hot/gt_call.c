/* gt_call.c: the end of a recorded call (stacks, ring) and the correlation
 * ids that tie a call to the GPU work CUPTI reports for it. */
#include <unistd.h>

#include "hot/gt_call.h"
#include "hot/gt_graph.h"
#include "hot/gt_python.h"
#include "hot/gt_ring.h"
#include "hot/gt_stacks.h"

/* cudaErrorNotReady and CUDA_ERROR_NOT_READY: the same number. */
#define GT_NOT_READY 600

/* A poll that found the work not done: a run of them on one event or
 * stream is one row (its first poll's start and stacks, its last one's
 * end, their count), so a program spinning on cudaEventQuery costs a ring
 * slot per run, not per poll. Returns 1 when the poll was folded or held. */
static int gt_poll_fold(struct gt_event *ev, int result)
{
    if (result != GT_NOT_READY)
        return 0;
    struct gt_event *h = gt_ring_held();
    if (h && h->api == ev->api && h->u.sync.target == ev->u.sync.target && h->u.sync.polls < UINT32_MAX) {
        h->end_ns = ev->end_ns;
        h->u.sync.polls++;
        return 1;
    }
    ev->result = result;
    ev->stack_id = gt_stack_capture();
    ev->pystack_id = gt_python_capture();
    gt_ring_hold(ev);
    return 1;
}

void gt_call_end(struct gt_call *c, int result, int category)
{
    if (category != GT_CAT_NONE) {
        if (gt_state_records(atomic_load_explicit(&gt_state, memory_order_relaxed)) &&
            !(category == GT_CAT_QUERY && gt_poll_fold(&c->ev, result))) {
            c->ev.result = result;
            c->ev.stack_id = gt_stack_capture();
            c->ev.pystack_id = gt_python_capture();
            if (__builtin_expect(c->ev.captured || category == GT_CAT_GRAPH_BUILD, 0))
                gt_graph_emit(&c->ev, category);
            gt_ring_push(&c->ev);
        }
    }
    gt_tls_busy = 0;
    errno = c->saved_errno;
}

static GT_TLS uint32_t gt_tls_tid;
static GT_TLS uint64_t gt_tls_corr_seq;
GT_TLS uint64_t gt_tls_ext_ahead;

/* Unique per process without a shared counter: thread id, then a count. */
uint64_t gt_next_corr(void)
{
    if (!gt_tls_tid)
        gt_tls_tid = (uint32_t)gettid();
    return ((uint64_t)gt_tls_tid << 40) | (++gt_tls_corr_seq & ((1ull << 40) - 1));
}

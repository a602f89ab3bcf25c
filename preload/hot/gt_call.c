/* gt_call.c: the end of a recorded call (stacks, ring) and the correlation
 * ids that tie a call to the GPU work CUPTI reports for it. */
#include <unistd.h>

#include "hot/gt_call.h"
#include "hot/gt_graph.h"
#include "hot/gt_python.h"
#include "hot/gt_ring.h"
#include "hot/gt_stacks.h"

void gt_call_end(struct gt_call *c, int result, int category)
{
    if (category != GT_CAT_NONE) {
        if (atomic_load_explicit(&gt_state, memory_order_relaxed) == GT_STATE_ACTIVE) {
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

/* Unique per process without a shared counter: thread id, then a count. */
uint64_t gt_next_corr(void)
{
    if (!gt_tls_tid)
        gt_tls_tid = (uint32_t)gettid();
    return ((uint64_t)gt_tls_tid << 40) | (++gt_tls_corr_seq & ((1ull << 40) - 1));
}

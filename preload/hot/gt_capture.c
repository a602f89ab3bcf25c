/* gt_capture.c: which streams are capturing into a CUDA Graph, so calls on
 * them are recorded as captured (graph nodes) and not as work that ran.
 * Checked on every stream call: the common case (nothing capturing) is one
 * relaxed load. */
#include <stdatomic.h>
#include <unistd.h>

#include "hot/gt_capture.h"
#include "base/gt_event.h"

#define GT_CAPTURE_MAX 64

struct gt_capture_slot {
    _Atomic(uint64_t) stream; /* 0: free */
    _Atomic(uint32_t) tid;    /* for the per-thread stream, whose handle every thread shares */
};

static struct gt_capture_slot gt_slots[GT_CAPTURE_MAX];
static _Atomic(int) gt_capturing_count;

static uint32_t gt_key_tid(uint64_t stream)
{
    return stream == GT_STREAM_PER_THREAD ? (uint32_t)gettid() : 0;
}

void gt_capture_begin(uint64_t stream)
{
    if (stream == 0 || stream == GT_STREAM_LEGACY)
        return; /* the legacy stream cannot capture */
    uint32_t tid = gt_key_tid(stream);
    for (int i = 0; i < GT_CAPTURE_MAX; i++) {
        uint64_t expect = 0;
        if (atomic_compare_exchange_strong(&gt_slots[i].stream, &expect, stream)) {
            atomic_store(&gt_slots[i].tid, tid);
            atomic_fetch_add(&gt_capturing_count, 1);
            return;
        }
    }
}

void gt_capture_end(uint64_t stream)
{
    uint32_t tid = gt_key_tid(stream);
    for (int i = 0; i < GT_CAPTURE_MAX; i++)
        if (atomic_load(&gt_slots[i].stream) == stream && atomic_load(&gt_slots[i].tid) == tid) {
            atomic_store(&gt_slots[i].tid, 0);
            atomic_store(&gt_slots[i].stream, 0);
            atomic_fetch_sub(&gt_capturing_count, 1);
            return;
        }
}

int gt_capturing(uint64_t stream)
{
    if (atomic_load_explicit(&gt_capturing_count, memory_order_relaxed) == 0 || stream == 0 ||
        stream == GT_STREAM_LEGACY)
        return 0;
    uint32_t tid = gt_key_tid(stream);
    for (int i = 0; i < GT_CAPTURE_MAX; i++)
        if (atomic_load_explicit(&gt_slots[i].stream, memory_order_relaxed) == stream &&
            atomic_load_explicit(&gt_slots[i].tid, memory_order_relaxed) == tid)
            return 1;
    return 0;
}

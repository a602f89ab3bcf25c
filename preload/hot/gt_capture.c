/* gt_capture.c: which streams are capturing into a CUDA Graph, so calls on
 * them are recorded as captured (graph nodes) and not as work that ran.
 * Checked on every stream call: the common case (nothing capturing) is one
 * relaxed load. While a capture runs, the driver is asked: a stream joins
 * a capture without a call of its own (cudaStreamWaitEvent on an event
 * recorded on a capturing stream, the fork of NVIDIA's fork/join pattern),
 * so the table of streams that began one is not the whole answer. */
#include <stdatomic.h>
#include <unistd.h>

#include "base/gt_cuda.h"
#include "hot/gt_capture.h"
#include "hot/gt_symbols_lookup.h"
#include "base/gt_event.h"

typedef CUresult (*gt_is_capturing_fn)(CUstream, CUstreamCaptureStatus *);
static _Atomic(void *) gt_is_capturing_slot; /* (void *)1: the driver has none */

/* The driver's answer, or -1 when it cannot be asked. */
static int gt_driver_capturing(uint64_t stream)
{
    void *p = atomic_load_explicit(&gt_is_capturing_slot, memory_order_acquire);
    if (!p) {
        p = gt_lookup_symbol("cuStreamIsCapturing");
        if (!p)
            p = (void *)1;
        atomic_store_explicit(&gt_is_capturing_slot, p, memory_order_release);
    }
    if (p == (void *)1)
        return -1;
    CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
    if (((gt_is_capturing_fn)p)((CUstream)(uintptr_t)stream, &st) != CUDA_SUCCESS)
        return 0;
    return st == CU_STREAM_CAPTURE_STATUS_ACTIVE;
}

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
    int d = gt_driver_capturing(stream);
    if (d >= 0)
        return d;
    uint32_t tid = gt_key_tid(stream);
    for (int i = 0; i < GT_CAPTURE_MAX; i++)
        if (atomic_load_explicit(&gt_slots[i].stream, memory_order_relaxed) == stream &&
            atomic_load_explicit(&gt_slots[i].tid, memory_order_relaxed) == tid)
            return 1;
    return 0;
}

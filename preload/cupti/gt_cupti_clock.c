/* gt_cupti_clock.c: CUPTI's one clock a process, beside the program's.
 *
 * A program may give CUPTI a clock of its own (the PyTorch profiler gives
 * it the TSC's ticks). The program's wins, so that its records are on its
 * clock exactly as untraced; the tracer takes the lesser role: the GPU
 * times it keeps are mapped onto its own clock by a line through readings
 * of both clocks (the first when the clock was given, the latest before
 * each drain), and it says so once, on stderr and in meta. */
#include <pthread.h>
#include <stdatomic.h>

#include "base/gt_base.h"
#include "cupti/gt_cupti_app.h"
#include "cupti/gt_cupti_int.h"

static pthread_mutex_t gt_clock_lock = PTHREAD_MUTEX_INITIALIZER;
static CUpti_TimestampCallbackFunc gt_clock_cb; /* the program's, once given */
static _Atomic int gt_clock_on;                 /* CUPTI's records are on it */
/* The line: ours = t0 + (theirs - c0) * rate (under gt_clock_lock). */
static uint64_t gt_clock_t0, gt_clock_c0;
static double gt_clock_rate = 1.0;
static int gt_clock_rate_known;

/* The program's clock read between two readings of ours taken close
 * together (a thread descheduled between them would skew the line). */
static uint64_t gt_clock_read(CUpti_TimestampCallbackFunc cb, uint64_t *ours)
{
    uint64_t best = ~0ull, c = 0;
    for (int i = 0; i < 20 && best > 500; i++) {
        uint64_t a = gt_now_ns(), v = cb(), b = gt_now_ns();
        if (b - a < best) {
            best = b - a;
            c = v;
            *ours = a / 2 + b / 2;
        }
    }
    return c;
}

static void gt_clock_take(CUpti_TimestampCallbackFunc cb)
{
    uint64_t t0;
    uint64_t c0 = gt_clock_read(cb, &t0);
    pthread_mutex_lock(&gt_clock_lock);
    gt_clock_cb = cb;
    gt_clock_t0 = t0;
    gt_clock_c0 = c0;
    gt_clock_rate = 1.0;
    gt_clock_rate_known = 0;
    pthread_mutex_unlock(&gt_clock_lock);
    if (!atomic_exchange(&gt_clock_on, 1))
        gt_warn("the program gave CUPTI a clock of its own: CUPTI's records are on it, and the trace's GPU "
                "times are mapped onto the tracer's clock through readings of both");
}

void gt_cupti_clock_sample(void)
{
    if (!atomic_load(&gt_clock_on))
        return;
    pthread_mutex_lock(&gt_clock_lock);
    CUpti_TimestampCallbackFunc cb = gt_clock_cb;
    uint64_t t0 = gt_clock_t0, c0 = gt_clock_c0;
    pthread_mutex_unlock(&gt_clock_lock);
    /* A line needs its two readings apart: 2 ms at least, waited here on
     * the writer's thread rather than the program's. */
    while (gt_now_ns() - t0 < 2000000)
        ;
    uint64_t t;
    uint64_t c = gt_clock_read(cb, &t);
    if (c == c0)
        return;
    pthread_mutex_lock(&gt_clock_lock);
    if (gt_clock_cb == cb) {
        gt_clock_rate = (double)(int64_t)(t - t0) / (double)(int64_t)(c - c0);
        /* a clock counting nanoseconds (the system's, a monotonic one) is
         * taken to count them exactly: durations stay exact */
        if (gt_clock_rate > 0.9999 && gt_clock_rate < 1.0001)
            gt_clock_rate = 1.0;
        gt_clock_rate_known = 1;
    }
    pthread_mutex_unlock(&gt_clock_lock);
}

uint64_t gt_cupti_clock_map(uint64_t c)
{
    if (!atomic_load_explicit(&gt_clock_on, memory_order_relaxed))
        return c;
    pthread_mutex_lock(&gt_clock_lock);
    uint64_t t = (uint64_t)((int64_t)gt_clock_t0 + (int64_t)((double)(int64_t)(c - gt_clock_c0) * gt_clock_rate));
    pthread_mutex_unlock(&gt_clock_lock);
    return t;
}

int gt_cupti_clock_foreign(void)
{
    return atomic_load_explicit(&gt_clock_on, memory_order_relaxed);
}

int gt_cupti_clock_program(void)
{
    pthread_mutex_lock(&gt_clock_lock);
    CUpti_TimestampCallbackFunc cb = gt_clock_cb;
    pthread_mutex_unlock(&gt_clock_lock);
    if (cb)
        gt_clock_take(cb);
    return cb != NULL;
}

CUptiResult gt_cupti_app_timestamp(void *real, CUpti_TimestampCallbackFunc cb)
{
    if (!atomic_load(&gt_cupti_holding)) {
        CUptiResult (*fn)(CUpti_TimestampCallbackFunc) =
            real ? (CUptiResult(*)(CUpti_TimestampCallbackFunc))real : gt_cu.register_timestamp;
        CUptiResult r = fn ? fn(cb) : CUPTI_ERROR_NOT_INITIALIZED;
        if (r == CUPTI_SUCCESS) {
            pthread_mutex_lock(&gt_clock_lock);
            gt_clock_cb = cb; /* taken when the tracer takes CUPTI over */
            pthread_mutex_unlock(&gt_clock_lock);
        }
        return r;
    }
    if (!cb)
        return CUPTI_ERROR_INVALID_PARAMETER;
    CUptiResult r = gt_cu.register_timestamp(cb);
    if (r == CUPTI_SUCCESS)
        gt_clock_take(cb);
    return r;
}

int gt_cupti_app_clock(double *ns_per_tick, int64_t *offset)
{
    pthread_mutex_lock(&gt_clock_lock);
    *ns_per_tick = gt_clock_rate;
    *offset = (int64_t)(gt_clock_t0 - gt_clock_c0);
    int known = gt_clock_rate_known;
    pthread_mutex_unlock(&gt_clock_lock);
    return atomic_load(&gt_clock_on) ? 1 + known : 0;
}

void gt_cupti_clock_after_fork_child(void)
{
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    gt_clock_lock = fresh;
}

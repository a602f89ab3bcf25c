/* gt_ranges.c: sorted, non-overlapping address ranges behind a seqlock.
 *
 * Copies look up their host pointer on the hot path, so readers never block:
 * they retry if an update (an allocation or free, rare) ran meanwhile. */
#include <pthread.h>
#include <stdatomic.h>

#include "hot/gt_ranges.h"

#define GT_RANGES_MAX 16384u

struct gt_range {
    _Atomic(uintptr_t) base;
    _Atomic(uintptr_t) end;
    _Atomic(int) kind;
};

static struct gt_range gt_ranges[GT_RANGES_MAX];
static _Atomic(uint32_t) gt_range_count;
static _Atomic(uint32_t) gt_range_seq;
static pthread_mutex_t gt_ranges_lock = PTHREAD_MUTEX_INITIALIZER;

#define LD(x) atomic_load_explicit(&(x), memory_order_relaxed)
#define ST(x, v) atomic_store_explicit(&(x), (v), memory_order_relaxed)

/* First index whose base is > p. */
static uint32_t gt_upper(uintptr_t p, uint32_t n)
{
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (LD(gt_ranges[mid].base) <= p)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void gt_write_begin(void)
{
    atomic_fetch_add_explicit(&gt_range_seq, 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
}

static void gt_write_end(void)
{
    atomic_fetch_add_explicit(&gt_range_seq, 1, memory_order_release);
}

static void gt_copy_entry(uint32_t to, uint32_t from)
{
    ST(gt_ranges[to].base, LD(gt_ranges[from].base));
    ST(gt_ranges[to].end, LD(gt_ranges[from].end));
    ST(gt_ranges[to].kind, LD(gt_ranges[from].kind));
}

static void gt_remove_at(uint32_t i, uint32_t n)
{
    for (uint32_t j = i; j + 1 < n; j++)
        gt_copy_entry(j, j + 1);
    ST(gt_range_count, n - 1);
}

void gt_ranges_add(uintptr_t base, size_t len, int kind)
{
    if (len == 0)
        len = 1;
    uintptr_t end = base + len < base ? UINTPTR_MAX : base + len;
    pthread_mutex_lock(&gt_ranges_lock);
    gt_write_begin();
    uint32_t n = LD(gt_range_count);
    /* A new allocation at an address means the old one there is gone
     * (freed by a path we did not see): drop overlapping ranges. */
    for (uint32_t i = 0; i < n;) {
        if (LD(gt_ranges[i].base) < end && LD(gt_ranges[i].end) > base) {
            gt_remove_at(i, n);
            n--;
        } else {
            i++;
        }
    }
    if (n < GT_RANGES_MAX) {
        uint32_t at = gt_upper(base, n);
        for (uint32_t j = n; j > at; j--)
            gt_copy_entry(j, j - 1);
        ST(gt_ranges[at].base, base);
        ST(gt_ranges[at].end, end);
        ST(gt_ranges[at].kind, kind);
        ST(gt_range_count, n + 1);
    }
    gt_write_end();
    pthread_mutex_unlock(&gt_ranges_lock);
}

void gt_ranges_remove(uintptr_t base)
{
    pthread_mutex_lock(&gt_ranges_lock);
    uint32_t n = LD(gt_range_count);
    uint32_t i = gt_upper(base, n);
    if (i > 0 && LD(gt_ranges[i - 1].base) == base) {
        gt_write_begin();
        gt_remove_at(i - 1, n);
        gt_write_end();
    }
    pthread_mutex_unlock(&gt_ranges_lock);
}

void gt_ranges_rekind(uintptr_t p, int from, int to)
{
    pthread_mutex_lock(&gt_ranges_lock);
    uint32_t n = LD(gt_range_count);
    uint32_t i = gt_upper(p, n);
    if (i > 0 && p < LD(gt_ranges[i - 1].end) && LD(gt_ranges[i - 1].kind) == from) {
        gt_write_begin();
        ST(gt_ranges[i - 1].kind, to);
        gt_write_end();
    }
    pthread_mutex_unlock(&gt_ranges_lock);
}

int gt_ranges_find(uintptr_t p)
{
    for (;;) {
        uint32_t s1 = atomic_load_explicit(&gt_range_seq, memory_order_acquire);
        if (s1 & 1)
            continue;
        uint32_t n = LD(gt_range_count);
        if (n > GT_RANGES_MAX)
            n = GT_RANGES_MAX;
        uint32_t i = gt_upper(p, n);
        int kind = GT_RANGE_NONE;
        if (i > 0 && p < LD(gt_ranges[i - 1].end))
            kind = LD(gt_ranges[i - 1].kind);
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&gt_range_seq, memory_order_relaxed) == s1)
            return kind;
    }
}

void gt_ranges_fork_lock(void)
{
    pthread_mutex_lock(&gt_ranges_lock);
}

void gt_ranges_fork_unlock(void)
{
    pthread_mutex_unlock(&gt_ranges_lock);
}

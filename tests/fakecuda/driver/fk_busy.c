/* fk_busy.c: how busy each simulated GPU has been lately, for the
 * simulated NVML's utilization (tests/fakecuda/nvml). As NVML defines it:
 * the share of a recent period during which one or more kernels ran.
 *
 * Each device keeps its recent kernel intervals merged, sorted and
 * disjoint; work arrives nearly in time order, so an interval almost always
 * extends or follows the last one. Past FK_BUSY_MAX separate intervals the
 * two oldest are joined (the busy share of the oldest past can then read
 * high; it is dropped as it ages past FK_BUSY_KEEP_NS). */
#include <stdlib.h>
#include <string.h>

#include "fk_driver.h"

#define FK_BUSY_MAX 8192
#define FK_BUSY_KEEP_NS 4000000000ull

struct fk_busy {
    uint64_t lo[FK_BUSY_MAX], hi[FK_BUSY_MAX];
    size_t n;
};

static struct fk_busy *fk_busy[FK_MAX_DEVICES];
static pthread_mutex_t fk_busy_lock = PTHREAD_MUTEX_INITIALIZER;

static void fk_busy_remove(struct fk_busy *b, size_t at, size_t count)
{
    memmove(b->lo + at, b->lo + at + count, (b->n - at - count) * sizeof(b->lo[0]));
    memmove(b->hi + at, b->hi + at + count, (b->n - at - count) * sizeof(b->hi[0]));
    b->n -= count;
}

static void fk_busy_prune(struct fk_busy *b, uint64_t now)
{
    size_t old = 0;
    while (old < b->n && b->hi[old] + FK_BUSY_KEEP_NS < now)
        old++;
    if (old)
        fk_busy_remove(b, 0, old);
    if (b->n == FK_BUSY_MAX) {
        b->hi[0] = b->hi[1];
        fk_busy_remove(b, 1, 1);
    }
}

void fk_busy_add(int device, uint64_t lo, uint64_t hi)
{
    if (device < 0 || device >= FK_MAX_DEVICES || hi <= lo)
        return;
    pthread_mutex_lock(&fk_busy_lock);
    struct fk_busy *b = fk_busy[device];
    if (!b)
        b = fk_busy[device] = calloc(1, sizeof(*b));
    if (!b) {
        pthread_mutex_unlock(&fk_busy_lock);
        return;
    }
    fk_busy_prune(b, fakecuda_now_ns());
    /* the first interval ending at or after lo, and the first starting after hi */
    size_t i = b->n;
    while (i > 0 && b->hi[i - 1] >= lo)
        i--;
    size_t j = i;
    while (j < b->n && b->lo[j] <= hi)
        j++;
    if (j > i) { /* overlaps or touches [i, j): merged into i */
        if (b->lo[i] < lo)
            lo = b->lo[i];
        if (b->hi[j - 1] > hi)
            hi = b->hi[j - 1];
        fk_busy_remove(b, i + 1, j - i - 1);
        b->lo[i] = lo;
        b->hi[i] = hi;
    } else {
        memmove(b->lo + i + 1, b->lo + i, (b->n - i) * sizeof(b->lo[0]));
        memmove(b->hi + i + 1, b->hi + i, (b->n - i) * sizeof(b->hi[0]));
        b->lo[i] = lo;
        b->hi[i] = hi;
        b->n++;
    }
    pthread_mutex_unlock(&fk_busy_lock);
}

FK_API uint64_t fakecuda_busy_ns(int device, uint64_t from, uint64_t to)
{
    uint64_t busy = 0;
    if (device < 0 || device >= FK_MAX_DEVICES || to <= from)
        return 0;
    pthread_mutex_lock(&fk_busy_lock);
    struct fk_busy *b = fk_busy[device];
    for (size_t i = 0; b && i < b->n; i++) {
        uint64_t lo = b->lo[i] > from ? b->lo[i] : from, hi = b->hi[i] < to ? b->hi[i] : to;
        if (hi > lo)
            busy += hi - lo;
    }
    pthread_mutex_unlock(&fk_busy_lock);
    return busy;
}

/* The pinned/device range map: lookups, removal, overlap replacement, and
 * lock-free readers racing an updater. */
#include <pthread.h>
#include <stdatomic.h>
#include "hot/gt_ranges.h"
#include "unit.h"

static atomic_int stop;
static atomic_long bad;

static void *reader(void *arg)
{
    (void)arg;
    while (!atomic_load(&stop)) {
        /* 0x100000 is pinned for the whole run; others come and go */
        if (gt_ranges_find(0x100010) != GT_RANGE_PINNED)
            atomic_fetch_add(&bad, 1);
    }
    return NULL;
}

int main(void)
{
    gt_ranges_add(0x100000, 0x1000, GT_RANGE_PINNED);
    gt_ranges_add(0x300000, 0x1000, GT_RANGE_DEVICE);
    gt_ranges_add(0x200000, 0x1000, GT_RANGE_MANAGED);
    CHECK(gt_ranges_find(0x100000) == GT_RANGE_PINNED);
    CHECK(gt_ranges_find(0x100fff) == GT_RANGE_PINNED);
    CHECK(gt_ranges_find(0x101000) == GT_RANGE_NONE);
    CHECK(gt_ranges_find(0x0fffff) == GT_RANGE_NONE);
    CHECK(gt_ranges_find(0x200800) == GT_RANGE_MANAGED);
    CHECK(gt_ranges_find(0x300000) == GT_RANGE_DEVICE);
    gt_ranges_remove(0x200000);
    CHECK(gt_ranges_find(0x200800) == GT_RANGE_NONE);
    gt_ranges_remove(0x123456); /* unknown: no effect */
    CHECK(gt_ranges_find(0x300010) == GT_RANGE_DEVICE);
    /* an allocation over a range we never saw freed replaces it */
    gt_ranges_add(0x300800, 0x1000, GT_RANGE_PINNED);
    CHECK(gt_ranges_find(0x300010) == GT_RANGE_NONE);
    CHECK(gt_ranges_find(0x300900) == GT_RANGE_PINNED);

    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, reader, NULL);
    for (int k = 0; k < 20000; k++) {
        gt_ranges_add(0x400000 + (uintptr_t)(k % 64) * 0x10000, 0x100, GT_RANGE_DEVICE);
        if (k % 3 == 0)
            gt_ranges_remove(0x400000 + (uintptr_t)((k / 3) % 64) * 0x10000);
    }
    atomic_store(&stop, 1);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    CHECK(atomic_load(&bad) == 0);
    return unit_report("test_ranges");
}

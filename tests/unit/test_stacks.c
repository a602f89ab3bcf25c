/* Stack capture and deduplication, without LD_PRELOAD: the same call site
 * gives the same id from any thread, another site another id. */
#include <pthread.h>
#include <stdint.h>
#include "hot/gt_stacks.h"
#include "unit.h"

__attribute__((noinline)) static uint32_t site_a(void)
{
    uint32_t id = gt_stack_capture();
    __asm__ volatile("" ::: "memory");
    return id;
}

__attribute__((noinline)) static uint32_t site_b(void)
{
    uint32_t id = gt_stack_capture();
    __asm__ volatile("" ::: "memory");
    return id;
}

static uint32_t thread_ids[8];

static void *thread_main(void *arg)
{
    uintptr_t i = (uintptr_t)arg;
    uint32_t first = 0;
    for (int k = 0; k < 2000; k++) {
        uint32_t id = site_a();
        if (!first)
            first = id;
        if (id != first)
            first = UINT32_MAX;
    }
    thread_ids[i] = first;
    return NULL;
}

int main(void)
{
    gt_stacks_init(16);
    gt_stacks_set_self(0, 0); /* the tracer's code is linked into this test */
    uint32_t a[2];
    for (int i = 0; i < 2; i++) /* one call site, twice */
        a[i] = site_a();
    uint32_t a1 = a[0], a2 = a[1], b = site_b();
    CHECK(a1 != 0);
    CHECK(a1 == a2);
    CHECK(b != 0 && b != a1);
    const uintptr_t *ips;
    uint32_t n = gt_stack_frames(a1, &ips);
    CHECK(n >= 2 && n <= 16);
    /* innermost: gt_stack_capture itself (nothing is cut here), then site_a */
    CHECK(ips[0] >= (uintptr_t)gt_stack_capture && ips[0] < (uintptr_t)gt_stack_capture + 1024);
    CHECK(ips[1] >= (uintptr_t)site_a && ips[1] < (uintptr_t)site_a + 256);

    pthread_t t[8];
    for (uintptr_t i = 0; i < 8; i++)
        pthread_create(&t[i], NULL, thread_main, (void *)i);
    for (int i = 0; i < 8; i++)
        pthread_join(t[i], NULL);
    /* threads have different outer frames than main, but all agree */
    for (int i = 1; i < 8; i++)
        CHECK(thread_ids[i] == thread_ids[0]);
    CHECK(thread_ids[0] != 0 && thread_ids[0] != UINT32_MAX);
    CHECK(gt_stacks_count() <= 4 + 8); /* lost races may waste a few ids */
    CHECK(gt_stacks_dropped() == 0);
    return unit_report("test_stacks");
}

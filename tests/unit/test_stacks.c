/* Stack capture and deduplication, without LD_PRELOAD: the same call site
 * gives the same id from any thread, another site another id; the memo of
 * recurring stacks answers repeats and never answers for another stack
 * that reaches gt_stack_capture at the same stack pointer. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <ucontext.h>
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

__attribute__((noinline)) static uint32_t mid(void)
{
    uint32_t id = site_a();
    __asm__ volatile("" ::: "memory");
    return id;
}

/* Two callers of mid() with the same frame, called from the same place:
 * gt_stack_capture sees the same stack pointer under both. */
__attribute__((noinline)) static uint32_t outer1(void)
{
    uint32_t id = mid();
    __asm__ volatile("" ::: "memory");
    return id;
}

__attribute__((noinline)) static uint32_t outer2(void)
{
    uint32_t id = mid();
    __asm__ volatile("" ::: "memory");
    return id;
}

static uint32_t (*volatile outer[2])(void) = {outer1, outer2};

static int in_fn(uintptr_t ip, void *fn)
{
    return ip > (uintptr_t)fn && ip < (uintptr_t)fn + 256;
}

static void memo_checks(void)
{
    uint64_t hits0 = gt_stacks_memo_hits();
    uint32_t first[2] = {0, 0};
    int wrong = 0;
    for (int k = 0; k < 1000; k++) {
        int which = (k * 7 + k / 3) % 2; /* mixed order */
        uint32_t id = outer[which]();
        if (!first[which])
            first[which] = id;
        wrong += id != first[which];
    }
    CHECK(wrong == 0);
    CHECK(first[0] && first[1] && first[0] != first[1]);
    for (int w = 0; w < 2; w++) {
        const uintptr_t *ips;
        uint32_t n = gt_stack_frames(first[w], &ips);
        CHECK(n >= 4);
        CHECK(in_fn(ips[0], site_a) && in_fn(ips[1], mid));
        CHECK(in_fn(ips[2], w ? (void *)outer2 : (void *)outer1));
    }
#if defined(__x86_64__)
    CHECK(gt_stacks_memo_hits() - hits0 >= 900); /* all but the first sightings */
#else
    (void)hits0;
#endif
}

/* Code on a stack of its own (a coroutine's): captured, never memoised,
 * so nothing reads a stack that may be freed and mapped again smaller. */
static ucontext_t co_main, co_ctx;
static uint32_t co_ids[50];

static void co_body(void)
{
    for (int k = 0; k < 50; k++)
        co_ids[k] = mid();
}

static void coroutine_checks(void)
{
    size_t size = 256 * 1024;
    void *stack = malloc(size);
    CHECK(stack != NULL);
    getcontext(&co_ctx);
    co_ctx.uc_stack.ss_sp = stack;
    co_ctx.uc_stack.ss_size = size;
    co_ctx.uc_link = &co_main;
    makecontext(&co_ctx, co_body, 0);
    uint64_t hits0 = gt_stacks_memo_hits();
    swapcontext(&co_main, &co_ctx);
    CHECK(gt_stacks_memo_hits() == hits0);
    int same = 1;
    for (int k = 1; k < 50; k++)
        same &= co_ids[k] == co_ids[0];
    CHECK(co_ids[0] != 0 && same);
    free(stack);
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
    /* innermost: site_a (gt_stack_capture's own frame is never kept) */
    CHECK(in_fn(ips[0], site_a));
    memo_checks();
    coroutine_checks();

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

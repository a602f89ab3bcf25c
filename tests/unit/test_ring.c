/* Per-thread rings without LD_PRELOAD: a ring grows when the writer is
 * behind, its events stay in order across the rings it outgrew, and what
 * does not fit is counted, never lost silently. */
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include "hot/gt_ring.h"
#include "unit.h"

/* The writer is not running here: its wake-up only counts. */
static _Atomic(int) wakes;
static void gt_test_wake(void)
{
    atomic_fetch_add(&wakes, 1);
}

struct seen {
    uint64_t n;
    uint32_t tids[64];
    uint64_t last[64];  /* per thread: the last start_ns seen */
    int out_of_order;
};

/* Events carry their sequence number as start_ns: each thread's must rise. */
static void on_event(const struct gt_event *e, void *arg)
{
    struct seen *s = arg;
    int slot = 0;
    while (slot < 63 && s->tids[slot] && s->tids[slot] != e->tid)
        slot++;
    if (s->tids[slot] == e->tid && e->start_ns <= s->last[slot])
        s->out_of_order++;
    s->tids[slot] = e->tid;
    s->last[slot] = e->start_ns;
    s->n++;
}

static void push_n(uint64_t from, uint64_t n)
{
    struct gt_event e;
    memset(&e, 0, sizeof(e));
    for (uint64_t i = from; i < from + n; i++) {
        e.start_ns = i;
        gt_ring_push(&e);
    }
}

static void *pusher(void *arg)
{
    (void)arg;
    push_n(0, 3000);
    return NULL;
}

static _Atomic(int) pushers_done;

static void *pusher_then_done(void *arg)
{
    pusher(arg);
    atomic_fetch_add(&pushers_done, 1);
    return NULL;
}

int main(void)
{
    /* One thread, nothing drained while it pushes: 256 events stay in the
     * 512 ring it outgrew at half full, 512 in the 1024 one, 1024 in the
     * 2048 one, and the 4096 ring (the maximum) fills; the rest drop. */
    gt_ring_configure(4096, 64u << 20, gt_test_wake);
    push_n(0, 6000);
    struct seen s;
    memset(&s, 0, sizeof(s));
    gt_ring_drain_all(on_event, &s);
    CHECK(s.n == 256 + 512 + 1024 + 4096);
    CHECK(s.out_of_order == 0);
    CHECK(gt_ring_dropped() == 6000 - s.n);
    CHECK(atomic_load(&wakes) > 0);

    /* Drained as it goes: nothing drops, order holds across drains. */
    uint64_t dropped_before = gt_ring_dropped();
    memset(&s, 0, sizeof(s));
    for (int round = 0; round < 20; round++) {
        push_n(1 + (uint64_t)round * 1000, 1000);
        gt_ring_drain_all(on_event, &s);
    }
    CHECK(s.n == 20000);
    CHECK(s.out_of_order == 0);
    CHECK(gt_ring_dropped() == dropped_before);

    /* Eight threads, each 3000 events, drained while they run and after
     * they end: every event arrives once, in its thread's order, and the
     * rings of threads that ended are freed (a drain finds nothing more). */
    pthread_t th[8];
    memset(&s, 0, sizeof(s));
    for (int i = 0; i < 8; i++)
        pthread_create(&th[i], NULL, pusher_then_done, NULL);
    while (atomic_load(&pushers_done) < 8)
        gt_ring_drain_all(on_event, &s);
    for (int i = 0; i < 8; i++)
        pthread_join(th[i], NULL);
    gt_ring_drain_all(on_event, &s);
    CHECK(s.n == 8 * 3000);
    CHECK(s.out_of_order == 0);
    CHECK(gt_ring_dropped() == dropped_before);
    CHECK(gt_ring_pressure() == 0);

    /* A budget with room for this thread's 512 and 1024 rings only:
     * 256 + 1024 events land, the rest are counted. */
    gt_ring_after_fork_child(); /* a fresh start: no rings, no counts */
    size_t ev = sizeof(struct gt_event), hdr = sizeof(struct gt_ring);
    gt_ring_configure(8192, (hdr + 512 * ev) + (hdr + 1024 * ev) + 100, gt_test_wake);
    push_n(0, 3000);
    memset(&s, 0, sizeof(s));
    gt_ring_drain_all(on_event, &s);
    CHECK(s.n == 256 + 1024);
    CHECK(gt_ring_dropped() == 3000 - s.n);

    /* The flight recorder: no writer drains; a full ring at its largest
     * size writes over its oldest events, so the newest are kept, in
     * order, none counted as dropped; lost_end is the latest end written
     * over, and every event that started after it is still there. */
    gt_ring_after_fork_child();
    gt_ring_configure(2048, 64u << 20, gt_test_wake);
    gt_ring_set_overwrite(1);
    {
        struct gt_event e;
        memset(&e, 0, sizeof(e));
        for (uint64_t i = 1; i <= 10000; i++) {
            e.start_ns = e.end_ns = i;
            gt_ring_push(&e);
        }
    }
    uint64_t lost = gt_ring_lost_end();
    CHECK(lost > 0 && lost < 10000 - 2048 + 64);
    CHECK(gt_ring_progress() >= 10000 - 2048);
    gt_ring_set_overwrite(0);
    memset(&s, 0, sizeof(s));
    gt_ring_drain_all(on_event, &s);
    CHECK(s.out_of_order == 0 && s.last[0] == 10000);
    CHECK(s.n == 10000 - lost); /* every event after the last one written over, and only those */
    CHECK(gt_ring_dropped() == 0);
    gt_ring_reset_lost();
    CHECK(gt_ring_lost_end() == 0);

    return unit_report("test_ring");
}

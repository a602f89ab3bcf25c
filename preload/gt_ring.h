/* gt_ring.h: one single-producer ring of events per thread, drained by the
 * writer. A full ring drops the event and counts it: the program never
 * waits for the tracer. */
#ifndef GT_RING_H
#define GT_RING_H

#include <stdatomic.h>
#include <stdint.h>
#include "gt_event.h"

struct gt_ring {
    _Atomic(uint64_t) head;   /* next slot the owner writes */
    char pad0[56];
    _Atomic(uint64_t) tail;   /* next slot the writer reads */
    char pad1[56];
    _Atomic(uint64_t) dropped;
    _Atomic(int) dead;        /* owner thread exited */
    uint32_t mask;
    uint32_t tid;
    uint32_t generation;      /* a fork child starts a new generation */
    size_t map_bytes;
    struct gt_ring *next;
    struct gt_event ev[];
};

/* Sets the ring size for rings created from now on (a power of two). */
void gt_ring_configure(uint32_t events_per_thread, uint64_t max_total_bytes);

/* Records one event from the calling thread; drops and counts if full. */
void gt_ring_push(const struct gt_event *e);

/* Writer side: visits every ring; frees rings of exited threads once empty. */
typedef void (*gt_ring_fn)(const struct gt_event *e, void *arg);
uint64_t gt_ring_drain_all(gt_ring_fn fn, void *arg);

/* Events dropped: full rings plus threads that got no ring. */
uint64_t gt_ring_dropped(void);
/* Fill level of the fullest ring, 0..100, to wake the writer early. */
int gt_ring_pressure(void);

void gt_ring_after_fork_child(void);

#endif

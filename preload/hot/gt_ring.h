/* gt_ring.h: one single-producer ring of events per thread, drained by the
 * writer. A thread's ring starts small and, when the writer falls behind,
 * is replaced by one twice its size, up to the configured maximum; a full
 * ring at the maximum drops the event and counts it: the program never
 * waits for the tracer. */
#ifndef GT_RING_H
#define GT_RING_H

#include <stdatomic.h>
#include <stdint.h>
#include "base/gt_event.h"

struct gt_ring {
    _Atomic(uint64_t) head;   /* next slot the owner writes */
    char pad0[56];
    _Atomic(uint64_t) tail;   /* next slot the writer reads */
    char pad1[56];
    _Atomic(uint64_t) dropped;
    _Atomic(uint64_t) lost_end; /* flight recorder: the latest end of an event written over */
    struct gt_inflight *inflight; /* the owner thread's call in progress (hot/gt_call.h) */
    _Atomic(int) dead;        /* owner thread exited */
    _Atomic(int) retired;     /* owner moved on to a larger ring: no more pushes */
    int released;             /* writer: drained after its successor took over; free it */
    int foreign;              /* a tracer thread's, of other threads' calls (gt_ring_push_as) */
    struct gt_ring *older;    /* the ring this one replaced, drained first (writer clears it) */
    uint32_t mask;
    uint32_t tid;
    uint32_t generation;      /* a fork child starts a new generation */
    size_t map_bytes;
    struct gt_ring *next;
    struct gt_event ev[];
};

/* Sets the largest ring a thread may grow to (a power of two) and the
 * bytes all rings together may take, for rings created from now on, and
 * what to call when the writer should drain soon (a ring filling up, a
 * thread gone): the writer's wake-up, handed down by the session so this
 * layer never calls the writer above it. */
void gt_ring_configure(uint32_t events_per_thread, uint64_t max_total_bytes, void (*wake)(void));

/* A thread's first ring, in events (or the maximum, if smaller). */
#define GT_RING_FIRST_EVENTS 512u

/* Records one event from the calling thread; drops and counts if full
 * (-1; 0 when recorded). */
int gt_ring_push(const struct gt_event *e);

/* Holding an event back while later calls of the same thread may fold
 * into it: the held event (NULL: none), to extend in place; hold one
 * (releasing any held before); push the held one now (the session's end
 * does, on its thread; a thread's next push and its exit do by themselves). */
struct gt_event *gt_ring_held(void);
void gt_ring_hold(const struct gt_event *e);
void gt_ring_release_held(void);

/* Writer side: visits every ring; frees rings of exited threads once empty. */
typedef void (*gt_ring_fn)(const struct gt_event *e, void *arg);
uint64_t gt_ring_drain_all(gt_ring_fn fn, void *arg);

/* Events dropped: full rings plus threads that got no ring. */
uint64_t gt_ring_dropped(void);
/* Fill level of the fullest ring, 0..100, to wake the writer early. */
int gt_ring_pressure(void);

void gt_ring_after_fork_child(void);

/* The flight recorder (session/gt_flight.c), while no writer drains the
 * rings: with overwrite on, a full ring at its largest size writes over
 * its oldest events (a 64th of the ring at a time) instead of dropping the
 * newest, and notes the latest end among them. */
void gt_ring_set_overwrite(int on);
/* The latest end of an event written over since the last reset (0: none):
 * every call that started after it is still in a ring. */
uint64_t gt_ring_lost_end(void);
void gt_ring_reset_lost(void);
/* These walk the list: only while no writer runs (it frees rings). Events
 * pushed so far, over every ring (a count that moves while any thread
 * makes progress); the bytes the rings hold. */
uint64_t gt_ring_progress(void);
uint64_t gt_ring_bytes_held(void);
/* Copies of the calls the rings' threads are inside now (fn gets each,
 * end_ns 0), read with process_vm_readv so a thread that just ended can
 * fault nothing. Returns how many. */
int gt_ring_inflight_each(gt_ring_fn fn, void *arg);
/* From a tracer thread: an event that keeps its own tid (a call in flight
 * on another thread), into the calling thread's ring. */
int gt_ring_push_as(const struct gt_event *e);

#endif

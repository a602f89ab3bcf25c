/* gt_ring.c: per-thread event rings and the list the writer walks.
 *
 * Threads push rings onto a lock-free list; only the writer unlinks them
 * (after their thread has exited and the ring is empty), so removal needs
 * no lock against the pushes, which only ever touch the list head. */
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "base/gt_base.h"
#include "hot/gt_call.h"
#include "hot/gt_ring.h"
#include "hot/gt_threads.h"

static uint32_t gt_ring_events = 8192;
static void (*_Atomic gt_ring_waker)(void);
static uint64_t gt_ring_budget = 48ull << 20;
static _Atomic(uint64_t) gt_ring_bytes;
static _Atomic(uint64_t) gt_ring_orphan_drops;
static _Atomic(struct gt_ring *) gt_ring_list;
static _Atomic(uint32_t) gt_ring_gen;
static _Atomic int gt_ring_overwriting; /* flight recorder: full rings write over their oldest */
static pthread_key_t gt_ring_key;
static pthread_once_t gt_ring_once = PTHREAD_ONCE_INIT;

/* hot/gt_call.h's: here, beside the rings that point at it. */
GT_TLS struct gt_inflight gt_tls_inflight;

static GT_TLS struct gt_ring *gt_tls_ring;
static GT_TLS int gt_tls_ring_exited; /* this thread is exiting: no ring again */
/* An event held back from the ring while more calls may fold into it (a
 * run of not-ready polls, gt_call_end); pushed before the thread's next
 * event, at its exit, or at the session's end. */
static GT_TLS struct gt_event gt_tls_held;
static GT_TLS int gt_tls_has_held;

static int gt_ring_push_one(const struct gt_event *e, int keep_tid);

static void gt_ring_wake(void)
{
    void (*wake)(void) = atomic_load_explicit(&gt_ring_waker, memory_order_relaxed);
    if (wake)
        wake();
}

/* Runs on the exiting thread: later calls from its other TLS destructors
 * must not touch the ring the writer is now free to unmap. */
static void gt_ring_thread_exit(void *p)
{
    struct gt_ring *r = p;
    gt_ring_release_held();
    gt_tls_ring = NULL;
    gt_tls_ring_exited = 1;
    gt_threads_exit();
    if (r) {
        atomic_store_explicit(&r->dead, 1, memory_order_release);
        /* Its memory goes back to the budget once the writer has drained
         * it: sooner than the next poll when threads come and go fast. */
        gt_ring_wake();
    }
}

static void gt_ring_key_init(void)
{
    pthread_key_create(&gt_ring_key, gt_ring_thread_exit);
}

void gt_ring_configure(uint32_t events_per_thread, uint64_t max_total_bytes, void (*wake)(void))
{
    atomic_store_explicit(&gt_ring_waker, wake, memory_order_relaxed);
    gt_ring_events = events_per_thread;
    gt_ring_budget = max_total_bytes;
}

static struct gt_ring *gt_ring_map(uint32_t events)
{
    size_t bytes = sizeof(struct gt_ring) + (size_t)events * sizeof(struct gt_event);
    uint64_t total = atomic_fetch_add(&gt_ring_bytes, bytes) + bytes;
    if (total > gt_ring_budget) {
        atomic_fetch_sub(&gt_ring_bytes, bytes);
        return NULL;
    }
    /* Faulted in now, once, rather than a page at a time on the hot path;
     * but a flight recorder's largest rings (up to 128 MiB) as they fill,
     * not all at once on the program's thread. */
    int populate = atomic_load_explicit(&gt_ring_overwriting, memory_order_relaxed) && bytes > (16u << 20)
                       ? 0 : MAP_POPULATE;
    struct gt_ring *r = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | populate, -1, 0);
    if (r == MAP_FAILED) {
        atomic_fetch_sub(&gt_ring_bytes, bytes);
        return NULL;
    }
    r->mask = events - 1;
    r->tid = (uint32_t)syscall(SYS_gettid);
    r->generation = atomic_load(&gt_ring_gen);
    r->map_bytes = bytes;
    r->inflight = &gt_tls_inflight; /* mapped on its owner thread, at its first push or growth */
    return r;
}

static void gt_ring_publish(struct gt_ring *r)
{
    pthread_once(&gt_ring_once, gt_ring_key_init);
    pthread_setspecific(gt_ring_key, r);
    struct gt_ring *head = atomic_load(&gt_ring_list);
    do {
        r->next = head;
    } while (!atomic_compare_exchange_weak(&gt_ring_list, &head, r));
}

/* Small first: most threads that touch CUDA make few calls, and a program
 * that starts and ends many threads must not spend the budget on rings
 * that stay nearly empty. */
static struct gt_ring *gt_ring_create(void)
{
    struct gt_ring *r = gt_ring_map(gt_ring_events < GT_RING_FIRST_EVENTS ? gt_ring_events : GT_RING_FIRST_EVENTS);
    if (r) {
        gt_ring_publish(r);
        gt_threads_register(r->tid);
    }
    return r;
}

/* The writer is behind on this thread: move on to a ring twice the size.
 * The old one keeps what it holds; the writer drains it before the new
 * one, so the thread's events stay in order. Refused by the budget, the
 * thread keeps its ring. */
static struct gt_ring *gt_ring_grow(struct gt_ring *r)
{
    struct gt_ring *n = gt_ring_map((r->mask + 1) * 2);
    if (!n)
        return r;
    n->older = r;
    atomic_store_explicit(&r->retired, 1, memory_order_release);
    gt_ring_publish(n);
    return n;
}

struct gt_event *gt_ring_held(void)
{
    return gt_tls_has_held ? &gt_tls_held : NULL;
}

void gt_ring_hold(const struct gt_event *e)
{
    gt_ring_release_held();
    gt_tls_held = *e;
    gt_tls_has_held = 1;
    /* The ring's thread-exit hook releases it: a thread's first event may be held. */
    if (!gt_tls_ring && !gt_tls_ring_exited)
        gt_tls_ring = gt_ring_create();
}

void gt_ring_release_held(void)
{
    if (gt_tls_has_held) {
        gt_tls_has_held = 0;
        gt_ring_push_one(&gt_tls_held, 0);
    }
}

int gt_ring_push(const struct gt_event *e)
{
    if (__builtin_expect(gt_tls_has_held, 0))
        gt_ring_release_held();
    return gt_ring_push_one(e, 0);
}

/* Flight recorder, on the owner thread of a full ring at its largest
 * size, with no writer draining it: the oldest 64th goes. The first time,
 * the smaller rings it replaced hold only older events still: emptied and
 * their pages given back. CAS: a writer just started may be draining. */
static __attribute__((noinline)) int gt_ring_overwrite(struct gt_ring *r, uint64_t tail)
{
    uint64_t n = ((uint64_t)r->mask + 1) / 64;
    if (!n)
        n = 1;
    uint64_t end = 0;
    for (uint64_t i = tail; i < tail + n; i++)
        if (r->ev[i & r->mask].end_ns > end)
            end = r->ev[i & r->mask].end_ns;
    if (!atomic_compare_exchange_strong(&r->tail, &tail, tail + n))
        return 0;
    if (end > atomic_load_explicit(&r->lost_end, memory_order_relaxed))
        atomic_store_explicit(&r->lost_end, end, memory_order_relaxed);
    for (struct gt_ring *o = r->older; o; o = o->older) {
        uint64_t h = atomic_load(&o->head), t = atomic_load(&o->tail);
        if (h != t && atomic_compare_exchange_strong(&o->tail, &t, h))
            madvise(o->ev, (size_t)(o->mask + 1) * sizeof(struct gt_event), MADV_DONTNEED);
    }
    return 1;
}

static int gt_ring_push_one(const struct gt_event *e, int keep_tid)
{
    struct gt_ring *r = gt_tls_ring;
    if (__builtin_expect(!r || r->generation != atomic_load_explicit(&gt_ring_gen, memory_order_relaxed), 0)) {
        /* Refused while the ring budget was spent: each later event tries
         * again (a failed try costs two atomic adds), as the writer frees
         * the rings of threads that ended. */
        if (gt_tls_ring_exited) {
            atomic_fetch_add_explicit(&gt_ring_orphan_drops, 1, memory_order_relaxed);
            return -1;
        }
        r = gt_tls_ring = gt_ring_create();
        if (!r) {
            gt_ring_wake();
            atomic_fetch_add_explicit(&gt_ring_orphan_drops, 1, memory_order_relaxed);
            return -1;
        }
    }
    uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
    uint64_t tail = atomic_load_explicit(&r->tail, memory_order_acquire);
    if (head - tail > r->mask) {
        if (!atomic_load_explicit(&gt_ring_overwriting, memory_order_relaxed) || r->mask + 1 < gt_ring_events ||
            !gt_ring_overwrite(r, tail)) {
            atomic_fetch_add_explicit(&r->dropped, 1, memory_order_relaxed);
            return -1;
        }
    }
    struct gt_event *slot = &r->ev[head & r->mask];
    *slot = *e;
    slot->tid = keep_tid ? e->tid : r->tid;
    atomic_store_explicit(&r->head, head + 1, memory_order_release);
    /* Half full: wake the writer now rather than at its next poll. Once per
     * half ring, so the hot path almost never pays for it. */
    if (head + 1 - tail == ((uint64_t)r->mask + 1) / 2) {
        if (r->mask + 1 < gt_ring_events)
            gt_tls_ring = gt_ring_grow(r);
        gt_ring_wake();
    }
    return 0;
}

static uint64_t gt_ring_drain(struct gt_ring *r, gt_ring_fn fn, void *arg)
{
    uint64_t head = atomic_load_explicit(&r->head, memory_order_acquire);
    uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
    for (uint64_t i = tail; i < head; i++) {
        fn(&r->ev[i & r->mask], arg);
        /* Space goes back as it is drained, not at the end: writing a full
         * ring's events takes long enough for a fast thread to fill the
         * rest of it meanwhile. */
        if (((i + 1) & 1023) == 0)
            atomic_store_explicit(&r->tail, i + 1, memory_order_release);
    }
    atomic_store_explicit(&r->tail, head, memory_order_release);
    return head - tail;
}

static uint64_t gt_ring_freed_drops; /* dropped counts of rings already freed; writer-owned */

/* Drains the rings a thread has outgrown, oldest first, then hands each to
 * the list walk to free: the new ring is always nearer the list head than
 * the rings it replaced, so this runs before the walk reaches them. */
static uint64_t gt_ring_drain_older(struct gt_ring *r, gt_ring_fn fn, void *arg)
{
    struct gt_ring *o = r->older;
    if (!o)
        return 0;
    uint64_t n = gt_ring_drain_older(o, fn, arg) + gt_ring_drain(o, fn, arg);
    o->released = 1;
    r->older = NULL;
    return n;
}

uint64_t gt_ring_drain_all(gt_ring_fn fn, void *arg)
{
    uint64_t n = 0;
    struct gt_ring *prev = NULL;
    struct gt_ring *r = atomic_load_explicit(&gt_ring_list, memory_order_acquire);
    while (r) {
        struct gt_ring *next = r->next;
        int dead;
        if (atomic_load_explicit(&r->retired, memory_order_acquire)) {
            /* Drained through its successor, which may not be published
             * yet: until then it is left alone. */
            dead = r->released;
        } else {
            dead = atomic_load_explicit(&r->dead, memory_order_acquire);
            n += gt_ring_drain_older(r, fn, arg);
            n += gt_ring_drain(r, fn, arg);
        }
        int unlinked = 0;
        if (dead) {
            if (!prev) {
                struct gt_ring *expect = r;
                unlinked = atomic_compare_exchange_strong(&gt_ring_list, &expect, next);
                if (!unlinked) {
                    /* New rings were pushed in front: find our predecessor. */
                    for (prev = atomic_load(&gt_ring_list); prev && prev->next != r; prev = prev->next)
                        ;
                }
            }
            if (!unlinked && prev) {
                prev->next = next;
                unlinked = 1;
            }
            if (unlinked) {
                gt_ring_freed_drops += atomic_load(&r->dropped);
                atomic_fetch_sub(&gt_ring_bytes, r->map_bytes);
                munmap(r, r->map_bytes);
            }
        }
        if (!unlinked)
            prev = r;
        r = next;
    }
    return n;
}

/* Writer only, like gt_ring_pressure: rings are freed by the writer. */
uint64_t gt_ring_dropped(void)
{
    uint64_t n = atomic_load(&gt_ring_orphan_drops) + gt_ring_freed_drops;
    for (struct gt_ring *r = atomic_load(&gt_ring_list); r; r = r->next)
        n += atomic_load_explicit(&r->dropped, memory_order_relaxed);
    return n;
}

int gt_ring_pressure(void)
{
    int worst = 0;
    for (struct gt_ring *r = atomic_load(&gt_ring_list); r; r = r->next) {
        uint64_t used = atomic_load_explicit(&r->head, memory_order_relaxed) -
                        atomic_load_explicit(&r->tail, memory_order_relaxed);
        int pct = (int)(used * 100 / ((uint64_t)r->mask + 1));
        if (pct > worst)
            worst = pct;
    }
    return worst;
}

void gt_ring_after_fork_child(void)
{
    /* The parent's rings hold the parent's events: the child starts empty
     * (their memory is left as it is; it is copy-on-write and small). */
    atomic_store(&gt_ring_list, NULL);
    atomic_store(&gt_ring_bytes, 0);
    atomic_store(&gt_ring_orphan_drops, 0);
    gt_ring_freed_drops = 0;
    atomic_fetch_add(&gt_ring_gen, 1);
    gt_tls_has_held = 0; /* the parent's run of polls: the parent writes it */
    gt_threads_after_fork_child();
}

void gt_ring_set_overwrite(int on)
{
    atomic_store(&gt_ring_overwriting, on);
}

static uint64_t gt_ring_max_lost(struct gt_ring *r, int reset)
{
    uint64_t m = 0;
    for (; r; r = r->next) {
        uint64_t v = reset ? atomic_exchange(&r->lost_end, 0) : atomic_load(&r->lost_end);
        if (v > m)
            m = v;
    }
    return m;
}

uint64_t gt_ring_lost_end(void)
{
    return gt_ring_max_lost(atomic_load(&gt_ring_list), 0);
}

void gt_ring_reset_lost(void)
{
    gt_ring_max_lost(atomic_load(&gt_ring_list), 1);
}

uint64_t gt_ring_progress(void)
{
    uint64_t n = 0;
    for (struct gt_ring *r = atomic_load(&gt_ring_list); r; r = r->next)
        if (!r->foreign)
            n += atomic_load_explicit(&r->head, memory_order_relaxed);
    return n;
}

uint64_t gt_ring_bytes_held(void)
{
    return atomic_load(&gt_ring_bytes);
}

/* Copies `len` bytes of this process's memory that may be gone (the stack
 * of a thread that ended): 0, or -1 where it is. */
static int gt_ring_peek(void *dst, const void *src, size_t len)
{
    struct iovec l = {dst, len}, r = {(void *)src, len};
    return process_vm_readv(getpid(), &l, 1, &r, 1, 0) == (ssize_t)len ? 0 : -1;
}

int gt_ring_inflight_each(gt_ring_fn fn, void *arg)
{
    int n = 0;
    for (struct gt_ring *r = atomic_load(&gt_ring_list); r; r = r->next) {
        if (atomic_load(&r->dead) || atomic_load(&r->retired) || !r->inflight)
            continue;
        struct gt_inflight a, b;
        struct gt_event ev;
        if (gt_ring_peek(&a, r->inflight, sizeof(a)) < 0 || !(a.seq & 1) || !a.ev ||
            gt_ring_peek(&ev, a.ev, sizeof(ev)) < 0 || gt_ring_peek(&b, r->inflight, sizeof(b)) < 0 ||
            b.seq != a.seq)
            continue;
        ev.tid = r->tid;
        ev.end_ns = 0;
        fn(&ev, arg);
        n++;
    }
    return n;
}

int gt_ring_push_as(const struct gt_event *e)
{
    int rc = gt_ring_push_one(e, 1);
    if (gt_tls_ring)
        gt_tls_ring->foreign = 1; /* not the program's progress (gt_ring_progress) */
    return rc;
}

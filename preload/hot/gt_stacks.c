/* gt_stacks.c: unwinding with libunwind's cached fast path and a lock-free
 * table that turns each distinct stack into an id; a per-thread memo of
 * recurring stacks skips both when the stack is provably the one seen
 * before.
 */
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "base/gt_base.h"
#include "base/gt_idtab.h"
#include "hot/gt_stacks.h"

#define GT_STACK_SLOTS  (1u << 17)           /* hash slots, power of two */
#define GT_STACK_ARENA  (2u << 20)           /* frames, all stacks together */

_Static_assert(sizeof(uintptr_t) == sizeof(uint64_t), "frames are stored as 64-bit words");

static struct gt_idtab gt_native;
static int gt_depth;
static uintptr_t gt_self_lo, gt_self_hi;

static int gt_self_range_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    if (info->dlpi_addr != (uintptr_t)arg)
        return 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
            continue;
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
        if (!gt_self_lo || lo < gt_self_lo)
            gt_self_lo = lo;
        if (hi > gt_self_hi)
            gt_self_hi = hi;
    }
    return 1;
}

void gt_stacks_init(int depth)
{
    gt_depth = depth > GT_STACK_MAX_DEPTH ? GT_STACK_MAX_DEPTH : depth;
    if (gt_depth <= 0 || gt_native.slots)
        return;
    if (gt_idtab_init(&gt_native, GT_STACK_SLOTS, GT_STACK_ARENA) < 0) {
        gt_depth = 0;
        return;
    }
    Dl_info di;
    if (dladdr((void *)gt_stacks_init, &di))
        dl_iterate_phdr(gt_self_range_cb, di.dli_fbase);
    unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
}

#ifdef GT_UNW_STEP
/* TSan builds: unw_backtrace's per-thread trace cache has a thread-exit
 * destructor that runs after TSan has torn the thread down, and crashes
 * there; stepping frame by frame keeps no such cache. */
static int gt_unwind(void **out, int max)
{
    unw_context_t ctx;
    unw_cursor_t cur;
    int n = 0;
    if (unw_getcontext(&ctx) != 0 || unw_init_local(&cur, &ctx) != 0)
        return 0;
    while (n < max && unw_step(&cur) > 0) {
        unw_word_t ip;
        if (unw_get_reg(&cur, UNW_REG_IP, &ip) != 0 || !ip)
            break;
        out[n++] = (void *)ip;
    }
    return n;
}
#else
static inline int gt_unwind(void **out, int max)
{
    return unw_backtrace(out, max);
}
#endif

/* ---- the memo of recurring stacks ----
 *
 * A training loop launches from the same few stacks millions of times, and
 * unwinding them (about 12 ns a frame) is most of what a call costs the
 * program. When the stack pointer in gt_stack_capture is the one of an
 * earlier capture, and every kept frame's return address still sits in the
 * stack slot it was read from then, the chain of callers is the same and
 * so is the stack's id: reading those slots costs a few nanoseconds.
 *
 * A stack is memoised the second time the unwinder returns it at the same
 * stack pointer (stacks seen once never pay for the memo), by a walk that
 * also reports where each return address is stored, each checked against
 * the stack's value. The memo is used only while the stack pointer is in
 * the thread's own stack, and only slots between it and the stack's top,
 * in increasing order, are memoised: that part of the thread's stack is
 * mapped while the thread lives, so reading the slots cannot fault (a
 * chain that leaves the stack, as from a signal's alternate stack, and
 * code running on stacks of its own, as coroutines do, are not
 * memoised). x86-64 only: there a return address is stored just below
 * the caller's stack pointer. */
#if defined(__x86_64__)
#define GT_MEMO 1
#define GT_MEMO_WAYS 8
#define GT_MEMO_DEPTH 64

struct gt_memo_way {
    uintptr_t sp;       /* the key; 0: empty */
    uint32_t id;        /* the memoised stack; 0: only seen */
    uint32_t seen_id;   /* the unwinder's last id at this sp */
    uint32_t n;
    uintptr_t slot[GT_MEMO_DEPTH];
    uintptr_t ip[GT_MEMO_DEPTH];
};

struct gt_memo {
    uintptr_t lo, hi;   /* the thread's stack */
    struct gt_memo_way way[GT_MEMO_WAYS];
    unsigned next;      /* the way replaced next */
    uint64_t hits;
};

static GT_TLS struct gt_memo *gt_memo_tls;
static GT_TLS int gt_memo_failed;   /* the map failed: no memo on this thread */
static pthread_key_t gt_memo_key;
static pthread_once_t gt_memo_once = PTHREAD_ONCE_INIT;

static void gt_memo_thread_exit(void *m)
{
    gt_memo_tls = NULL;
    munmap(m, sizeof(struct gt_memo));
}

static void gt_memo_key_init(void)
{
    if (pthread_key_create(&gt_memo_key, gt_memo_thread_exit) != 0)
        gt_memo_key = (pthread_key_t)-1;
}

static struct gt_memo *gt_memo_get(void)
{
    struct gt_memo *m = gt_memo_tls;
    if (m || gt_memo_failed)
        return m;
    pthread_once(&gt_memo_once, gt_memo_key_init);
    m = mmap(NULL, sizeof(*m), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    pthread_attr_t a;
    void *addr = NULL;
    size_t size = 0;
    int bounded = 0;
    if (m != MAP_FAILED && pthread_getattr_np(pthread_self(), &a) == 0) {
        bounded = pthread_attr_getstack(&a, &addr, &size) == 0 && size;
        pthread_attr_destroy(&a);
    }
    if (m == MAP_FAILED || !bounded || gt_memo_key == (pthread_key_t)-1 || pthread_setspecific(gt_memo_key, m) != 0) {
        if (m != MAP_FAILED)
            munmap(m, sizeof(*m));
        gt_memo_failed = 1;
        return NULL;
    }
    m->lo = (uintptr_t)addr;
    m->hi = (uintptr_t)addr + size;
    gt_memo_tls = m;
    return m;
}

static inline __attribute__((always_inline)) uintptr_t gt_memo_sp(void)
{
    uintptr_t sp;
    __asm__ volatile("mov %%rsp, %0" : "=r"(sp));
    return sp;
}

/* Reads slots of live frames above the stack pointer: ASan keeps no
 * redzone there, but a stale slot may now lie in a frame's locals. */
__attribute__((no_sanitize("address", "thread"))) static int gt_memo_holds(const struct gt_memo_way *w)
{
    for (uint32_t k = 0; k < w->n; k++)
        if (*(const volatile uintptr_t *)w->slot[k] != w->ip[k])
            return 0;
    return 1;
}

static uint32_t gt_memo_lookup(struct gt_memo *m, uintptr_t sp)
{
    for (int i = 0; i < GT_MEMO_WAYS; i++) {
        const struct gt_memo_way *w = &m->way[i];
        if (w->sp == sp && w->id && gt_memo_holds(w)) {
            m->hits++;
            return w->id;
        }
    }
    return 0;
}

/* Where each of ips[0..n) is stored, from a walk that reports each
 * frame's stack pointer; 0 when any is not where the rule says. */
__attribute__((noinline)) static int gt_memo_build(struct gt_memo_way *w, uintptr_t sp, uintptr_t hi,
                                                   const uintptr_t *ips, uint32_t n)
{
    unw_context_t ctx;
    unw_cursor_t cur;
    if (n > GT_MEMO_DEPTH || unw_getcontext(&ctx) != 0 || unw_init_local(&cur, &ctx) != 0)
        return 0;
    uint32_t k = 0;
    uintptr_t last = sp;
    /* the frames above ips[0] are this file's and the tracer's own */
    for (int steps = 0; k < n && steps < GT_MEMO_DEPTH + 32 && unw_step(&cur) > 0; steps++) {
        unw_word_t ip, csp;
        if (unw_get_reg(&cur, UNW_REG_IP, &ip) != 0 || unw_get_reg(&cur, UNW_REG_SP, &csp) != 0)
            return 0;
        if (k == 0 && (uintptr_t)ip != ips[0])
            continue;
        uintptr_t slot = (uintptr_t)csp - sizeof(uintptr_t);
        if ((uintptr_t)ip != ips[k] || slot <= last || slot + sizeof(uintptr_t) > hi ||
            *(const uintptr_t *)slot != (uintptr_t)ip)
            return 0;
        w->slot[k] = slot;
        w->ip[k] = (uintptr_t)ip;
        last = slot;
        k++;
    }
    return k == n;
}

static void gt_memo_learn(struct gt_memo *m, uintptr_t sp, uint32_t id, const uintptr_t *ips, uint32_t n)
{
    for (int i = 0; i < GT_MEMO_WAYS; i++) {
        struct gt_memo_way *w = &m->way[i];
        if (w->sp != sp || w->id || w->seen_id != id)
            continue;
        /* the second sighting */
        w->n = n;
        if (gt_memo_build(w, sp, m->hi, ips, n))
            w->id = id;
        else
            w->seen_id = 0; /* not memoisable here: don't walk it again soon */
        return;
    }
    struct gt_memo_way *w = &m->way[m->next++ % GT_MEMO_WAYS];
    w->sp = sp;
    w->id = 0;
    w->seen_id = id;
}

uint64_t gt_stacks_memo_hits(void)
{
    return gt_memo_tls ? gt_memo_tls->hits : 0;
}
#else
uint64_t gt_stacks_memo_hits(void)
{
    return 0;
}
#endif

uint32_t gt_stack_capture(void)
{
    if (gt_depth <= 0)
        return 0;
#ifdef GT_MEMO
    uintptr_t sp = gt_memo_sp();
    struct gt_memo *m = gt_depth <= GT_MEMO_DEPTH ? gt_memo_get() : NULL;
    if (m && (sp < m->lo || sp >= m->hi))
        m = NULL; /* not on the thread's own stack */
    if (m) {
        uint32_t id = gt_memo_lookup(m, sp);
        if (id)
            return id;
    }
#endif
    void *raw[GT_STACK_MAX_DEPTH + 16];
    int n = gt_unwind(raw, gt_depth + 16);
    /* raw[0] is this function's own frame, never part of a stack */
    int skip = n > 0 ? 1 : 0;
    while (skip < n && (uintptr_t)raw[skip] >= gt_self_lo && (uintptr_t)raw[skip] < gt_self_hi)
        skip++;
    int keep = n - skip;
    if (keep > gt_depth)
        keep = gt_depth;
    if (keep <= 0)
        return 0;
    uint32_t id = gt_idtab_intern(&gt_native, (const uint64_t *)(raw + skip), (uint32_t)keep);
#ifdef GT_MEMO
    if (m && id)
        gt_memo_learn(m, sp, id, (const uintptr_t *)(raw + skip), (uint32_t)keep);
#endif
    return id;
}

uint32_t gt_stack_intern(const uintptr_t *ips, uint32_t n)
{
    if (gt_depth <= 0 || !n)
        return 0;
    return gt_idtab_intern(&gt_native, (const uint64_t *)ips, n > (uint32_t)gt_depth ? (uint32_t)gt_depth : n);
}

uint32_t gt_stack_frames(uint32_t id, const uintptr_t **ips)
{
    return gt_idtab_get(&gt_native, id, (const uint64_t **)ips);
}

uint64_t gt_stacks_dropped(void)
{
    return atomic_load(&gt_native.drops);
}

uint32_t gt_stacks_count(void)
{
    return gt_idtab_count(&gt_native);
}

void gt_stacks_set_self(uintptr_t lo, uintptr_t hi)
{
    gt_self_lo = lo;
    gt_self_hi = hi;
}

int gt_stacks_is_self(uintptr_t ip)
{
    return ip >= gt_self_lo && ip < gt_self_hi;
}

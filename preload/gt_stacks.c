/* gt_stacks.c: unwinding with libunwind's cached fast path and a lock-free
 * table that turns each distinct stack into an id.
 *
 * Records are written in full before their slot is published with a
 * release CAS, so any thread (and the writer) that sees an id sees its
 * frames. Losing a CAS race wastes one record id; nothing else. */
#include <dlfcn.h>
#include <link.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "gt_stacks.h"

#define GT_STACK_SLOTS  (1u << 17)           /* hash slots, power of two */
#define GT_STACK_MAX    (GT_STACK_SLOTS / 2) /* records */
#define GT_STACK_ARENA  (2u << 20)           /* frames, all stacks together */

struct gt_stack_rec {
    uint64_t hash;
    uint32_t nframes;
    uint32_t offset; /* into the arena */
};

static _Atomic(uint32_t) *gt_slots;
static struct gt_stack_rec *gt_recs;
static uintptr_t *gt_arena;
static _Atomic(uint32_t) gt_next_id;
static _Atomic(uint32_t) gt_arena_used;
static _Atomic(uint64_t) gt_stack_drops;
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

static void *gt_map(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

void gt_stacks_init(int depth)
{
    gt_depth = depth > GT_STACK_MAX_DEPTH ? GT_STACK_MAX_DEPTH : depth;
    if (gt_depth <= 0 || gt_slots)
        return;
    gt_slots = gt_map(sizeof(*gt_slots) * GT_STACK_SLOTS);
    gt_recs = gt_map(sizeof(*gt_recs) * (GT_STACK_MAX + 1));
    gt_arena = gt_map(sizeof(*gt_arena) * GT_STACK_ARENA);
    if (!gt_slots || !gt_recs || !gt_arena) {
        gt_depth = 0;
        return;
    }
    Dl_info di;
    if (dladdr((void *)gt_stacks_init, &di))
        dl_iterate_phdr(gt_self_range_cb, di.dli_fbase);
    unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
}

static uint64_t gt_hash_frames(const uintptr_t *ips, uint32_t n)
{
    uint64_t h = 0xcbf29ce484222325ull ^ n;
    for (uint32_t i = 0; i < n; i++) {
        h ^= ips[i];
        h *= 0x100000001b3ull;
        h ^= h >> 29;
    }
    return h ? h : 1;
}

static int gt_same(const struct gt_stack_rec *r, uint64_t h, const uintptr_t *ips, uint32_t n)
{
    return r->hash == h && r->nframes == n && memcmp(gt_arena + r->offset, ips, n * sizeof(*ips)) == 0;
}

static uint32_t gt_new_record(uint64_t h, const uintptr_t *ips, uint32_t n)
{
    uint32_t off = atomic_fetch_add_explicit(&gt_arena_used, n, memory_order_relaxed);
    uint32_t id = atomic_fetch_add_explicit(&gt_next_id, 1, memory_order_relaxed) + 1;
    if (id > GT_STACK_MAX || off + n > GT_STACK_ARENA || off + n < off)
        return 0;
    memcpy(gt_arena + off, ips, n * sizeof(*ips));
    gt_recs[id].hash = h;
    gt_recs[id].nframes = n;
    gt_recs[id].offset = off;
    return id;
}

static uint32_t gt_intern(const uintptr_t *ips, uint32_t n)
{
    uint64_t h = gt_hash_frames(ips, n);
    uint32_t i = (uint32_t)h & (GT_STACK_SLOTS - 1);
    uint32_t mine = 0;
    for (uint32_t probe = 0; probe < GT_STACK_SLOTS; probe++, i = (i + 1) & (GT_STACK_SLOTS - 1)) {
        uint32_t id = atomic_load_explicit(&gt_slots[i], memory_order_acquire);
        if (id == 0) {
            if (!mine)
                mine = gt_new_record(h, ips, n);
            if (!mine)
                break;
            if (atomic_compare_exchange_strong_explicit(&gt_slots[i], &id, mine, memory_order_acq_rel,
                                                        memory_order_acquire))
                return mine;
            /* Someone published here first: id now holds theirs. */
        }
        if (gt_same(&gt_recs[id], h, ips, n))
            return id;
    }
    atomic_fetch_add_explicit(&gt_stack_drops, 1, memory_order_relaxed);
    return 0;
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

uint32_t gt_stack_capture(void)
{
    if (gt_depth <= 0)
        return 0;
    void *raw[GT_STACK_MAX_DEPTH + 16];
    int n = gt_unwind(raw, gt_depth + 16);
    int skip = 0;
    while (skip < n && (uintptr_t)raw[skip] >= gt_self_lo && (uintptr_t)raw[skip] < gt_self_hi)
        skip++;
    int keep = n - skip;
    if (keep > gt_depth)
        keep = gt_depth;
    if (keep <= 0)
        return 0;
    return gt_intern((const uintptr_t *)(raw + skip), (uint32_t)keep);
}

uint32_t gt_stack_frames(uint32_t id, const uintptr_t **ips)
{
    if (id == 0 || id > GT_STACK_MAX || !gt_recs)
        return 0;
    *ips = gt_arena + gt_recs[id].offset;
    return gt_recs[id].nframes;
}

uint64_t gt_stacks_dropped(void)
{
    return atomic_load(&gt_stack_drops);
}

uint32_t gt_stacks_count(void)
{
    uint32_t n = atomic_load(&gt_next_id);
    return n > GT_STACK_MAX ? GT_STACK_MAX : n;
}

void gt_stacks_set_self(uintptr_t lo, uintptr_t hi)
{
    gt_self_lo = lo;
    gt_self_hi = hi;
}

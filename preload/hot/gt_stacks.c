/* gt_stacks.c: unwinding with libunwind's cached fast path and a lock-free
 * table that turns each distinct stack into an id.
 */
#include <dlfcn.h>
#include <link.h>
#include <stdatomic.h>
#include <string.h>

#define UNW_LOCAL_ONLY
#include <libunwind.h>

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
    return gt_idtab_intern(&gt_native, (const uint64_t *)(raw + skip), (uint32_t)keep);
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

/* gt_sampler_pyts.c: the Python thread state of every thread of the
 * process, from the interpreter's own list (gt_sampler_pyts.h).
 *
 * A thread that called CUDA tells its thread state itself (hot/
 * gt_threads.h); a loader thread that never does is found here: the main
 * interpreter's list of thread states (PyInterpreterState.threads.head,
 * then each one's .next), each with the kernel thread id it runs on
 * (.native_thread_id, set by the thread itself as it starts). The list
 * is read as the frames are, through process_vm_readv on this process
 * (a thread state freed under the walk reads as garbage, never faults),
 * each entry checked to belong to the interpreter. The list changes only
 * as threads start and end, so it is walked again only when the
 * process's threads changed, or, while some thread has none (a native
 * thread, or a Python one not yet bound), every GT_SPTS_RETRY rounds; and
 * each round, one read checks that every state it gives still holds its
 * thread's id, else the list is walked again. */
#include <dlfcn.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "hot/gt_py_layouts.h"
#include "hot/gt_python.h"
#include "sampler/gt_sampler_pyts.h"

#define GT_SPTS_MAX 1024
#define GT_SPTS_RETRY 16

static struct {
    int tried, on;  /* the symbols looked up (gt_spts_init); the list can be read */
    struct gt_py_thread_layout L;
    uintptr_t interp;
    uintptr_t (*main_interp)(void);
    /* the last walk: thread id -> thread state */
    uint32_t tids[GT_SPTS_MAX];
    uintptr_t states[GT_SPTS_MAX];
    size_t n;
    uint64_t set_hash;  /* of the thread ids the walk was made for */
    unsigned since;     /* rounds since the walk */
} gt_spts;

static int gt_spts_rd(uintptr_t addr, void *out, size_t n)
{
    if (!addr || (addr & 7))
        return -1;
    struct iovec local = {out, n}, remote = {(void *)addr, n};
    return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)n ? 0 : -1;
}

/* 3.13 and later: the offsets the interpreter publishes (the prefix of
 * _Py_DebugOffsets, as hot/gt_python.c reads it, by 8-byte word):
 * interpreter_state.threads_head is word 9, thread_state.next 21,
 * .interp 22, .native_thread_id 25. */
static int gt_spts_from_debug_offsets(void)
{
    const uint64_t *d = dlsym(RTLD_DEFAULT, "_PyRuntime");
    if (!d || memcmp(d, "xdebugpy", 8) != 0 || d[2] /* free-threaded */)
        return -1;
    gt_spts.L.interp_threads_head = (uint32_t)d[9];
    gt_spts.L.ts_next = (uint32_t)d[21];
    gt_spts.L.ts_interp = (uint32_t)d[22];
    gt_spts.L.ts_native_tid = (uint32_t)d[25];
    return 0;
}

void gt_spts_init(void)
{
    if (gt_spts.tried)
        return;
    if (!gt_python_layout())
        return; /* no Python stacks: tried again at the next start */
    gt_spts.tried = 1;
    int minor = gt_python_minor();
    gt_spts.main_interp = (uintptr_t(*)(void))dlsym(RTLD_DEFAULT, "PyInterpreterState_Main");
    if (!gt_spts.main_interp)
        return;
    if (minor >= 13) {
        if (gt_spts_from_debug_offsets() < 0)
            return;
    } else {
        const struct gt_py_thread_layout *row = NULL;
        for (size_t i = 0; i < sizeof(gt_py_thread_layouts) / sizeof(gt_py_thread_layouts[0]); i++)
            if ((int)gt_py_thread_layouts[i].minor == minor)
                row = &gt_py_thread_layouts[i];
        if (!row || row->ts_native_tid == GT_PY_NONE)
            return;
        gt_spts.L = *row;
    }
    uint32_t span = gt_spts.L.ts_next;
    if (gt_spts.L.ts_interp > span)
        span = gt_spts.L.ts_interp;
    if (gt_spts.L.ts_native_tid > span)
        span = gt_spts.L.ts_native_tid;
    if (span + 8 > 4096)
        return;
    gt_spts.on = 1;
}

/* Walks the list; the map is left empty when a read fails. */
static void gt_spts_walk(void)
{
    static unsigned char img[4096 + 8];
    const struct gt_py_thread_layout *L = &gt_spts.L;
    uint32_t span = L->ts_next;
    if (L->ts_interp > span)
        span = L->ts_interp;
    if (L->ts_native_tid > span)
        span = L->ts_native_tid;
    span += 8;
    gt_spts.n = 0;
    if (!gt_spts.interp)
        gt_spts.interp = gt_spts.main_interp(); /* _PyRuntime.interpreters.main: one load */
    uintptr_t ts;
    if (gt_spts_rd(gt_spts.interp + L->interp_threads_head, &ts, 8) < 0)
        return;
    for (size_t walked = 0; ts && walked < GT_SPTS_MAX; walked++) {
        if (gt_spts_rd(ts, img, span) < 0)
            return;
        uint64_t interp, ntid;
        uintptr_t next;
        memcpy(&interp, img + L->ts_interp, 8);
        memcpy(&ntid, img + L->ts_native_tid, 8);
        memcpy(&next, img + L->ts_next, 8);
        if (interp != gt_spts.interp)
            return; /* freed under the walk: the next round walks again */
        if (ntid && ntid <= UINT32_MAX && gt_spts.n < GT_SPTS_MAX) {
            gt_spts.tids[gt_spts.n] = (uint32_t)ntid;
            gt_spts.states[gt_spts.n++] = ts;
        }
        ts = next;
    }
}

/* Each thread's state from the last walk: the number filled. */
static size_t gt_spts_lookup(const uint32_t *tids, uintptr_t *states, uint8_t *from_map, size_t n)
{
    size_t filled = 0;
    for (size_t i = 0; i < n; i++) {
        from_map[i] = 0;
        if (states[i])
            continue;
        for (size_t j = 0; j < gt_spts.n; j++)
            if (gt_spts.tids[j] == tids[i]) {
                states[i] = gt_spts.states[j];
                from_map[i] = 1;
                filled++;
                break;
            }
    }
    return filled;
}

/* Whether every state taken from the map still names its thread: a
 * thread state freed and another made for a thread (a native thread that
 * calls into Python now and then, as pybind11's callbacks do) leaves the
 * map stale, and the old address may hold another thread's state. One
 * read of every thread id, in one call. */
static int gt_spts_still_hold(const uint32_t *tids, const uintptr_t *states, const uint8_t *from_map, size_t n)
{
    static uint64_t got[GT_SPTS_MAX];
    static struct iovec local[GT_SPTS_MAX], remote[GT_SPTS_MAX];
    size_t m = 0;
    for (size_t i = 0; i < n && m < GT_SPTS_MAX; i++)
        if (from_map[i]) {
            local[m] = (struct iovec){&got[m], 8};
            remote[m] = (struct iovec){(void *)(states[i] + gt_spts.L.ts_native_tid), 8};
            m++;
        }
    if (!m)
        return 1;
    if (process_vm_readv(getpid(), local, m, remote, m, 0) != (ssize_t)(m * 8))
        return 0;
    for (size_t i = 0, k = 0; i < n && k < m; i++)
        if (from_map[i] && got[k++] != tids[i])
            return 0;
    return 1;
}

void gt_spts_fill(const uint32_t *tids, uintptr_t *states, size_t n)
{
    static uint8_t from_map[GT_SPTS_MAX];
    if (!gt_spts.on || !gt_python_live())
        return;
    if (n > GT_SPTS_MAX)
        n = GT_SPTS_MAX;
    uint64_t h = n;
    size_t missing = 0;
    for (size_t i = 0; i < n; i++) {
        h += (uint64_t)tids[i] * 0x9E3779B97F4A7C15ull;
        missing += !states[i];
    }
    if (!missing)
        return;
    gt_spts.since++;
    int walked = 0;
    if (h != gt_spts.set_hash || gt_spts.since >= GT_SPTS_RETRY) {
        gt_spts_walk();
        gt_spts.set_hash = h;
        gt_spts.since = 0;
        walked = 1;
    }
    if (!gt_spts_lookup(tids, states, from_map, n) || gt_spts_still_hold(tids, states, from_map, n))
        return;
    /* stale: forget what the map gave, walk afresh (once a round) */
    for (size_t i = 0; i < n; i++)
        if (from_map[i])
            states[i] = 0;
    if (walked)
        return;
    gt_spts_walk();
    gt_spts.since = 0;
    gt_spts_lookup(tids, states, from_map, n);
}

void gt_spts_after_fork_child(void)
{
    /* the child's only thread is the forking one: walk afresh */
    gt_spts.n = 0;
    gt_spts.set_hash = 0;
}

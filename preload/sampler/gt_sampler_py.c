/* gt_sampler_py.c: another thread's Python stack, read while it runs.
 *
 * The call-time reader (hot/gt_python.c) reads its own thread's frames,
 * which hold still. These frames belong to a thread that may be running,
 * returning, exiting: every read here goes through process_vm_readv on
 * this very process, which copies or fails and never faults, and every
 * object read is checked to be of its type before its fields are used. A
 * frame chain that moved while it was walked (its top frame differs after
 * the walk, twice) or a read that failed makes a torn sample: dropped and
 * counted, never followed. */
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include "base/gt_config.h"
#include "hot/gt_py_layouts.h"
#include "hot/gt_python.h"
#include "sampler/gt_sampler.h"

#define GT_SPY_OWNED_BY_CSTACK 3
#define GT_SPY_MAX_WALK 1024
#define GT_SPY_STR_BUF (128 + GT_PY_MAX_STR * 4 + 8)
#define GT_SPY_BYTES_BUF (64 + GT_PY_MAX_TABLE + 8)

static pid_t gt_spy_pid;
static char *gt_spy_str, *gt_spy_bytes; /* the sampler's alone */

/* Copies n bytes at addr in this process; 0 when all came. */
static int gt_rd(uintptr_t addr, void *out, size_t n)
{
    if (!addr)
        return -1;
    struct iovec local = {out, n}, remote = {(void *)addr, n};
    return process_vm_readv(gt_spy_pid, &local, 1, &remote, 1, 0) == (ssize_t)n ? 0 : -1;
}

static inline uint64_t gt_at64(const void *img, uint32_t off)
{
    uint64_t v;
    memcpy(&v, (const char *)img + off, 8);
    return v;
}

static inline uint32_t gt_at32(const void *img, uint32_t off)
{
    uint32_t v;
    memcpy(&v, (const char *)img + off, 4);
    return v;
}

int gt_sampler_py_init(void)
{
    gt_spy_pid = getpid();
    if (gt_spy_str)
        return 0;
    void *a = mmap(NULL, GT_SPY_STR_BUF, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    void *b = mmap(NULL, GT_SPY_BYTES_BUF, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (a == MAP_FAILED || b == MAP_FAILED)
        return -1;
    gt_spy_str = a;
    gt_spy_bytes = b;
    return 0;
}

/* A str or bytes object copied whole (up to what the call-time reader
 * keeps) into the sampler's buffer, its type checked; 0 on failure. */
static uintptr_t gt_spy_fetch(uintptr_t addr, int kind, void *ctx)
{
    const struct gt_py_layout *L = ctx;
    uintptr_t code_t, str_t, bytes_t;
    gt_python_types(&code_t, &str_t, &bytes_t);
    if (!addr || (addr & 7))
        return 0;
    if (kind == GT_PYOBJ_STR) {
        uint32_t hdr = L->str_compact_size;
        if (hdr > 128 || gt_rd(addr, gt_spy_str, hdr) < 0 || gt_at64(gt_spy_str, L->ob_type) != str_t)
            return 0;
        uint32_t state = gt_at32(gt_spy_str, L->str_state);
        unsigned compact = (state >> 5) & 1, k = (state >> 2) & 7, ascii = (state >> 6) & 1;
        if (!compact || !(k == 1 || k == 2 || k == 4))
            return (uintptr_t)gt_spy_str; /* read as "?" */
        uint64_t len = gt_at64(gt_spy_str, L->str_length);
        if (len > GT_PY_MAX_STR)
            len = GT_PY_MAX_STR;
        size_t need = (ascii ? L->str_ascii_size : L->str_compact_size) + len * k;
        if (need > GT_SPY_STR_BUF || gt_rd(addr, gt_spy_str, need) < 0)
            return 0;
        return (uintptr_t)gt_spy_str;
    }
    uint32_t hdr = L->bytes_sval;
    if (hdr > 64 || gt_rd(addr, gt_spy_bytes, hdr) < 0 || gt_at64(gt_spy_bytes, L->ob_type) != bytes_t)
        return 0;
    uint64_t n = gt_at64(gt_spy_bytes, L->var_size);
    if (n > GT_PY_MAX_TABLE)
        return (uintptr_t)gt_spy_bytes; /* too long: kept without lines, as the call-time reader does */
    if (gt_rd(addr, gt_spy_bytes, hdr + n) < 0)
        return 0;
    return (uintptr_t)gt_spy_bytes;
}

static uint32_t gt_max4(uint32_t a, uint32_t b, uint32_t c, uint32_t d)
{
    uint32_t m = 0, v[4] = {a, b, c, d};
    for (int i = 0; i < 4; i++)
        if (v[i] != GT_PY_NONE && v[i] > m)
            m = v[i];
    return m;
}

/* The frame at the top of the thread's stack; -1 when unreadable. */
static int gt_spy_top(const struct gt_py_layout *L, uintptr_t ts, uintptr_t *fr)
{
    uint64_t p;
    if (gt_rd(ts + L->ts_frame, &p, 8) < 0)
        return -1;
    if (p && L->cframe_current != GT_PY_NONE && gt_rd(p + L->cframe_current, &p, 8) < 0)
        return -1;
    *fr = p;
    return 0;
}

/* One walk: frames into out; -1 when torn. */
static int gt_spy_walk(const struct gt_py_layout *L, uintptr_t fr, uint64_t *out, uint32_t *nout)
{
    uintptr_t code_t, str_t, bytes_t;
    gt_python_types(&code_t, &str_t, &bytes_t);
    uint32_t fsize = gt_max4(L->fr_back, L->fr_code, L->fr_instr, L->fr_owner) + 8;
    uint32_t csize = gt_max4(L->co_filename, L->co_qualname, L->co_linetable, L->co_firstlineno) + 8;
    if (csize < L->ob_type + 8)
        csize = L->ob_type + 8;
    unsigned char fimg[256], cimg[256];
    if (fsize > sizeof(fimg) || csize > sizeof(cimg))
        return -1;
    uint32_t n = 0, depth = (uint32_t)gt_python_depth();
    for (int walked = 0; fr && n < depth && walked < GT_SPY_MAX_WALK; walked++) {
        if ((fr & 7) || gt_rd(fr, fimg, fsize) < 0)
            return -1;
        uintptr_t back = gt_at64(fimg, L->fr_back);
        if (L->fr_owner != GT_PY_NONE && fimg[L->fr_owner] == GT_SPY_OWNED_BY_CSTACK) {
            fr = back;
            continue;
        }
        uintptr_t code = gt_at64(fimg, L->fr_code);
        if (!code || (code & 7) || gt_rd(code, cimg, csize) < 0)
            return -1;
        if (gt_at64(cimg, L->ob_type) != code_t) {
            fr = back;
            continue; /* as the call-time reader: not a code object's frame */
        }
        int64_t lasti;
        if (L->co_code == GT_PY_NONE)
            lasti = (int32_t)gt_at32(fimg, L->fr_instr);
        else
            lasti = ((int64_t)gt_at64(fimg, L->fr_instr) - (int64_t)(code + L->co_code)) / 2;
        if (lasti >= 0 && lasti <= INT32_MAX) {
            uint32_t cid = gt_python_code_id_copied(code, cimg, gt_spy_fetch, (void *)L);
            if (!cid)
                return -1;
            out[n++] = ((uint64_t)cid << 32) | (uint64_t)lasti;
        }
        fr = back;
    }
    *nout = n;
    return 0;
}

uint32_t gt_sampler_pystack(uintptr_t ts, int *torn)
{
    *torn = 0;
    const struct gt_py_layout *L = gt_python_layout();
    if (!L || !ts || (ts & 7) || !gt_spy_str || !gt_python_live())
        return 0;
    uint64_t frames[GT_STACK_MAX_DEPTH];
    for (int attempt = 0; attempt < 2; attempt++) {
        uintptr_t top, again;
        uint32_t n = 0;
        if (gt_spy_top(L, ts, &top) < 0)
            break;
        if (!top)
            return 0;
        if (gt_spy_walk(L, top, frames, &n) < 0)
            continue;
        /* The same top frame after the walk: the chain read is the one
         * the thread was in (its callers cannot have changed without it). */
        if (gt_spy_top(L, ts, &again) < 0 || again != top)
            continue;
        return n ? gt_python_intern(frames, n) : 0;
    }
    *torn = 1;
    return 0;
}

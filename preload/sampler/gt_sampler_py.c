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

/* The frames of a walk are copied a few pages at a time: on 3.11 and later
 * a thread's frames lie together in its data stack, older ones below, so
 * one read of the pages at and below a frame usually holds the frames
 * after it too. Pages are listed top first: the read stops at the first
 * page not mapped, keeping those above it. */
#define GT_SPY_PAGE 4096u
#define GT_SPY_PAGES 3u
static unsigned char gt_spy_chunk[GT_SPY_PAGE * GT_SPY_PAGES];
static uintptr_t gt_spy_cbase, gt_spy_clen;

static const unsigned char *gt_spy_frame(uintptr_t fr, uint32_t fsize)
{
    if (fr >= gt_spy_cbase && fr + fsize <= gt_spy_cbase + gt_spy_clen)
        return gt_spy_chunk + (fr - gt_spy_cbase);
    uintptr_t last = (fr + fsize - 1) & ~(uintptr_t)(GT_SPY_PAGE - 1);
    uintptr_t first = fr & ~(uintptr_t)(GT_SPY_PAGE - 1);
    /* the frame's own pages (one, or two when it straddles), then one
     * more below for the frames after it: each page costs the copy */
    size_t want = (size_t)((last - first) / GT_SPY_PAGE) + 1;
    if (want < GT_SPY_PAGES && (fr & (GT_SPY_PAGE - 1)) < GT_SPY_PAGE / 4)
        want++;
    if (want > GT_SPY_PAGES)
        return NULL;
    struct iovec local[GT_SPY_PAGES], remote[GT_SPY_PAGES];
    for (unsigned i = 0; i < want; i++) {
        remote[i].iov_base = (void *)(last - (uintptr_t)i * GT_SPY_PAGE);
        remote[i].iov_len = GT_SPY_PAGE;
        local[i].iov_base = gt_spy_chunk + (want - 1 - i) * GT_SPY_PAGE;
        local[i].iov_len = GT_SPY_PAGE;
    }
    ssize_t n = process_vm_readv(gt_spy_pid, local, want, remote, want, 0);
    size_t pages = n > 0 ? (size_t)n / GT_SPY_PAGE : 0;
    gt_spy_cbase = gt_spy_clen = 0;
    if (!pages)
        return NULL;
    uintptr_t base = last - (pages - 1) * GT_SPY_PAGE;
    if (fr < base)
        return NULL; /* the frame runs into a page that is not mapped */
    /* the pages read sit at the top of the buffer: move them down */
    if (pages < want)
        memmove(gt_spy_chunk, gt_spy_chunk + (want - pages) * GT_SPY_PAGE, pages * GT_SPY_PAGE);
    gt_spy_cbase = base;
    gt_spy_clen = pages * GT_SPY_PAGE;
    return gt_spy_chunk + (fr - base);
}

#define GT_SPY_MAX_CODES (GT_STACK_MAX_DEPTH * 2)

/* One walk: frames into out; -1 when torn. The frames first (their code
 * objects' addresses and positions), then every code object in one read. */
static int gt_spy_walk(const struct gt_py_layout *L, uintptr_t fr, uint64_t *out, uint32_t *nout)
{
    uintptr_t code_t, str_t, bytes_t;
    gt_python_types(&code_t, &str_t, &bytes_t);
    uint32_t fsize = gt_max4(L->fr_back, L->fr_code, L->fr_instr, L->fr_owner) + 8;
    uint32_t csize = gt_max4(L->co_filename, L->co_qualname, L->co_linetable, L->co_firstlineno) + 8;
    if (csize < L->ob_type + 8)
        csize = L->ob_type + 8;
    static unsigned char cimg[GT_SPY_MAX_CODES][256];
    static uintptr_t codes[GT_SPY_MAX_CODES];
    static uint64_t instr[GT_SPY_MAX_CODES];
    if (fsize > GT_SPY_PAGE || csize > sizeof(cimg[0]))
        return -1;
    uint32_t depth = (uint32_t)gt_python_depth(), nc = 0;
    gt_spy_cbase = gt_spy_clen = 0;
    for (int walked = 0; fr && nc < GT_SPY_MAX_CODES && walked < GT_SPY_MAX_WALK; walked++) {
        const unsigned char *fimg = (fr & 7) ? NULL : gt_spy_frame(fr, fsize);
        if (!fimg)
            return -1;
        uintptr_t back = gt_at64(fimg, L->fr_back);
        if (!(L->fr_owner != GT_PY_NONE && fimg[L->fr_owner] == GT_SPY_OWNED_BY_CSTACK)) {
            uintptr_t code = gt_at64(fimg, L->fr_code);
            if (!code || (code & 7))
                return -1;
            codes[nc] = code;
            instr[nc] = L->co_code == GT_PY_NONE ? (uint64_t)gt_at32(fimg, L->fr_instr) : gt_at64(fimg, L->fr_instr);
            nc++;
        }
        fr = back;
    }
    struct iovec local[GT_SPY_MAX_CODES], remote[GT_SPY_MAX_CODES];
    for (uint32_t i = 0; i < nc; i++) {
        local[i] = (struct iovec){cimg[i], csize};
        remote[i] = (struct iovec){(void *)codes[i], csize};
    }
    if (nc && process_vm_readv(gt_spy_pid, local, nc, remote, nc, 0) != (ssize_t)nc * (ssize_t)csize)
        return -1;
    uint32_t n = 0;
    for (uint32_t i = 0; i < nc && n < depth; i++) {
        if (gt_at64(cimg[i], L->ob_type) != code_t)
            continue; /* as the call-time reader: not a code object's frame */
        int64_t lasti = L->co_code == GT_PY_NONE ? (int32_t)(uint32_t)instr[i]
                                                 : ((int64_t)instr[i] - (int64_t)(codes[i] + L->co_code)) / 2;
        if (lasti < 0 || lasti > INT32_MAX)
            continue;
        uint32_t cid = gt_python_code_id_copied(codes[i], cimg[i], gt_spy_fetch, (void *)L);
        if (!cid)
            return -1;
        out[n++] = ((uint64_t)cid << 32) | (uint64_t)lasti;
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
        uint64_t holder, top, again;
        uint32_t n = 0;
        /* 3.11 and 3.12 reach the top frame through the thread's current
         * C frame: read once, it serves the check after the walk too */
        if (gt_rd(ts + L->ts_frame, &holder, 8) < 0)
            break;
        uintptr_t at = L->cframe_current != GT_PY_NONE ? holder + L->cframe_current : ts + L->ts_frame;
        if (L->cframe_current == GT_PY_NONE)
            top = holder;
        else if (!holder)
            return 0;
        else if (gt_rd(at, &top, 8) < 0)
            break;
        if (!top)
            return 0;
        if (gt_spy_walk(L, top, frames, &n) < 0)
            continue;
        /* The same top frame after the walk: the chain read is the one
         * the thread was in (its callers cannot have changed without it). */
        if (gt_rd(at, &again, 8) < 0 || again != top)
            continue;
        return n ? gt_python_intern(frames, n) : 0;
    }
    *torn = 1;
    return 0;
}

/* ---- a round's threads at once ----
 *
 * The same walk for every thread of a round, level by level: the thread
 * states' frame pointers in one read, the frame pages in one, the code
 * objects in one, the check in one; a system call costs more than the
 * bytes it copies, and each piece it copies (an iovec: the kernel pins
 * its page) more than its bytes, so each code object is read once a
 * round however many frames run it (threads of one pool, recursion). A
 * thread whose read fails, or whose frames moved, is walked again alone
 * (gt_sampler_pystack), which decides torn or not. */
#define GT_SPB_PAGES 2u
#define GT_SPB_CODES 2048u

/* Reads n (local, remote) pairs of equal lengths, as few calls as the
 * failures allow (a call stops at the first element it cannot read);
 * ok[i]: element i came. */
static void gt_rd_many(struct iovec *local, struct iovec *remote, size_t n, uint8_t *ok)
{
    size_t k = 0;
    while (k < n) {
        size_t m = n - k > 1024 ? 1024 : n - k;
        ssize_t got = process_vm_readv(gt_spy_pid, local + k, m, remote + k, m, 0);
        size_t done = 0, acc = 0;
        while (got > 0 && done < m && acc + remote[k + done].iov_len <= (size_t)got) {
            acc += remote[k + done].iov_len;
            ok[k + done++] = 1;
        }
        if (done < m)
            ok[k + done++] = 0; /* the element it stopped at */
        k += done;
    }
}

void gt_sampler_pystacks(const uintptr_t *ts, size_t n, uint32_t *ids, uint8_t *torn)
{
    static uint64_t holder[GT_SPB_MAX], top[GT_SPB_MAX], again[GT_SPB_MAX];
    static uintptr_t at[GT_SPB_MAX], pbase[GT_SPB_MAX], plen[GT_SPB_MAX];
    static const unsigned char *pdata[GT_SPB_MAX];
    static uint8_t live[GT_SPB_MAX], ok[GT_SPB_CODES], pwant[GT_SPB_MAX];
    static size_t idx[GT_SPB_CODES], cfirst[GT_SPB_MAX], ccount[GT_SPB_MAX];
    static uint32_t uniq[GT_SPB_CODES], uslot[GT_SPB_CODES * 2]; /* frame -> its code's read; address -> read + 1 */
    static struct iovec lv[GT_SPB_CODES], rv[GT_SPB_CODES];
    static unsigned char pages[GT_SPB_MAX][GT_SPB_PAGES * GT_SPY_PAGE];
    static unsigned char cimg[GT_SPB_CODES][256];
    static uintptr_t codes[GT_SPB_CODES];
    static uint64_t instr[GT_SPB_CODES];
    static uint64_t frames[GT_SPB_MAX][GT_STACK_MAX_DEPTH];
    static uint32_t nframes[GT_SPB_MAX];
    if (n > GT_SPB_MAX)
        n = GT_SPB_MAX;
    const struct gt_py_layout *L = gt_python_layout();
    for (size_t i = 0; i < n; i++) {
        ids[i] = 0;
        torn[i] = 0;
        live[i] = L && ts[i] && !(ts[i] & 7);
    }
    if (!L || !gt_spy_str || !gt_python_live())
        return;
    uintptr_t code_t, str_t, bytes_t;
    gt_python_types(&code_t, &str_t, &bytes_t);
    uint32_t fsize = gt_max4(L->fr_back, L->fr_code, L->fr_instr, L->fr_owner) + 8;
    uint32_t csize = gt_max4(L->co_filename, L->co_qualname, L->co_linetable, L->co_firstlineno) + 8;
    if (csize < L->ob_type + 8)
        csize = L->ob_type + 8;
    if (fsize > GT_SPY_PAGE || csize > sizeof(cimg[0]))
        return;
    size_t m;
    /* the frame pointer (3.11, 3.12: the current C frame's) */
    m = 0;
    for (size_t i = 0; i < n; i++)
        if (live[i]) {
            lv[m] = (struct iovec){&holder[i], 8};
            rv[m] = (struct iovec){(void *)(ts[i] + L->ts_frame), 8};
            idx[m++] = i;
        }
    gt_rd_many(lv, rv, m, ok);
    for (size_t j = 0; j < m; j++)
        if (!ok[j])
            live[idx[j]] = 0, torn[idx[j]] = 1;
    m = 0;
    for (size_t i = 0; i < n; i++) {
        if (!live[i])
            continue;
        if (L->cframe_current == GT_PY_NONE) {
            at[i] = ts[i] + L->ts_frame;
            top[i] = holder[i];
        } else if (!holder[i]) {
            live[i] = 0;
        } else {
            at[i] = holder[i] + L->cframe_current;
            lv[m] = (struct iovec){&top[i], 8};
            rv[m] = (struct iovec){(void *)at[i], 8};
            idx[m++] = i;
        }
    }
    gt_rd_many(lv, rv, m, ok);
    for (size_t j = 0; j < m; j++)
        if (!ok[j])
            live[idx[j]] = 0, torn[idx[j]] = 1;
    /* the pages of each top frame and below */
    m = 0;
    for (size_t i = 0; i < n; i++) {
        if (live[i] && (!top[i] || (top[i] & 7))) {
            torn[i] = top[i] != 0;
            live[i] = 0;
        }
        if (!live[i])
            continue;
        uintptr_t last = (top[i] + fsize - 1) & ~(uintptr_t)(GT_SPY_PAGE - 1);
        uintptr_t first = top[i] & ~(uintptr_t)(GT_SPY_PAGE - 1);
        size_t want = (size_t)((last - first) / GT_SPY_PAGE) + 1;
        if (want < GT_SPB_PAGES && (top[i] & (GT_SPY_PAGE - 1)) < GT_SPY_PAGE / 4)
            want++;
        if (want > GT_SPB_PAGES) {
            live[i] = 0, torn[i] = 1;
            continue;
        }
        pwant[i] = (uint8_t)want;
        pbase[i] = last;
        for (size_t p = 0; p < want; p++) {
            lv[m] = (struct iovec){pages[i] + (want - 1 - p) * GT_SPY_PAGE, GT_SPY_PAGE};
            rv[m] = (struct iovec){(void *)(last - p * GT_SPY_PAGE), GT_SPY_PAGE};
            idx[m++] = i;
        }
    }
    gt_rd_many(lv, rv, m, ok);
    for (size_t j = 0; j < m;) {
        size_t i = idx[j], want = pwant[i], got = 0;
        while (got < want && ok[j + got])
            got++;
        j += want;
        uintptr_t base = pbase[i] - (got ? got - 1 : 0) * GT_SPY_PAGE;
        if (!got || top[i] < base) {
            live[i] = 0, torn[i] = 1;
            continue;
        }
        pdata[i] = pages[i] + (want - got) * GT_SPY_PAGE;
        pbase[i] = base;
        plen[i] = got * GT_SPY_PAGE;
    }
    /* each thread's frames, from its pages (or read alone past them) */
    size_t nc = 0;
    for (size_t i = 0; i < n; i++) {
        if (!live[i])
            continue;
        cfirst[i] = nc;
        gt_spy_cbase = gt_spy_clen = 0;
        uintptr_t fr = top[i];
        int bad = 0;
        for (int walked = 0; fr && nc - cfirst[i] < GT_SPY_MAX_CODES && walked < GT_SPY_MAX_WALK; walked++) {
            if (nc == GT_SPB_CODES) {
                bad = 1; /* out of room this round: walked alone below */
                break;
            }
            const unsigned char *fimg = NULL;
            if (!(fr & 7)) {
                if (fr >= pbase[i] && fr + fsize <= pbase[i] + plen[i])
                    fimg = pdata[i] + (fr - pbase[i]);
                else
                    fimg = gt_spy_frame(fr, fsize);
            }
            if (!fimg) {
                bad = 1;
                break;
            }
            uintptr_t back = gt_at64(fimg, L->fr_back);
            if (!(L->fr_owner != GT_PY_NONE && fimg[L->fr_owner] == GT_SPY_OWNED_BY_CSTACK)) {
                uintptr_t code = gt_at64(fimg, L->fr_code);
                if (!code || (code & 7)) {
                    bad = 1;
                    break;
                }
                codes[nc] = code;
                instr[nc] = L->co_code == GT_PY_NONE ? (uint64_t)gt_at32(fimg, L->fr_instr)
                                                     : gt_at64(fimg, L->fr_instr);
                nc++;
            }
            fr = back;
        }
        if (bad) {
            live[i] = 0, torn[i] = 1;
            nc = cfirst[i];
        }
        ccount[i] = nc - cfirst[i];
    }
    /* every distinct code object in one read: the same address read once
     * in a round is the same object for every frame that runs it */
    size_t nu = 0;
    memset(uslot, 0, sizeof(uslot));
    for (size_t j = 0; j < nc; j++) {
        uint32_t mask = GT_SPB_CODES * 2 - 1, h = (uint32_t)((codes[j] >> 3) * 0x9E3779B97F4A7C15ull >> 40) & mask;
        while (uslot[h] && codes[idx[uslot[h] - 1]] != codes[j])
            h = (h + 1) & mask;
        if (!uslot[h]) {
            idx[nu] = j;
            lv[nu] = (struct iovec){cimg[nu], csize};
            rv[nu] = (struct iovec){(void *)codes[j], csize};
            uslot[h] = (uint32_t)++nu;
        }
        uniq[j] = uslot[h] - 1;
    }
    gt_rd_many(lv, rv, nu, ok);
    uint32_t depth = (uint32_t)gt_python_depth();
    for (size_t i = 0; i < n; i++) {
        if (!live[i])
            continue;
        uint32_t k = 0;
        for (size_t j = cfirst[i]; j < cfirst[i] + ccount[i] && k < depth; j++) {
            const unsigned char *img = cimg[uniq[j]];
            if (!ok[uniq[j]]) {
                live[i] = 0, torn[i] = 1;
                break;
            }
            if (gt_at64(img, L->ob_type) != code_t)
                continue;
            int64_t lasti = L->co_code == GT_PY_NONE ? (int32_t)(uint32_t)instr[j]
                                                     : ((int64_t)instr[j] - (int64_t)(codes[j] + L->co_code)) / 2;
            if (lasti < 0 || lasti > INT32_MAX)
                continue;
            uint32_t cid = gt_python_code_id_copied(codes[j], img, gt_spy_fetch, (void *)L);
            if (!cid) {
                live[i] = 0, torn[i] = 1;
                break;
            }
            frames[i][k++] = ((uint64_t)cid << 32) | (uint64_t)lasti;
        }
        nframes[i] = k;
    }
    /* the same top frames after the walks */
    m = 0;
    for (size_t i = 0; i < n; i++)
        if (live[i]) {
            lv[m] = (struct iovec){&again[i], 8};
            rv[m] = (struct iovec){(void *)at[i], 8};
            idx[m++] = i;
        }
    gt_rd_many(lv, rv, m, ok);
    for (size_t j = 0; j < m; j++) {
        size_t i = idx[j];
        if (!ok[j] || again[i] != top[i])
            live[i] = 0, torn[i] = 1;
        else
            ids[i] = nframes[i] ? gt_python_intern(frames[i], nframes[i]) : 0;
    }
    /* the rest alone, twice if need be */
    for (size_t i = 0; i < n; i++)
        if (torn[i]) {
            int t;
            ids[i] = gt_sampler_pystack(ts[i], &t);
            torn[i] = (uint8_t)t;
        }
}

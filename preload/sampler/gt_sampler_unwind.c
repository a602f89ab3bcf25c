/* gt_sampler_unwind.c: a blocked thread's native stack (gt_sampler_unwind.h).
 *
 * The thread is off the CPU, in a system call: its stack pointer and
 * program counter come from /proc/self/task/TID/syscall, its stack is in
 * our own memory. libunwind's remote unwinder walks it with accessors of
 * ours: memory through process_vm_readv on this process (a page at a
 * time, cached for one walk: the stack's and the unwind tables' pages are
 * read once each), the two registers, and each module's binary search
 * table of .eh_frame_hdr (gt_sampler_mods.h). rbp, which a frame built -O0 (or with frame pointers)
 * finds itself through and which the kernel does not report, is found
 * from the stack when the walk needs it and no callee saved it; any
 * other register the walk needs ends it there (what was found stays).
 * The thread may wake at any time: nothing read is trusted to be mapped,
 * and the caller checks the thread's CPU clock around the walk. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include <libunwind.h>

#include "sampler/gt_sampler_mods.h"
#include "sampler/gt_sampler_unwind.h"

/* libunwind's lookup in a remote binary search table (exported, not in
 * its headers; perf uses it the same way). */
extern int _Ux86_64_dwarf_search_unwind_table(unw_addr_space_t as, unw_word_t ip, unw_dyn_info_t *di,
                                              unw_proc_info_t *pi, int need_unwind_info, void *arg);

#define GT_SUNW_PAGE 4096u
#define GT_SUNW_SLOTS 32u     /* pages cached for one walk, direct mapped */
/* Walks remembered, by (pc, sp), with the stack words each read */
/* The memos: 256 sets of 2, by a hash of (pc, sp). Every thread is
 * sampled, each blocked at a place or two of its own: with 64 memos,
 * direct mapped, two threads whose (pc, sp) met in one slot walked each
 * other out each round (135 of 154 walks, bench/native_threads.c with 16
 * threads, were such). A memo takes a page or so when used. */
#define GT_SUNW_WAYS 2u
#define GT_SUNW_SETS 256u
#define GT_SUNW_MEMOS (GT_SUNW_WAYS * GT_SUNW_SETS)
#define GT_SUNW_WORDS 192
#define GT_SUNW_SPAN 65536u    /* stack bytes above sp a memo may cover */

/* A walk is a function of its registers and the words it read: the same
 * pc and sp, and the same words at the same places on the stack (the
 * modules' tables do not change; a rescan of the mappings, as after a
 * library was loaded, forgets every memo), give the same frames. So a thread that
 * blocks again where it blocked before (a loader's loop) is checked with
 * one copy of its stack instead of walked (6 to 7 us against 37 to 49 us
 * for a walk of 18 frames on the development VM, loaded: libunwind masks
 * signals around its cache's lock twice a frame). */
struct gt_sunw_memo {
    uintptr_t pc, sp;
    uint32_t n, nw, span;
    uint32_t used;             /* the walk that last used it (the older of a set goes first) */
    int ok;                    /* every stack read of its walk came */
    uintptr_t ips[GT_SUNW_MAX];
    uint16_t at[GT_SUNW_WORDS]; /* word offsets from sp */
    uintptr_t val[GT_SUNW_WORDS];
};

static struct {
    unw_addr_space_t as;
    pid_t pid;
    /* the page cache of one walk: slot i holds page tag[i] when gen[i]
     * is the walk's generation */
    unsigned char *pages;
    uintptr_t tag[GT_SUNW_SLOTS];
    uint32_t gen[GT_SUNW_SLOTS];
    uint32_t walk;
    struct gt_sunw_memo *memos;
    struct gt_sunw_memo *rec;  /* the memo the walk under way fills */
    unsigned char *copy;       /* a memo's check: the stack, in one copy */
    uintptr_t sp, pc;          /* the walk's two registers */
    uintptr_t rbp;             /* and rbp, once found (0: unknown) */
    int wanted_rbp;            /* the walk asked for rbp, unknown */
} gt_u;

static int gt_sunw_read_failed(uintptr_t addr);

/* n bytes at addr, copied by the kernel: 0, or -1 where any is unmapped. */
static int gt_sunw_copy(uintptr_t addr, void *out, size_t n)
{
    struct iovec local = {out, n}, remote = {(void *)addr, n};
    return process_vm_readv(gt_u.pid, &local, 1, &remote, 1, 0) == (ssize_t)n ? 0 : -1;
}

/* The page at page-aligned address pg, from the walk's cache. */
static const unsigned char *gt_sunw_page(uintptr_t pg)
{
    uint32_t i = (uint32_t)(pg / GT_SUNW_PAGE) & (GT_SUNW_SLOTS - 1);
    unsigned char *p = gt_u.pages + (size_t)i * GT_SUNW_PAGE;
    if (gt_u.gen[i] == gt_u.walk && gt_u.tag[i] == pg)
        return p;
    if (gt_sunw_copy(pg, p, GT_SUNW_PAGE) < 0) {
        gt_u.gen[i] = 0;
        return NULL;
    }
    gt_u.tag[i] = pg;
    gt_u.gen[i] = gt_u.walk;
    return p;
}

/* n bytes at addr (n <= a page) through the cache: 0 or -1. */
static int gt_sunw_read(uintptr_t addr, void *out, size_t n)
{
    if (!addr || addr + n < addr)
        return -1;
    uintptr_t pg = addr & ~(uintptr_t)(GT_SUNW_PAGE - 1);
    size_t off = addr - pg, first = n < GT_SUNW_PAGE - off ? n : GT_SUNW_PAGE - off;
    const unsigned char *p = gt_sunw_page(pg);
    if (!p)
        return gt_sunw_read_failed(addr);
    memcpy(out, p + off, first);
    if (first < n) {
        if (!(p = gt_sunw_page(pg + GT_SUNW_PAGE)))
            return gt_sunw_read_failed(addr);
        memcpy((unsigned char *)out + first, p, n - first);
    }
    struct gt_sunw_memo *m = gt_u.rec;
    if (m && addr >= m->sp && addr - m->sp < GT_SUNW_SPAN) {
        /* a word of the stack the walk depends on */
        if (n != 8 || (addr & 7) || m->nw == GT_SUNW_WORDS) {
            m->ok = 0;
        } else {
            m->at[m->nw] = (uint16_t)((addr - m->sp) / 8);
            memcpy(&m->val[m->nw++], out, 8);
            if ((uint32_t)(addr - m->sp) + 8 > m->span)
                m->span = (uint32_t)(addr - m->sp) + 8;
        }
    }
    return 0;
}

static int gt_sunw_read_failed(uintptr_t addr)
{
    struct gt_sunw_memo *m = gt_u.rec;
    if (m && addr >= m->sp && addr - m->sp < GT_SUNW_SPAN)
        m->ok = 0; /* the walk ended on a read that may come next time */
    return -1;
}

static int gt_sunw_find_proc_info(unw_addr_space_t as, unw_word_t ip, unw_proc_info_t *pi, int need, void *arg)
{
    const struct gt_smod *m = gt_smods_of((uintptr_t)ip);
    if (!m)
        return -UNW_ENOINFO;
    unw_dyn_info_t di;
    memset(&di, 0, sizeof(di));
    di.format = UNW_INFO_FORMAT_REMOTE_TABLE;
    di.start_ip = m->lo;
    di.end_ip = m->hi;
    di.u.rti.segbase = m->segbase;
    di.u.rti.table_data = m->table;
    di.u.rti.table_len = m->table_len;
    return _Ux86_64_dwarf_search_unwind_table(as, ip, &di, pi, need, arg);
}

/* The unwind info of a table entry is libunwind's own, freed by it. */
static void gt_sunw_put_unwind_info(unw_addr_space_t as, unw_proc_info_t *pi, void *arg)
{
    (void)as, (void)pi, (void)arg;
}

static int gt_sunw_dyn_list(unw_addr_space_t as, unw_word_t *addr, void *arg)
{
    (void)as, (void)addr, (void)arg;
    return -UNW_ENOINFO;
}

static int gt_sunw_access_mem(unw_addr_space_t as, unw_word_t addr, unw_word_t *val, int write, void *arg)
{
    (void)as, (void)arg;
    if (write)
        return -UNW_EINVAL;
    return gt_sunw_read((uintptr_t)addr, val, sizeof(*val)) == 0 ? 0 : -UNW_EINVAL;
}

/* The two registers the kernel reports; any other is unknown. */
static int gt_sunw_access_reg(unw_addr_space_t as, unw_regnum_t reg, unw_word_t *val, int write, void *arg)
{
    (void)as, (void)arg;
    if (write)
        return -UNW_EINVAL;
    if (reg == UNW_X86_64_RSP)
        *val = gt_u.sp;
    else if (reg == UNW_X86_64_RIP)
        *val = gt_u.pc;
    else if (reg == UNW_X86_64_RBP && gt_u.rbp)
        *val = gt_u.rbp;
    else {
        gt_u.wanted_rbp |= reg == UNW_X86_64_RBP;
        return -UNW_EBADREG;
    }
    return 0;
}

static int gt_sunw_access_fpreg(unw_addr_space_t as, unw_regnum_t reg, unw_fpreg_t *val, int write, void *arg)
{
    (void)as, (void)reg, (void)val, (void)write, (void)arg;
    return -UNW_EBADREG;
}

static int gt_sunw_resume(unw_addr_space_t as, unw_cursor_t *c, void *arg)
{
    (void)as, (void)c, (void)arg;
    return -UNW_EINVAL;
}

static int gt_sunw_proc_name(unw_addr_space_t as, unw_word_t addr, char *buf, size_t len, unw_word_t *off,
                             void *arg)
{
    (void)as, (void)addr, (void)buf, (void)len, (void)off, (void)arg;
    return -UNW_ENOINFO;
}

static unw_accessors_t gt_sunw_accessors = {
    .find_proc_info = gt_sunw_find_proc_info,
    .put_unwind_info = gt_sunw_put_unwind_info,
    .get_dyn_info_list_addr = gt_sunw_dyn_list,
    .access_mem = gt_sunw_access_mem,
    .access_reg = gt_sunw_access_reg,
    .access_fpreg = gt_sunw_access_fpreg,
    .resume = gt_sunw_resume,
    .get_proc_name = gt_sunw_proc_name,
};

int gt_sunw_init(void)
{
    gt_u.pid = getpid();
    if (gt_u.as)
        return 0;
    size_t len = (size_t)GT_SUNW_SLOTS * GT_SUNW_PAGE + GT_SUNW_MEMOS * sizeof(struct gt_sunw_memo) + GT_SUNW_SPAN;
    if (gt_smods_init() < 0)
        return -1;
    unsigned char *mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (mem == MAP_FAILED)
        return -1;
    unw_addr_space_t as = unw_create_addr_space(&gt_sunw_accessors, 0);
    if (!as) {
        munmap(mem, len);
        return -1;
    }
    /* the rules found for a pc are kept (only the sampler's thread walks):
     * a walk reads its stack's pages and no table again; each frame still
     * masks signals around the cache's lock, which the memos spare */
    unw_set_caching_policy(as, UNW_CACHE_PER_THREAD);
    gt_u.pages = mem;
    gt_u.memos = (struct gt_sunw_memo *)(mem + (size_t)GT_SUNW_SLOTS * GT_SUNW_PAGE);
    gt_u.copy = (unsigned char *)(gt_u.memos + GT_SUNW_MEMOS);
    gt_u.as = as;
    return 0;
}

void gt_sunw_after_fork_child(void)
{
    gt_u.pid = getpid();
    gt_smods_after_fork_child();
    if (gt_u.as) {
        unw_flush_cache(gt_u.as, 0, 0);
        for (uint32_t i = 0; i < GT_SUNW_MEMOS; i++)
            gt_u.memos[i].n = 0;
    }
}

/* The memo of (pc, sp), when its stack words are all as they were. */
static int gt_sunw_memo_holds(const struct gt_sunw_memo *m, uintptr_t pc, uintptr_t sp)
{
    if (!m->n || m->pc != pc || m->sp != sp)
        return 0;
    if (m->span && gt_sunw_copy(sp, gt_u.copy, m->span) < 0)
        return 0;
    for (uint32_t i = 0; i < m->nw; i++)
        if (memcmp(gt_u.copy + (size_t)m->at[i] * 8, &m->val[i], 8) != 0)
            return 0;
    return 1;
}

/* The memo for (pc, sp): the one of its set that holds it, else the
 * set's empty one, else the one used least lately. */
static struct gt_sunw_memo *gt_sunw_memo_of(uintptr_t pc, uintptr_t sp)
{
    uint64_t h = ((uint64_t)pc * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)sp * 0xC2B2AE3D27D4EB4Full);
    struct gt_sunw_memo *set = &gt_u.memos[(size_t)((h >> 32) % GT_SUNW_SETS) * GT_SUNW_WAYS], *pick = set;
    for (uint32_t w = 0; w < GT_SUNW_WAYS; w++) {
        if (set[w].n && set[w].pc == pc && set[w].sp == sp)
            return &set[w];
        if (!set[w].n ? pick->n != 0 : pick->n && (int32_t)(set[w].used - pick->used) < 0)
            pick = &set[w];
    }
    return pick;
}

/* Whether r is a return address: in a module's code, right after a call
 * (e8 rel32, or ff /2 through a register or memory, 2 to 7 bytes). */
static int gt_sunw_is_return(uintptr_t r)
{
    unsigned char b[8];
    if (r < 8 || !gt_smods_find(r - 1) || gt_sunw_read(r - 8, b, 8) < 0)
        return 0;
    if (b[3] == 0xe8) /* r - 5 */
        return 1;
    for (int len = 2; len <= 7; len++)
        if (b[8 - len] == 0xff && (b[9 - len] & 0x38) == 0x10)
            return 1;
    return 0;
}

/* Where a call that returns to r goes: its e8 rel32 target, through a
 * PLT entry to the GOT's address (jmp *GOT, after endbr64 and bnd where
 * present); 0 for an indirect call. */
static uintptr_t gt_sunw_callee(uintptr_t r)
{
    int32_t rel;
    unsigned char op, plt[16];
    if (gt_sunw_read(r - 5, &op, 1) < 0 || op != 0xe8 || gt_sunw_read(r - 4, &rel, 4) < 0)
        return 0;
    uintptr_t t = r + (intptr_t)rel;
    if (gt_sunw_read(t, plt, sizeof(plt)) < 0)
        return t;
    size_t k = memcmp(plt, "\xf3\x0f\x1e\xfa", 4) == 0 ? 4 : 0;
    k += plt[k] == 0xf2; /* bnd */
    if (plt[k] == 0xff && plt[k + 1] == 0x25) {
        memcpy(&rel, plt + k + 2, 4);
        uintptr_t got = t + k + 6 + (intptr_t)rel, to;
        if (gt_sunw_read(got, &to, sizeof(to)) == 0)
            return to;
    }
    return t;
}

/* How far above its stack pointer at a call a function's rbp lies, from
 * its prologue: [endbr64] push rbp; mov rbp,rsp; then pushes of saved
 * registers and sub rsp (what gcc and clang emit with frame pointers, -O0
 * included). -1 when the prologue is not that. */
static long gt_sunw_frame_size(uintptr_t start)
{
    unsigned char c[40];
    if (gt_sunw_read(start, c, sizeof(c)) < 0)
        return -1;
    size_t k = memcmp(c, "\xf3\x0f\x1e\xfa", 4) == 0 ? 4 : 0;
    if (c[k] != 0x55 || !(memcmp(c + k + 1, "\x48\x89\xe5", 3) == 0 || memcmp(c + k + 1, "\x48\x8b\xec", 3) == 0))
        return -1;
    long size = 0;
    for (k += 4; k + 7 <= sizeof(c);) {
        if (c[k] >= 0x50 && c[k] <= 0x57) {
            size += 8, k += 1;
        } else if (c[k] == 0x41 && c[k + 1] >= 0x50 && c[k + 1] <= 0x57) {
            size += 8, k += 2;
        } else if (c[k] == 0x48 && c[k + 1] == 0x83 && c[k + 2] == 0xec) {
            return size + c[k + 3];
        } else if (c[k] == 0x48 && c[k + 1] == 0x81 && c[k + 2] == 0xec) {
            int32_t n;
            memcpy(&n, c + k + 3, 4);
            return n < 0 ? -1 : size + n;
        } else {
            return size; /* no sub: the pushes alone */
        }
    }
    return -1;
}

/* The frame at sp (its function starting at start) finds its own through
 * rbp, which no callee saved, so rbp still holds it: the frame base,
 * where the caller's rbp and this frame's return address lie above its
 * locals, as far above sp as the function's prologue put it. Else the
 * lowest word pair above sp whose second returns from a call of this
 * very function (or of its PLT entry). Stale return addresses lie among
 * the locals (the frames of calls made before), and a tail call or a
 * function split in parts breaks the second test, so nothing else is
 * guessed: none found ends the walk, which is better than a wrong one.
 * 0 when none. */
static uintptr_t gt_sunw_guess_rbp(uintptr_t sp, uintptr_t start)
{
    if (!start)
        return 0;
    long size = gt_sunw_frame_size(start);
    uintptr_t r, callee;
    /* its return address follows a call of it, or one that cannot be
     * followed (an indirect call); a direct call of another function is
     * a frame further up (a caller's, where this one was reached by a
     * jump: a tail call, a function split in parts) */
    if (size >= 0 && gt_sunw_read(sp + (uintptr_t)size + 8, &r, sizeof(r)) == 0 && gt_sunw_is_return(r) &&
        ((callee = gt_sunw_callee(r)) == start || !callee))
        return sp + (uintptr_t)size;
    for (uintptr_t a = (sp + 7) & ~(uintptr_t)7; a < sp + 16384; a += 8) {
        if (gt_sunw_read(a + 8, &r, sizeof(r)) < 0)
            break;
        if (gt_sunw_is_return(r) && gt_sunw_callee(r) == start)
            return a;
    }
    return 0;
}

/* One walk from the registers in gt_u; the frames after ips[0]. *top is
 * the stack pointer of the last frame found. */
static uint32_t gt_sunw_walk(uintptr_t *ips, uint32_t max, uintptr_t *top)
{
    unw_cursor_t c;
    uint32_t n = 1;
    *top = gt_u.sp;
    gt_u.wanted_rbp = 0;
    if (unw_init_remote(&c, gt_u.as, NULL) < 0)
        return n;
    while (n < max && unw_step(&c) > 0) {
        unw_word_t ip, csp;
        if (unw_get_reg(&c, UNW_REG_IP, &ip) < 0 || !ip || unw_get_reg(&c, UNW_REG_SP, &csp) < 0)
            break;
        /* a frame always lies above its callee's: anything else is a
         * stack that changed, or rules that went wrong */
        if ((uintptr_t)csp <= *top)
            break;
        *top = (uintptr_t)csp;
        ips[n++] = (uintptr_t)ip;
    }
    return n;
}

uint32_t gt_sunw_stack(uintptr_t sp, uintptr_t pc, uintptr_t *ips, uint32_t max)
{
    if (!max)
        return 0;
    ips[0] = pc;
    if (!gt_u.as || !sp)
        return 1;
    if (++gt_u.walk == 0)
        gt_u.walk = 1; /* 0 marks an empty slot */
    if (gt_smods_rescanned()) {
        unw_flush_cache(gt_u.as, 0, 0);
        for (uint32_t i = 0; i < GT_SUNW_MEMOS; i++)
            gt_u.memos[i].n = 0;
    }
    struct gt_sunw_memo *memo = gt_sunw_memo_of(pc, sp);
    memo->used = gt_u.walk;
    if (max == GT_SUNW_MAX && gt_sunw_memo_holds(memo, pc, sp)) {
        memcpy(ips, memo->ips, memo->n * sizeof(*ips));
        return memo->n;
    }
    memo->n = memo->nw = memo->span = 0;
    memo->pc = pc;
    memo->sp = sp;
    memo->ok = 1;
    gt_u.rec = memo;
    gt_u.sp = sp;
    gt_u.pc = pc;
    gt_u.rbp = 0;
    uintptr_t top;
    uint32_t n = gt_sunw_walk(ips, max, &top);
    /* stopped for rbp (code built -O0, or with frame pointers, under
     * libc functions that never touch it): found from the stack, once */
    unw_proc_info_t pi;
    if (gt_u.wanted_rbp && n < max &&
        (gt_u.rbp = gt_sunw_guess_rbp(top, gt_sunw_find_proc_info(gt_u.as, ips[n - 1] - (n > 1), &pi, 0, NULL) == 0
                                               ? (uintptr_t)pi.start_ip : 0))) {
        uint32_t m = gt_sunw_walk(ips, max, &top);
        if (m <= n)
            m = gt_sunw_walk(ips, n, &top); /* the first walk's frames again, rbp as found */
        n = m;
    }
    gt_u.rec = NULL;
    if (memo->ok && max == GT_SUNW_MAX) {
        memcpy(memo->ips, ips, n * sizeof(*ips));
        memo->n = n;
    } else {
        memo->n = 0;
    }
    return n;
}

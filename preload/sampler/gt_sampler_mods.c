/* gt_sampler_mods.c: the modules a blocked thread's stack runs through,
 * with their .eh_frame_hdr search tables (gt_sampler_mods.h).
 *
 * Found without the loader's lock (dl_iterate_phdr takes the one the
 * program's dlopen takes): the mappings at file offset 0 in
 * /proc/self/maps, their ELF and program headers read from memory through
 * process_vm_readv on this process (a mapping that went away is an error,
 * not a fault). Sampler thread only. */
#include <elf.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "sampler/gt_sampler_mods.h"

#define GT_SMODS_PAGE 4096u
#define GT_SMODS_MAX 2048
#define GT_SMODS_MAPS_BUF 65536

static struct {
    pid_t pid;
    /* the modules, by lo; rebuilt when a pc is in none of them, at most
     * once per backoff (code outside any file: a JIT's, never found) */
    struct gt_smod *mods;
    size_t n;
    uint64_t next_scan_ns, backoff_ns;
    char *maps;
    int rescanned;             /* read again since gt_smods_rescanned */
} gt_m;

static uint64_t gt_smods_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* n bytes at addr, copied by the kernel: 0, or -1 where any is unmapped. */
static int gt_smods_copy(uintptr_t addr, void *out, size_t n)
{
    struct iovec local = {out, n}, remote = {(void *)addr, n};
    return process_vm_readv(gt_m.pid, &local, 1, &remote, 1, 0) == (ssize_t)n ? 0 : -1;
}

/* One mapping at file offset 0 (start): its module, when it is an ELF
 * object whose .eh_frame_hdr has the binary search table libunwind reads
 * (entries of two datarel sdata4, the count udata4). 0, or -1. */
static int gt_smods_probe(uintptr_t start, struct gt_smod *m)
{
    Elf64_Ehdr eh;
    if (gt_smods_copy(start, &eh, sizeof(eh)) < 0 || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
        eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_phentsize != sizeof(Elf64_Phdr) || !eh.e_phnum ||
        eh.e_phnum > 64)
        return -1;
    Elf64_Phdr ph[64];
    if (gt_smods_copy(start + eh.e_phoff, ph, eh.e_phnum * sizeof(Elf64_Phdr)) < 0)
        return -1;
    uintptr_t first = UINTPTR_MAX, lo = UINTPTR_MAX, hi = 0, hdr = 0;
    for (int i = 0; i < eh.e_phnum; i++) {
        if (ph[i].p_type == PT_LOAD && ph[i].p_vaddr < first)
            first = ph[i].p_vaddr;
        if (ph[i].p_type == PT_GNU_EH_FRAME)
            hdr = ph[i].p_vaddr;
    }
    if (first == UINTPTR_MAX || !hdr)
        return -1;
    /* the load bias: the first segment is mapped at start, page aligned */
    uintptr_t bias = start - (first & ~(uintptr_t)(GT_SMODS_PAGE - 1));
    for (int i = 0; i < eh.e_phnum; i++)
        if (ph[i].p_type == PT_LOAD && (ph[i].p_flags & PF_X)) {
            if (bias + ph[i].p_vaddr < lo)
                lo = bias + ph[i].p_vaddr;
            if (bias + ph[i].p_vaddr + ph[i].p_memsz > hi)
                hi = bias + ph[i].p_vaddr + ph[i].p_memsz;
        }
    /* version 1, eh_frame_ptr (4 bytes in every encoding we accept), the
     * count udata4 (0x03), the table datarel|sdata4 (0x3b) */
    unsigned char h[12];
    if (lo >= hi || gt_smods_copy(bias + hdr, h, sizeof(h)) < 0 || h[0] != 1 ||
        ((h[1] & 0x0f) != 0x0b && (h[1] & 0x0f) != 0x03) || h[2] != 0x03 || h[3] != 0x3b)
        return -1;
    uint32_t count;
    memcpy(&count, h + 8, 4);
    m->lo = lo;
    m->hi = hi;
    m->segbase = bias + hdr;
    m->table = bias + hdr + 12;
    m->table_len = count; /* 8 bytes an entry: one word */
    m->mapped = 0;
    return 0;
}

static uint8_t gt_smods_kind(const char *path)
{
    static const char *const cuda[] = {"libcuda.so", "libcudart.so", "libcupti.so", "libnvidia-"};
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    for (size_t i = 0; i < sizeof(cuda) / sizeof(cuda[0]); i++)
        if (strncmp(b, cuda[i], strlen(cuda[i])) == 0)
            return GT_SMOD_CUDA;
    if (strncmp(path, "/lib/", 5) == 0 || strncmp(path, "/lib64/", 7) == 0 || strncmp(path, "/usr/lib/", 9) == 0 ||
        strncmp(path, "/usr/lib64/", 11) == 0)
        return GT_SMOD_SYSTEM;
    return GT_SMOD_OTHER;
}

static int gt_smods_cmp(const void *a, const void *b)
{
    const struct gt_smod *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* The modules, afresh from /proc/self/maps (read with read(2) into a
 * buffer of ours: no stdio, no allocation). */
static void gt_smods_scan(void)
{
    int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    size_t n = 0, have = 0;
    for (;;) {
        ssize_t got = read(fd, gt_m.maps + have, GT_SMODS_MAPS_BUF - 1 - have);
        if (got <= 0)
            break;
        have += (size_t)got;
        gt_m.maps[have] = 0;
        char *line = gt_m.maps, *nl;
        while ((nl = strchr(line, '\n'))) {
            *nl = 0;
            /* start-end perms offset dev inode path */
            char *p;
            uintptr_t start = (uintptr_t)strtoull(line, &p, 16);
            if (*p == '-') {
                strtoull(p + 1, &p, 16);
                while (*p == ' ')
                    p++;
                int readable = p[0] == 'r', exec = p[2] == 'x';
                p += 4;
                unsigned long long off = strtoull(p, &p, 16);
                /* dev, inode, then the path */
                for (int f = 0; f < 2 && *p; f++) {
                    while (*p == ' ')
                        p++;
                    while (*p && *p != ' ')
                        p++;
                }
                while (*p == ' ')
                    p++;
                if (readable && off == 0 && (*p == '/' || strcmp(p, "[vdso]") == 0) && n < GT_SMODS_MAX &&
                    gt_smods_probe(start, &gt_m.mods[n]) == 0)
                    gt_m.mods[n++].kind = gt_smods_kind(p);
                /* a module is one whose code is mapped where its headers
                 * say (not a file merely mapped to be read): its
                 * executable mapping follows its headers' closely */
                for (size_t k = n; exec && k-- > 0 && k + 4 >= n;)
                    if (gt_m.mods[k].lo <= start && start < gt_m.mods[k].hi)
                        gt_m.mods[k].mapped = 1;
            }
            line = nl + 1;
        }
        /* a line cut by the buffer's end goes on in the next read */
        have = strlen(line);
        memmove(gt_m.maps, line, have);
        if (have == GT_SMODS_MAPS_BUF - 1)
            have = 0; /* a line longer than the buffer: not one of ours */
    }
    close(fd);
    /* what was found with the mappings before may not hold: forgotten
     * before the next walk (not inside libunwind's step) */
    gt_m.rescanned = 1;
    size_t kept = 0;
    for (size_t k = 0; k < n; k++)
        if (gt_m.mods[k].mapped)
            gt_m.mods[kept++] = gt_m.mods[k];
    n = kept;
    qsort(gt_m.mods, n, sizeof(*gt_m.mods), gt_smods_cmp);
    gt_m.n = n;
}

const struct gt_smod *gt_smods_find(uintptr_t ip)
{
    size_t lo = 0, hi = gt_m.n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (gt_m.mods[mid].lo <= ip)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo && ip < gt_m.mods[lo - 1].hi ? &gt_m.mods[lo - 1] : NULL;
}

/* The module of ip; a pc in none rescans the mappings (a library loaded
 * since), each fruitless rescan waiting twice as long for the next. */
const struct gt_smod *gt_smods_of(uintptr_t ip)
{
    const struct gt_smod *m = gt_smods_find(ip);
    if (m)
        return m;
    uint64_t now = gt_smods_now();
    if (now < gt_m.next_scan_ns)
        return NULL;
    gt_smods_scan();
    m = gt_smods_find(ip);
    gt_m.backoff_ns = m ? 0 : gt_m.backoff_ns ? gt_m.backoff_ns * 2 : 1000000000ull;
    if (gt_m.backoff_ns > 64000000000ull)
        gt_m.backoff_ns = 64000000000ull;
    gt_m.next_scan_ns = now + gt_m.backoff_ns;
    return m;
}

int gt_smods_init(void)
{
    gt_m.pid = getpid();
    if (gt_m.mods)
        return 0;
    size_t len = GT_SMODS_MAX * sizeof(struct gt_smod) + GT_SMODS_MAPS_BUF;
    void *mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (mem == MAP_FAILED)
        return -1;
    gt_m.mods = mem;
    gt_m.maps = (char *)(gt_m.mods + GT_SMODS_MAX);
    return 0;
}

void gt_smods_after_fork_child(void)
{
    gt_m.pid = getpid();
}

int gt_smods_rescanned(void)
{
    int r = gt_m.rescanned;
    gt_m.rescanned = 0;
    return r;
}

/* gt_symbols.c: symbolization from each module's own ELF symbol table.
 *
 * dladdr only knows exported symbols; reading .symtab (else .dynsym) from
 * the module's file also names static functions. Each module's table is
 * read once and kept sorted. Writer thread only (a mutex guards anyway). */
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "writer/gt_symbols.h"

struct gt_sym {
    uint64_t start, size;
    const char *name;
};

struct gt_module {
    char path[PATH_MAX];
    uintptr_t base;
    void *map;
    size_t map_len;
    struct gt_sym *syms;
    size_t nsyms;
    struct gt_module *next;
};

static struct gt_module *gt_modules;
static pthread_mutex_t gt_sym_lock = PTHREAD_MUTEX_INITIALIZER;

static int gt_sym_cmp(const void *a, const void *b)
{
    const struct gt_sym *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

/* Functions of one symbol table section; returns how many were added. */
static size_t gt_read_symtab(const uint8_t *img, size_t len, const Elf64_Shdr *sh, const Elf64_Shdr *strsh,
                             struct gt_sym *out)
{
    if (sh->sh_offset + sh->sh_size > len || strsh->sh_offset + strsh->sh_size > len || !sh->sh_entsize)
        return 0;
    const Elf64_Sym *syms = (const Elf64_Sym *)(img + sh->sh_offset);
    size_t n = sh->sh_size / sh->sh_entsize, k = 0;
    const char *strs = (const char *)img + strsh->sh_offset;
    for (size_t i = 0; i < n; i++) {
        if (ELF64_ST_TYPE(syms[i].st_info) != STT_FUNC || !syms[i].st_value || syms[i].st_shndx == SHN_UNDEF)
            continue;
        if (syms[i].st_name >= strsh->sh_size)
            continue;
        out[k].start = syms[i].st_value;
        out[k].size = syms[i].st_size;
        out[k].name = strs + syms[i].st_name;
        k++;
    }
    return k;
}

static void gt_load_symbols(struct gt_module *m)
{
    int fd = open(m->path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    struct stat st;
    if (fstat(fd, &st) != 0 || st.st_size < (off_t)sizeof(Elf64_Ehdr)) {
        close(fd);
        return;
    }
    size_t len = (size_t)st.st_size;
    uint8_t *img = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (img == MAP_FAILED)
        return;
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)img;
    if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
        eh->e_shoff == 0 || eh->e_shentsize != sizeof(Elf64_Shdr) ||
        eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr) > len) {
        munmap(img, len);
        return;
    }
    const Elf64_Shdr *sh = (const Elf64_Shdr *)(img + eh->e_shoff);
    /* .symtab has everything; .dynsym is the fallback for stripped files. */
    const Elf64_Shdr *tab = NULL;
    for (int want = SHT_SYMTAB; want && !tab; want = want == SHT_SYMTAB ? SHT_DYNSYM : 0)
        for (unsigned i = 0; i < eh->e_shnum; i++)
            if (sh[i].sh_type == (Elf64_Word)want && sh[i].sh_link < eh->e_shnum) {
                tab = &sh[i];
                break;
            }
    if (!tab || !tab->sh_entsize) {
        munmap(img, len);
        return;
    }
    size_t cap = tab->sh_size / tab->sh_entsize;
    struct gt_sym *syms = calloc(cap ? cap : 1, sizeof(*syms));
    if (!syms) {
        munmap(img, len);
        return;
    }
    size_t n = gt_read_symtab(img, len, tab, &sh[tab->sh_link], syms);
    qsort(syms, n, sizeof(*syms), gt_sym_cmp);
    m->map = img;
    m->map_len = len;
    m->syms = syms;
    m->nsyms = n;
}

/* Symbol values are file addresses: relative to the base for shared
 * objects and PIE, absolute (base 0) for fixed-address executables. */
static const char *gt_lookup(const struct gt_module *m, uint64_t addr)
{
    size_t lo = 0, hi = m->nsyms;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->syms[mid].start <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return NULL;
    /* Among symbols starting at or before addr, prefer one that contains it. */
    for (size_t i = lo; i-- > 0 && lo - i <= 16;) {
        const struct gt_sym *s = &m->syms[i];
        if (addr < s->start + s->size)
            return s->name;
    }
    const struct gt_sym *s = &m->syms[lo - 1];
    return s->size == 0 ? s->name : NULL;
}

static struct gt_module *gt_module_for(const char *path, uintptr_t base)
{
    for (struct gt_module *m = gt_modules; m; m = m->next)
        if (m->base == base && strcmp(m->path, path) == 0)
            return m;
    struct gt_module *m = calloc(1, sizeof(*m));
    if (!m)
        return NULL;
    snprintf(m->path, sizeof(m->path), "%s", path);
    m->base = base;
    gt_load_symbols(m);
    m->next = gt_modules;
    gt_modules = m;
    return m;
}

int gt_symbolize(uintptr_t ip, char *module, size_t module_len, uint64_t *offset, char *func, size_t func_len)
{
    func[0] = 0;
    module[0] = 0;
    Dl_info di;
    struct link_map *lm = NULL;
    if (!dladdr1((void *)ip, &di, (void **)&lm, RTLD_DL_LINKMAP) || !lm)
        return -1;
    char exe[PATH_MAX];
    const char *path = lm->l_name;
    if (!path || !path[0]) {
        /* The main program: the loader knows it by no name. */
        ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
        exe[n > 0 ? n : 0] = 0;
        path = exe;
    }
    snprintf(module, module_len, "%s", path);
    *offset = ip - lm->l_addr;
    pthread_mutex_lock(&gt_sym_lock);
    struct gt_module *m = gt_module_for(path, lm->l_addr);
    const char *name = m ? gt_lookup(m, ip - lm->l_addr) : NULL;
    if (!name)
        name = di.dli_sname;
    if (name)
        gt_demangle(name, func, func_len);
    pthread_mutex_unlock(&gt_sym_lock);
    return 0;
}

int gt_symbolize_return(uintptr_t ret, char *module, size_t module_len, uint64_t *offset, char *func,
                        size_t func_len)
{
    /* The return address may be the next line's first instruction, or lie
     * past the end of the caller when the call was its last instruction. */
    return gt_symbolize(ret - 1, module, module_len, offset, func, func_len);
}

typedef char *(*gt_cxa_demangle_fn)(const char *, char *, size_t *, int *);

static gt_cxa_demangle_fn gt_demangler(void)
{
    static gt_cxa_demangle_fn fn;
    static int tried;
    if (!tried) {
        tried = 1;
        fn = (gt_cxa_demangle_fn)dlsym(RTLD_DEFAULT, "__cxa_demangle");
        if (!fn) {
            /* Kept open for the life of the process: it is the demangler. */
            void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
            if (h)
                fn = (gt_cxa_demangle_fn)dlsym(h, "__cxa_demangle");
        }
    }
    return fn;
}

void gt_demangle(const char *name, char *out, size_t out_len)
{
    if (!out_len)
        return;
    gt_cxa_demangle_fn fn = strncmp(name, "_Z", 2) == 0 ? gt_demangler() : NULL;
    int status = -1;
    char *d = fn ? fn(name, NULL, NULL, &status) : NULL;
    snprintf(out, out_len, "%s", d && status == 0 ? d : name);
    free(d);
}

void gt_symbols_reset(void)
{
    pthread_mutex_lock(&gt_sym_lock);
    while (gt_modules) {
        struct gt_module *m = gt_modules;
        gt_modules = m->next;
        if (m->map)
            munmap(m->map, m->map_len);
        free(m->syms);
        free(m);
    }
    pthread_mutex_unlock(&gt_sym_lock);
}

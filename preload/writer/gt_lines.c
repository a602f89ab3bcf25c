/* gt_lines.c: source lines and inlined frames from DWARF, with libdw.
 *
 * One Dwfl per module file, reported at its own file addresses, so a
 * frame's offset (relative to the load base) is the address to look up;
 * built the first time a frame of that module is resolved and kept: the
 * binary may be gone or replaced by the time anyone reads the trace.
 *
 * Separate debug information is found the way gdb finds it, by build-id
 * (DIR/.build-id/xx/rest.debug) then by .gnu_debuglink (next to the file,
 * in its .debug/, under DIR plus the file's directory), DIR being
 * /usr/lib/debug and GPUTRACE_DEBUG_DIR. Our own callback rather than
 * dwfl_standard_find_debuginfo: that one asks debuginfod servers when
 * DEBUGINFOD_URLS is set, and the tracer never goes to the network. */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "writer/gt_lines.h"
#include "writer/gt_symbols.h"

/* A compile unit's functions by address, built the first time one of its
 * frames is resolved: dwarf_getscopes walks the whole unit on each
 * lookup, which made a big unit cost hundreds of microseconds a frame. */
struct gt_dw_kid {
    Dwarf_Addr lo, hi;
    Dwarf_Off off;
};

struct gt_dw_fn {
    Dwarf_Addr lo, hi;
    Dwarf_Off off;       /* the subprogram's DIE */
    /* Its direct children that hold code (inlined subroutines, blocks),
     * by range, listed the first time it is looked into: a function's
     * other children (call sites, variables) can be thousands. */
    struct gt_dw_kid *kids;
    int nkids;           /* -1: not listed yet */
};

struct gt_dw_cu {
    struct gt_dw_cu *next;
    Dwarf_Off off;       /* the unit's DIE */
    struct gt_dw_fn *fns;
    size_t n, cap;
};

struct gt_dw_module {
    struct gt_dw_module *next;
    char path[PATH_MAX];
    Dwfl *dwfl;          /* NULL: the file could not be read */
    Dwfl_Module *mod;
    struct gt_dw_cu *cus;
};

static struct gt_dw_module *gt_dw_modules;
static pthread_mutex_t gt_dw_lock = PTHREAD_MUTEX_INITIALIZER;

static int gt_try_open(const char *path, char **found)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd >= 0)
        *found = strdup(path);
    return fd;
}

static int gt_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
                             const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
                             char **debuginfo_file_name)
{
    (void)userdata, (void)modname, (void)base, (void)debuglink_crc;
    const char *env = getenv("GPUTRACE_DEBUG_DIR");
    const char *roots[2] = {env && env[0] == '/' ? env : NULL, "/usr/lib/debug"};
    char p[PATH_MAX];
    const unsigned char *id;
    GElf_Addr id_vaddr;
    int id_len = dwfl_module_build_id(mod, &id, &id_vaddr);
    for (int r = 0; r < 2 && id_len > 1; r++) {
        if (!roots[r])
            continue;
        int n = snprintf(p, sizeof(p), "%s/.build-id/%02x/", roots[r], id[0]);
        for (int i = 1; i < id_len && n > 0 && (size_t)n < sizeof(p) - 8; i++)
            n += snprintf(p + n, sizeof(p) - (size_t)n, "%02x", id[i]);
        snprintf(p + n, sizeof(p) - (size_t)n, ".debug");
        int fd = gt_try_open(p, debuginfo_file_name);
        if (fd >= 0)
            return fd;
    }
    if (!debuglink_file || !file_name)
        return -1;
    char dir[PATH_MAX];
    snprintf(dir, sizeof(dir), "%s", file_name);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = 0;
    else
        snprintf(dir, sizeof(dir), ".");
    const char *fmts[2] = {"%s/%s", "%s/.debug/%s"};
    for (int i = 0; i < 2; i++) {
        if (snprintf(p, sizeof(p), fmts[i], dir, debuglink_file) >= (int)sizeof(p))
            continue;
        if (strcmp(p, file_name) == 0)
            continue;
        int fd = gt_try_open(p, debuginfo_file_name);
        if (fd >= 0)
            return fd;
    }
    for (int r = 0; r < 2; r++) {
        if (!roots[r])
            continue;
        if (snprintf(p, sizeof(p), "%s%s/%s", roots[r], dir, debuglink_file) >= (int)sizeof(p))
            continue;
        int fd = gt_try_open(p, debuginfo_file_name);
        if (fd >= 0)
            return fd;
    }
    return -1;
}

static const Dwfl_Callbacks gt_dw_callbacks = {
    .find_debuginfo = gt_find_debuginfo,
    .section_address = dwfl_offline_section_address,
};

static struct gt_dw_module *gt_dw_module_for(const char *path)
{
    for (struct gt_dw_module *m = gt_dw_modules; m; m = m->next)
        if (strcmp(m->path, path) == 0)
            return m;
    struct gt_dw_module *m = calloc(1, sizeof(*m));
    if (!m)
        return NULL;
    snprintf(m->path, sizeof(m->path), "%s", path);
    m->dwfl = dwfl_begin(&gt_dw_callbacks);
    if (m->dwfl) {
        /* Base 0: the module sits at its file addresses (a shared object
         * or PIE from 0, a fixed executable where it was linked). */
        m->mod = dwfl_report_elf(m->dwfl, path, path, -1, 0, false);
        dwfl_report_end(m->dwfl, NULL, NULL);
        if (!m->mod) {
            dwfl_end(m->dwfl);
            m->dwfl = NULL;
        }
    }
    m->next = gt_dw_modules;
    gt_dw_modules = m;
    return m;
}

/* The name a DWARF subprogram or inlined subroutine was declared with,
 * demangled when it has a linkage name. */
static void gt_die_name(Dwarf_Die *die, char *out, size_t len)
{
    Dwarf_Attribute a;
    const char *name = NULL;
    if (dwarf_attr_integrate(die, DW_AT_linkage_name, &a) || dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a))
        name = dwarf_formstring(&a);
    if (!name && dwarf_attr_integrate(die, DW_AT_name, &a))
        name = dwarf_formstring(&a);
    if (name)
        gt_demangle(name, out, len);
    else
        snprintf(out, len, "?");
}

static void gt_cu_add(struct gt_dw_cu *c, Dwarf_Addr lo, Dwarf_Addr hi, Dwarf_Off off)
{
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 64;
        struct gt_dw_fn *f = realloc(c->fns, cap * sizeof(*f));
        if (!f)
            return;
        c->fns = f;
        c->cap = cap;
    }
    c->fns[c->n++] = (struct gt_dw_fn){lo, hi, off, NULL, -1};
}

/* The subprograms under parent with code, namespaces and classes entered. */
static void gt_cu_collect(struct gt_dw_cu *c, Dwarf_Die *parent, int depth)
{
    Dwarf_Die child;
    if (depth > 16 || dwarf_child(parent, &child) != 0)
        return;
    do {
        int tag = dwarf_tag(&child);
        if (tag == DW_TAG_subprogram) {
            Dwarf_Addr base, lo, hi;
            for (ptrdiff_t o = 0; (o = dwarf_ranges(&child, o, &base, &lo, &hi)) > 0;)
                gt_cu_add(c, lo, hi, dwarf_dieoffset(&child));
        } else if (tag == DW_TAG_namespace || tag == DW_TAG_class_type || tag == DW_TAG_structure_type ||
                   tag == DW_TAG_union_type || tag == DW_TAG_module)
            gt_cu_collect(c, &child, depth + 1);
    } while (dwarf_siblingof(&child, &child) == 0);
}

static int gt_fn_cmp(const void *a, const void *b)
{
    const struct gt_dw_fn *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static struct gt_dw_cu *gt_cu_for(struct gt_dw_module *m, Dwarf_Die *cudie)
{
    Dwarf_Off off = dwarf_dieoffset(cudie);
    for (struct gt_dw_cu *c = m->cus; c; c = c->next)
        if (c->off == off)
            return c;
    struct gt_dw_cu *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    c->off = off;
    gt_cu_collect(c, cudie, 0);
    qsort(c->fns, c->n, sizeof(*c->fns), gt_fn_cmp);
    c->next = m->cus;
    m->cus = c;
    return c;
}

/* The function holding addr: the last range starting at or before it
 * that contains it. */
static int gt_is_code_scope(int tag)
{
    return tag == DW_TAG_inlined_subroutine || tag == DW_TAG_lexical_block || tag == DW_TAG_try_block ||
           tag == DW_TAG_catch_block;
}

static void gt_fn_list_kids(struct gt_dw_fn *f, Dwarf_Die *fn)
{
    f->nkids = 0;
    size_t cap = 0;
    Dwarf_Die child;
    if (dwarf_child(fn, &child) != 0)
        return;
    do {
        if (!gt_is_code_scope(dwarf_tag(&child)))
            continue;
        Dwarf_Addr base, lo, hi;
        for (ptrdiff_t o = 0; (o = dwarf_ranges(&child, o, &base, &lo, &hi)) > 0;) {
            if ((size_t)f->nkids == cap) {
                cap = cap ? cap * 2 : 8;
                struct gt_dw_kid *k = realloc(f->kids, cap * sizeof(*k));
                if (!k)
                    return;
                f->kids = k;
            }
            f->kids[f->nkids++] = (struct gt_dw_kid){lo, hi, dwarf_dieoffset(&child)};
        }
    } while (dwarf_siblingof(&child, &child) == 0);
}

static struct gt_dw_fn *gt_cu_function(struct gt_dw_cu *c, Dwarf_Addr addr)
{
    size_t lo = 0, hi = c->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->fns[mid].lo <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo; i-- > 0 && lo - i <= 8;)
        if (addr < c->fns[i].hi)
            return &c->fns[i];
    return NULL;
}

#define GT_INLINE_DEPTH 32

static int gt_resolve(struct gt_dw_module *m, uint64_t offset, struct gt_line *out, int max)
{
    Dwarf_Addr bias = 0;
    Dwarf_Die *cu = dwfl_module_addrdie(m->mod, offset, &bias);
    if (!cu)
        return 0;
    Dwarf_Addr addr = offset - bias;
    Dwarf_Line *ln = dwarf_getsrc_die(cu, addr);
    if (!ln)
        return 0;
    /* The innermost position: the line table's row for the instruction. */
    const char *file = dwarf_linesrc(ln, NULL, NULL);
    int line = 0, col = 0;
    dwarf_lineno(ln, &line);
    dwarf_linecol(ln, &col);
    Dwarf_Files *files = NULL;
    size_t nfiles = 0;
    dwarf_getsrcfiles(cu, &files, &nfiles);

    /* The function, then the inlined subroutines holding addr, outermost
     * first, going down through lexical blocks. */
    Dwarf_Die fn, inl[GT_INLINE_DEPTH];
    int have_fn = 0, ninl = 0;
    struct gt_dw_cu *c = gt_cu_for(m, cu);
    struct gt_dw_fn *fe = c ? gt_cu_function(c, addr) : NULL;
    Dwarf *dw = dwarf_cu_getdwarf(cu->cu);
    if (fe && dw && dwarf_offdie(dw, fe->off, &fn)) {
        have_fn = 1;
        Dwarf_Die cur = fn, child;
        if (fe->nkids < 0)
            gt_fn_list_kids(fe, &fn);
        /* The function's own level from its list. */
        for (int i = 0; i < fe->nkids; i++)
            if (fe->kids[i].lo <= addr && addr < fe->kids[i].hi && dwarf_offdie(dw, fe->kids[i].off, &child)) {
                if (dwarf_tag(&child) == DW_TAG_inlined_subroutine)
                    inl[ninl++] = child;
                cur = child;
                break;
            }
        for (int guard = 0; cur.addr != fn.addr && guard < 256 && dwarf_child(&cur, &child) == 0; guard++) {
            int found = 0;
            do {
                int tag = dwarf_tag(&child);
                if (gt_is_code_scope(tag) && dwarf_haspc(&child, addr) == 1) {
                    if (tag == DW_TAG_inlined_subroutine && ninl < GT_INLINE_DEPTH)
                        inl[ninl++] = child;
                    cur = child;
                    found = 1;
                    break;
                }
            } while (dwarf_siblingof(&child, &child) == 0);
            if (!found)
                break;
        }
    }

    int n = 0;
    /* Each inlined subroutine, innermost first, is a frame at the current
     * position; its call site (DW_AT_call_file/line/column) becomes the
     * position of the function it was inlined into. */
    for (int i = ninl; i-- > 0 && n < max - 1;) {
        struct gt_line *f = &out[n++];
        snprintf(f->file, sizeof(f->file), "%s", file ? file : "");
        f->line = line;
        f->column = col;
        f->inlined = 1;
        gt_die_name(&inl[i], f->func, sizeof(f->func));
        Dwarf_Attribute a;
        Dwarf_Word v = 0;
        file = NULL;
        if (dwarf_attr(&inl[i], DW_AT_call_file, &a) && dwarf_formudata(&a, &v) == 0 && files)
            file = dwarf_filesrc(files, v, NULL, NULL);
        line = col = 0;
        if (dwarf_attr(&inl[i], DW_AT_call_line, &a) && dwarf_formudata(&a, &v) == 0)
            line = (int)v;
        if (dwarf_attr(&inl[i], DW_AT_call_column, &a) && dwarf_formudata(&a, &v) == 0)
            col = (int)v;
    }
    struct gt_line *f = &out[n++];
    snprintf(f->file, sizeof(f->file), "%s", file ? file : "");
    f->line = line;
    f->column = col;
    f->inlined = 0;
    f->func[0] = 0;
    /* The real function's DWARF name, for modules whose symbol table is
     * stripped (the writer prefers the symbol table's). */
    if (have_fn)
        gt_die_name(&fn, f->func, sizeof(f->func));
    return n;
}

/* The system's own libraries (libc, libstdc++, the loader, an installed
 * libpython...) are never the user's site, and reading their separate
 * debug files when installed cost the writer 100 ms and more at the first
 * frame (libc's alone), time it does not drain the rings: they keep
 * function + offset. */
static int gt_system_library(const char *path)
{
    static const char *const dirs[] = {"/lib/", "/lib64/", "/usr/lib/", "/usr/lib64/", "/usr/lib32/", "/lib32/"};
    for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
        if (strncmp(path, dirs[i], strlen(dirs[i])) == 0)
            return 1;
    return 0;
}

int gt_lines_resolve(const char *path, uint64_t offset, struct gt_line *out, int max)
{
    if (!path || !path[0] || max < 1 || gt_system_library(path))
        return 0;
    pthread_mutex_lock(&gt_dw_lock);
    struct gt_dw_module *m = gt_dw_module_for(path);
    int n = m && m->dwfl ? gt_resolve(m, offset, out, max) : 0;
    pthread_mutex_unlock(&gt_dw_lock);
    return n;
}

void gt_lines_reset(void)
{
    pthread_mutex_lock(&gt_dw_lock);
    while (gt_dw_modules) {
        struct gt_dw_module *m = gt_dw_modules;
        gt_dw_modules = m->next;
        if (m->dwfl)
            dwfl_end(m->dwfl);
        while (m->cus) {
            struct gt_dw_cu *c = m->cus;
            m->cus = c->next;
            for (size_t i = 0; i < c->n; i++)
                free(c->fns[i].kids);
            free(c->fns);
            free(c);
        }
        free(m);
    }
    pthread_mutex_unlock(&gt_dw_lock);
}

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

struct gt_dw_module {
    struct gt_dw_module *next;
    char path[PATH_MAX];
    Dwfl *dwfl;          /* NULL: the file could not be read */
    Dwfl_Module *mod;
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

    Dwarf_Die *scopes = NULL;
    int nscopes = dwarf_getscopes(cu, addr, &scopes);
    if (nscopes > 0) {
        /* dwarf_getscopes follows an inlined subroutine into its abstract
         * definition; the functions it was inlined into are the DIE's
         * physical parents. */
        Dwarf_Die *chain = NULL;
        int nchain = dwarf_getscopes_die(&scopes[0], &chain);
        if (nchain > 0) {
            free(scopes);
            scopes = chain;
            nscopes = nchain;
        } else
            free(chain);
    }
    int n = 0;
    /* Each inlined subroutine is a frame at the current position; its call
     * site (DW_AT_call_file/line/column) becomes the position of the
     * function it was inlined into. */
    for (int i = 0; i < nscopes && n < max - 1; i++) {
        if (dwarf_tag(&scopes[i]) != DW_TAG_inlined_subroutine)
            continue;
        struct gt_line *f = &out[n++];
        snprintf(f->file, sizeof(f->file), "%s", file ? file : "");
        f->line = line;
        f->column = col;
        f->inlined = 1;
        gt_die_name(&scopes[i], f->func, sizeof(f->func));
        Dwarf_Attribute a;
        Dwarf_Word v = 0;
        file = NULL;
        if (dwarf_attr(&scopes[i], DW_AT_call_file, &a) && dwarf_formudata(&a, &v) == 0 && files)
            file = dwarf_filesrc(files, v, NULL, NULL);
        line = col = 0;
        if (dwarf_attr(&scopes[i], DW_AT_call_line, &a) && dwarf_formudata(&a, &v) == 0)
            line = (int)v;
        if (dwarf_attr(&scopes[i], DW_AT_call_column, &a) && dwarf_formudata(&a, &v) == 0)
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
    /* The innermost subprogram holds the inlined chain. */
    for (int i = 0; i < nscopes; i++)
        if (dwarf_tag(&scopes[i]) == DW_TAG_subprogram) {
            gt_die_name(&scopes[i], f->func, sizeof(f->func));
            break;
        }
    free(scopes);
    return n;
}

int gt_lines_resolve(const char *path, uint64_t offset, struct gt_line *out, int max)
{
    if (!path || !path[0] || max < 1)
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
        free(m);
    }
    pthread_mutex_unlock(&gt_dw_lock);
}

/* gt_site_nvcc.c: nvcc's launch plumbing in the user's own binary.
 *
 * A <<<>>> launch goes through code nvcc writes into the program: the
 * kernel's host-side wrapper (a host function with the kernel's own name
 * and parameters), `__wrapper__device_stub_*` for a template kernel, the
 * stub `__device_stub__*`, and the runtime header's `cudaLaunchKernel<T>`
 * and `__cudaLaunchKernel_helper`. Built as programs ship (-O2, -O3) these
 * are called, tail-called or inlined, so where they sit in a stack says
 * nothing: the frame after the stub may be the wrapper or the user's own
 * function. Each frame is judged by what it is instead: by its function's
 * name, or with DWARF by the file its code came from. The wrapper is known
 * by the launched kernels' names, which the trace holds. */
#include <stdlib.h>
#include <string.h>

#include "analysis/gt_site_nvcc.h"

static const char *gt_nvcc_base(const char *path)
{
    const char *b = strrchr(path, '/');
    return b ? b + 1 : path;
}

static int gt_nvcc_ends_with(const char *s, const char *end)
{
    size_t n = strlen(s), m = strlen(end);
    return n >= m && strcmp(s + n - m, end) == 0;
}

/* `fn` as a wrapper's and a kernel's names compare: without a compiler
 * clone's " [clone .isra.0]" and without the "void " a template kernel's
 * demangled name starts with (a kernel returns void). *params is where its
 * parameter list starts, the end when it has none (a DWARF name). */
static void gt_nvcc_norm(const char *fn, char *out, size_t len, size_t *params)
{
    if (strncmp(fn, "void ", 5) == 0)
        fn += 5;
    size_t n = strlen(fn);
    const char *clone = strstr(fn, " [clone ");
    if (clone)
        n = (size_t)(clone - fn);
    if (n >= len)
        n = len - 1;
    memcpy(out, fn, n);
    out[n] = 0;
    *params = n;
    if (n && out[n - 1] == ')') {
        int depth = 0;
        for (size_t i = n; i-- > 0;) {
            if (out[i] == ')')
                depth++;
            else if (out[i] == '(' && --depth == 0) {
                *params = i;
                break;
            }
        }
    }
}

/* The last component of a qualified name without parameters: a DWARF
 * DW_AT_name is not qualified ("k" for ns::k). */
static const char *gt_nvcc_unqualified(const char *name)
{
    const char *last = name;
    int depth = 0;
    for (const char *p = name; *p; p++) {
        if (*p == '<' || *p == '(')
            depth++;
        else if ((*p == '>' || *p == ')') && depth > 0)
            depth--;
        else if (depth == 0 && p[0] == ':' && p[1] == ':')
            last = p + 2;
    }
    return last;
}

static int gt_nvcc_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int gt_nvcc_has(char **list, size_t n, const char *name)
{
    return n && bsearch(&name, list, n, sizeof(*list), gt_nvcc_cmp) != NULL;
}

static int gt_nvcc_add(struct gt_nvcc *n, size_t *cap, const char *name)
{
    char norm[1024];
    size_t params;
    gt_nvcc_norm(name, norm, sizeof(norm), &params);
    if (n->n == *cap) {
        size_t c = *cap ? *cap * 2 : 64;
        char **f = realloc(n->full, c * sizeof(*f));
        if (!f)
            return -1;
        n->full = f;
        char **b = realloc(n->bare, c * sizeof(*b));
        if (!b)
            return -1;
        n->bare = b;
        *cap = c;
    }
    char *full = strdup(norm);
    norm[params] = 0;
    char *bare = strdup(gt_nvcc_unqualified(norm));
    if (!full || !bare) {
        free(full);
        free(bare);
        return -1;
    }
    n->full[n->n] = full;
    n->bare[n->n++] = bare;
    return 0;
}

int gt_nvcc_init(struct gt_nvcc *n, sqlite3 *db, int schema_version)
{
    memset(n, 0, sizeof(*n));
    /* Since version 4 a launch's kernel is a launch_configs row (a few per
     * kernel); before, the kernels view has one row per launch, on traces
     * of that age small enough. */
    const char *sql = schema_version >= 4 ? "SELECT DISTINCT COALESCE(s.demangled, s.value) FROM launch_configs c "
                                            "JOIN strings s ON s.id = c.name_id"
                                          : "SELECT DISTINCT name FROM kernels";
    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) != SQLITE_OK)
        return 0; /* no launches to read: no wrapper to know */
    size_t cap = 0;
    int rc = 0;
    while (rc == 0 && sqlite3_step(q) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(q, 0);
        if (name && name[0])
            rc = gt_nvcc_add(n, &cap, name);
    }
    sqlite3_finalize(q);
    if (n->n) {
        qsort(n->full, n->n, sizeof(*n->full), gt_nvcc_cmp);
        qsort(n->bare, n->n, sizeof(*n->bare), gt_nvcc_cmp);
    }
    return rc;
}

void gt_nvcc_free(struct gt_nvcc *n)
{
    for (size_t i = 0; i < n->n; i++) {
        free(n->full[i]);
        free(n->bare[i]);
    }
    free(n->full);
    free(n->bare);
    memset(n, 0, sizeof(*n));
}

/* The runtime header's C++ templates (cuda_runtime.h: cudaLaunchKernel<T>,
 * cudaMalloc<T>, ...): a template instance of a global function named
 * like the runtime's, "cuda" and a capital.
 * Their demangled names carry a return type: "cudaError cudaMalloc<float>(...)". */
static int gt_nvcc_runtime_template(const char *fn)
{
    const char *lt = strchr(fn, '<');
    const char *paren = strchr(fn, '(');
    if (!lt || (paren && paren < lt))
        return 0;
    const char *id = lt;
    while (id > fn && (id[-1] == '_' || (id[-1] >= 'a' && id[-1] <= 'z') || (id[-1] >= 'A' && id[-1] <= 'Z') ||
                       (id[-1] >= '0' && id[-1] <= '9')))
        id--;
    /* the runtime's names: cudaMalloc, cudaLaunchKernel, not cudaify */
    return (id == fn || id[-1] == ' ') && strncmp(id, "cuda", 4) == 0 && id[4] >= 'A' && id[4] <= 'Z';
}

static int gt_nvcc_is_wrapper(const struct gt_nvcc *n, const char *fn)
{
    char norm[1024];
    size_t params;
    gt_nvcc_norm(fn, norm, sizeof(norm), &params);
    if (norm[params]) /* a name with its parameters: the kernel's exactly */
        return gt_nvcc_has(n->full, n->n, norm);
    return gt_nvcc_has(n->bare, n->n, gt_nvcc_unqualified(norm));
}

int gt_nvcc_is_plumbing(const struct gt_nvcc *n, const char *fn, const char *file)
{
    if (fn && fn[0]) {
        if (strncmp(fn, "__device_stub__", 15) == 0 || strncmp(fn, "__wrapper__device_stub_", 23) == 0 ||
            strncmp(fn, "__cuda", 6) == 0 || gt_nvcc_runtime_template(fn) || gt_nvcc_is_wrapper(n, fn))
            return 1;
    }
    if (file) {
        const char *b = gt_nvcc_base(file);
        if (strcmp(b, "cuda_runtime.h") == 0 || strcmp(b, "device_functions.h") == 0 ||
            gt_nvcc_ends_with(b, ".stub.c"))
            return 1;
    }
    return 0;
}

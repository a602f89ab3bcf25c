/* gt_site.c: a call's site, from its stacks.
 *
 * Native only: the first frames that are the user's code. Frames in CUDA's
 * own libraries, the tracer, the C library, the Python interpreter and the
 * big frameworks say where the call went, not where it came from.
 *
 * With a Python stack: the Python frames first (file:line in function),
 * then the native frames between the interpreter and CUDA that say which
 * framework call got there (the innermost, and the one Python called). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/gt_fmt.h"
#include "base/gt_map.h"
#include "analysis/gt_site.h"

static const char *const gt_not_user[] = {
    "libcuda.so", "libcudart", "libcupti", "libgputrace", "libcublas", "libcudnn", "libnccl", "libcufft",
    "libcusparse", "libcurand", "libnvrtc", "libtorch", "libc10", "libc.so", "ld-linux", "libpython",
    "libstdc++", "libpthread",
};

/* Not the framework call either: plumbing between Python and CUDA. */
static const char *const gt_plumbing[] = {
    "libcuda.so", "libcudart", "libcupti", "libgputrace", "libc.so", "ld-linux", "libstdc++", "libpthread",
    "libffi", "_ctypes",
};

static const char *gt_base(const char *path)
{
    const char *base = strrchr(path, '/');
    return base ? base + 1 : path;
}

static int gt_in_list(const char *path, const char *const *list, size_t n)
{
    const char *base = gt_base(path);
    for (size_t i = 0; i < n; i++)
        if (strncmp(base, list[i], strlen(list[i])) == 0)
            return 1;
    return 0;
}

static int gt_is_user_module(const char *path)
{
    return !path || !gt_in_list(path, gt_not_user, sizeof(gt_not_user) / sizeof(gt_not_user[0]));
}

/* NVIDIA's runtime linked statically into a module (nvcc's default
 * -cudart static, CuPy's runtime module) is the CUDA library's code
 * wherever it is linked: its internal functions are named
 * libcudart_static_<hash>, its API functions cuda* carry no source lines. */
static int gt_is_static_cudart(sqlite3_stmt *frames)
{
    const char *fn = (const char *)sqlite3_column_text(frames, 2);
    if (!fn)
        return 0;
    if (strncmp(fn, "libcudart_static_", 17) == 0)
        return 1;
    return sqlite3_column_type(frames, 4) == SQLITE_NULL && strncmp(fn, "cuda", 4) == 0 && fn[4] >= 'A' &&
           fn[4] <= 'Z';
}

static int gt_is_interpreter(const char *path)
{
    const char *base = path ? gt_base(path) : "";
    return strncmp(base, "libpython", 9) == 0 || strncmp(base, "python", 6) == 0;
}

int gt_sites_init(struct gt_sites *s, sqlite3 *db, int schema_version)
{
    memset(s, 0, sizeof(*s));
    /* Before version 5 a frame's offset is its return address's: the
     * instruction after the call, often on the next line. */
    s->offset_less = schema_version < 5;
    snprintf(s->none.text, sizeof(s->none.text), "(no stack)");
    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(db, "SELECT max(stack_id) FROM stacks", -1, &q, NULL) != SQLITE_OK)
        return -1;
    if (sqlite3_step(q) == SQLITE_ROW)
        s->max_id = sqlite3_column_int64(q, 0);
    sqlite3_finalize(q);
    if (s->max_id < 0 || s->max_id > (1 << 26))
        s->max_id = 0;
    s->cache = calloc((size_t)s->max_id + 1, sizeof(*s->cache));
    if (!s->cache)
        return -1;
    /* Source lines since version 6. */
    const char *frames_sql = schema_version >= 6
                                 ? "SELECT module, offset, function, file, line FROM stack_frames "
                                   "WHERE stack_id = ? ORDER BY depth"
                                 : "SELECT module, offset, function, NULL, NULL FROM stack_frames "
                                   "WHERE stack_id = ? ORDER BY depth";
    if (sqlite3_prepare_v2(db, frames_sql, -1, &s->frames, NULL) != SQLITE_OK)
        return -1;
    if (sqlite3_prepare_v2(db, "SELECT file, function, line FROM py_stack_frames WHERE pystack_id = ? ORDER BY depth",
                           -1, &s->pyframes, NULL) != SQLITE_OK)
        return -1;
    /* A process that ran Python (meta.python) */
    if (sqlite3_prepare_v2(db, "SELECT 1 FROM meta WHERE key = 'python' AND value != ''", -1, &q, NULL) == SQLITE_OK) {
        s->python = sqlite3_step(q) == SQLITE_ROW;
        sqlite3_finalize(q);
    }
    return gt_nvcc_init(&s->nvcc, db, schema_version);
}

/* A function name as it reads in a site: template argument lists elided,
 * a compiler clone's " [clone .constprop.0]" dropped (the clone is the
 * user's function, specialised), at most 80 characters (docs/report.md,
 * "Call sites"). */
static void gt_short_function(const char *fn, char *out, size_t len)
{
    size_t o = 0;
    int depth = 0;
    const char *clone = strstr(fn, " [clone ");
    const char *end = clone ? clone : fn + strlen(fn);
    for (const char *p = fn; p < end && o + 6 < len; p++) {
        if (depth == 0 && *p == '<') {
            /* operator<, operator<<, operator<=, operator<=> are names */
            size_t k = (size_t)(p - fn);
            int op = (k >= 8 && strncmp(p - 8, "operator", 8) == 0) ||
                     (k >= 9 && strncmp(p - 9, "operator<", 9) == 0);
            if (!op) {
                depth = 1;
                memcpy(out + o, "<...>", 5);
                o += 5;
                continue;
            }
        } else if (depth > 0) {
            if (*p == '<')
                depth++;
            else if (*p == '>')
                depth--;
            continue;
        }
        out[o++] = *p;
    }
    out[o] = 0;
    if (o > 80)
        snprintf(out + 77, len - 77, "...");
}

/* One frame of s->frames' current row, as docs/report.md spells it. */
static void gt_native_frame_text(const struct gt_sites *s, char *out, size_t len)
{
    sqlite3_stmt *q = s->frames;
    const char *module = (const char *)sqlite3_column_text(q, 0);
    int64_t offset = sqlite3_column_int64(q, 1);
    const char *fn = (const char *)sqlite3_column_text(q, 2);
    const char *file = (const char *)sqlite3_column_text(q, 3);
    if (offset > 0)
        offset -= s->offset_less;
    const char *base = module ? gt_base(module) : "?";
    char shortfn[96];
    gt_short_function(fn ? fn : "", shortfn, sizeof(shortfn));
    if (sqlite3_column_type(q, 4) != SQLITE_NULL) {
        long long line = (long long)sqlite3_column_int64(q, 4);
        if (shortfn[0])
            snprintf(out, len, "%s:%lld in %s", gt_base(file ? file : "?"), line, shortfn);
        else
            snprintf(out, len, "%s:%lld in %s+0x%llx", gt_base(file ? file : "?"), line, base,
                     (unsigned long long)offset);
    } else if (shortfn[0])
        snprintf(out, len, "%s (%s+0x%llx)", shortfn, base, (unsigned long long)offset);
    else
        snprintf(out, len, "%s+0x%llx", base, (unsigned long long)offset);
}

/* Whether s->frames' current row is nvcc's launch plumbing. */
static int gt_frame_is_nvcc(const struct gt_sites *s)
{
    return gt_nvcc_is_plumbing(&s->nvcc, (const char *)sqlite3_column_text(s->frames, 2),
                               (const char *)sqlite3_column_text(s->frames, 3));
}

/* A library file by its package path (torch/nn/modules/module.py), any
 * other file by its name. */
static const char *gt_py_file_short(const char *file)
{
    static const char *const roots[] = {"/site-packages/", "/dist-packages/"};
    for (size_t i = 0; i < 2; i++) {
        const char *p = strstr(file, roots[i]);
        if (p)
            return p + strlen(roots[i]);
    }
    return gt_base(file);
}

static void gt_site_text(struct gt_site *site)
{
    if (!site->nframes) {
        snprintf(site->text, sizeof(site->text), "(no stack)");
        return;
    }
    size_t off = 0;
    site->text[0] = 0;
    for (int i = 0; i < site->nframes && off < sizeof(site->text); i++)
        off += (size_t)snprintf(site->text + off, sizeof(site->text) - off, "%s%s", i ? " < " : "",
                                site->frames[i]);
}

/* Python frames, then up to two native frames from below the interpreter:
 * the innermost that is not plumbing, and the one the interpreter called. */
static void gt_mixed_site(struct gt_sites *s, int64_t stack_id, int64_t pystack_id, struct gt_site *site)
{
    char inner[160] = "", outer[160] = "";
    if (stack_id > 0) {
        sqlite3_bind_int64(s->frames, 1, stack_id);
        while (sqlite3_step(s->frames) == SQLITE_ROW) {
            const char *module = (const char *)sqlite3_column_text(s->frames, 0);
            if (gt_is_interpreter(module))
                break;
            if ((module && gt_in_list(module, gt_plumbing, sizeof(gt_plumbing) / sizeof(gt_plumbing[0]))) ||
                gt_is_static_cudart(s->frames))
                continue;
            if (gt_frame_is_nvcc(s))
                continue;
            gt_native_frame_text(s, outer, sizeof(outer));
            if (!inner[0])
                snprintf(inner, sizeof(inner), "%s", outer);
        }
        sqlite3_reset(s->frames);
    }
    int native = !inner[0] ? 0 : strcmp(inner, outer) == 0 ? 1 : 2;
    sqlite3_bind_int64(s->pyframes, 1, pystack_id);
    while (site->nframes < GT_SITE_FRAMES - native && sqlite3_step(s->pyframes) == SQLITE_ROW) {
        const char *file = (const char *)sqlite3_column_text(s->pyframes, 0);
        const char *fn = (const char *)sqlite3_column_text(s->pyframes, 1);
        char line[24] = "?";
        if (sqlite3_column_type(s->pyframes, 2) != SQLITE_NULL)
            snprintf(line, sizeof(line), "%lld", (long long)sqlite3_column_int64(s->pyframes, 2));
        snprintf(site->frames[site->nframes++], sizeof(site->frames[0]), "%s:%s in %s",
                 gt_py_file_short(file ? file : "?"), line, fn ? fn : "?");
    }
    sqlite3_reset(s->pyframes);
    if (native >= 1)
        snprintf(site->frames[site->nframes++], sizeof(site->frames[0]), "%s", inner);
    if (native == 2)
        snprintf(site->frames[site->nframes++], sizeof(site->frames[0]), "%s", outer);
    gt_site_text(site);
}

static struct gt_site *gt_mixed_lookup(struct gt_sites *s, int64_t key)
{
    if (s->mixed_count * 2 >= s->mixed_cap) {
        size_t cap = s->mixed_cap ? s->mixed_cap * 2 : 256;
        struct gt_site_slot *n = calloc(cap, sizeof(*n));
        if (!n)
            return NULL;
        for (size_t i = 0; i < s->mixed_cap; i++) {
            if (!s->mixed[i].site)
                continue;
            size_t j = (size_t)((uint64_t)s->mixed[i].key * 0x9E3779B97F4A7C15ull >> 20) & (cap - 1);
            while (n[j].site)
                j = (j + 1) & (cap - 1);
            n[j] = s->mixed[i];
        }
        free(s->mixed);
        s->mixed = n;
        s->mixed_cap = cap;
    }
    size_t j = (size_t)((uint64_t)key * 0x9E3779B97F4A7C15ull >> 20) & (s->mixed_cap - 1);
    while (s->mixed[j].site) {
        if (s->mixed[j].key == key)
            return s->mixed[j].site;
        j = (j + 1) & (s->mixed_cap - 1);
    }
    struct gt_site *site = calloc(1, sizeof(*site));
    if (!site)
        return NULL;
    gt_mixed_site(s, key & 0xffffffff, key >> 32, site);
    s->mixed[j].key = key;
    s->mixed[j].site = site;
    s->mixed_count++;
    return site;
}

static struct gt_site *gt_site_get(struct gt_sites *s, int64_t key)
{
    if (key > 0xffffffffll) {
        struct gt_site *mixed = gt_mixed_lookup(s, key);
        return mixed ? mixed : &s->none;
    }
    int64_t stack_id = key;
    if (stack_id <= 0 || stack_id > s->max_id)
        return &s->none;
    if (s->cache[stack_id])
        return s->cache[stack_id];
    struct gt_site *site = calloc(1, sizeof(*site));
    if (!site)
        return &s->none;
    sqlite3_bind_int64(s->frames, 1, stack_id);
    /* The innermost user frames, nvcc's plumbing left out whatever its
     * place; if the whole stack is library code, its innermost frames
     * other than nvcc's are the best there is (all of them when none is). */
    struct gt_site any = {0}, lib = {0};
    while (sqlite3_step(s->frames) == SQLITE_ROW) {
        const char *module = (const char *)sqlite3_column_text(s->frames, 0);
        char frame[160];
        gt_native_frame_text(s, frame, sizeof(frame));
        if (any.nframes < GT_SITE_NATIVE_FRAMES)
            snprintf(any.frames[any.nframes++], sizeof(any.frames[0]), "%s", frame);
        if (gt_frame_is_nvcc(s))
            continue;
        if (lib.nframes < GT_SITE_NATIVE_FRAMES)
            snprintf(lib.frames[lib.nframes++], sizeof(lib.frames[0]), "%s", frame);
        if (site->nframes < GT_SITE_NATIVE_FRAMES && gt_is_user_module(module) && !gt_is_static_cudart(s->frames))
            snprintf(site->frames[site->nframes++], sizeof(site->frames[0]), "%s", frame);
    }
    sqlite3_reset(s->frames);
    if (!site->nframes)
        *site = lib.nframes ? lib : any;
    /* In a Python process, a call without Python frames (made by a thread
     * that runs none, as PyTorch's autograd threads) says so, outermost,
     * rather than leave a reader to guess which line made it. */
    if (s->python && site->nframes && site->nframes < GT_SITE_FRAMES)
        snprintf(site->frames[site->nframes++], sizeof(site->frames[0]), "%s", GT_SITE_NO_PYTHON);
    gt_site_text(site);
    s->cache[stack_id] = site;
    return site;
}

const struct gt_site *gt_site_of(struct gt_sites *s, int64_t key)
{
    return gt_site_get(s, key);
}

static int gt_canon_grow(struct gt_sites *s)
{
    size_t slots = s->canon_slots ? s->canon_slots * 2 : 256;
    uint32_t *n = calloc(slots, sizeof(*n));
    if (!n)
        return -1;
    for (size_t i = 0; i < s->ncanon; i++) {
        size_t j = gt_map_hash_text(s->canon[i]->text) & (slots - 1);
        while (n[j])
            j = (j + 1) & (slots - 1);
        n[j] = (uint32_t)i + 1;
    }
    free(s->canon_slot);
    s->canon_slot = n;
    s->canon_slots = slots;
    return 0;
}

static uint32_t gt_site_canon(struct gt_sites *s, struct gt_site *site)
{
    if (site->index1)
        return site->index1 - 1;
    if ((s->ncanon + 1) * 2 > s->canon_slots && gt_canon_grow(s) < 0)
        return UINT32_MAX;
    size_t j = gt_map_hash_text(site->text) & (s->canon_slots - 1);
    for (; s->canon_slot[j]; j = (j + 1) & (s->canon_slots - 1)) {
        uint32_t i = s->canon_slot[j] - 1;
        if (strcmp(s->canon[i]->text, site->text) == 0) {
            site->index1 = i + 1;
            return i;
        }
    }
    if (s->ncanon == s->canon_cap) {
        size_t cap = s->canon_cap ? s->canon_cap * 2 : 64;
        struct gt_site **c = realloc(s->canon, cap * sizeof(*c));
        if (!c)
            return UINT32_MAX;
        s->canon = c;
        s->canon_cap = cap;
    }
    uint32_t i = (uint32_t)s->ncanon++;
    s->canon[i] = site;
    s->canon_slot[j] = i + 1;
    site->index1 = i + 1;
    return i;
}

uint32_t gt_site_index(struct gt_sites *s, int64_t key)
{
    /* calls come in runs from the same place */
    if (s->has_last && key == s->last_key)
        return s->last_index;
    uint32_t i = gt_site_canon(s, gt_site_get(s, key));
    if (i != UINT32_MAX) {
        s->has_last = 1;
        s->last_key = key;
        s->last_index = i;
    }
    return i;
}

uint32_t gt_site_pseudo(struct gt_sites *s, const char *text)
{
    for (int i = 0; i < s->npseudo; i++)
        if (strcmp(s->pseudo[i]->text, text) == 0)
            return gt_site_canon(s, s->pseudo[i]);
    if (s->npseudo == (int)(sizeof(s->pseudo) / sizeof(s->pseudo[0])))
        return UINT32_MAX;
    struct gt_site *site = calloc(1, sizeof(*site));
    if (!site)
        return UINT32_MAX;
    site->nframes = 1;
    snprintf(site->frames[0], sizeof(site->frames[0]), "%s", text);
    snprintf(site->text, sizeof(site->text), "%s", text);
    s->pseudo[s->npseudo++] = site;
    return gt_site_canon(s, site);
}

const struct gt_site *gt_site_by_index(struct gt_sites *s, uint32_t index)
{
    return index < s->ncanon ? s->canon[index] : &s->none;
}

size_t gt_site_count(const struct gt_sites *s)
{
    return s->ncanon;
}

void gt_sites_free(struct gt_sites *s)
{
    if (s->cache)
        for (int64_t i = 0; i <= s->max_id; i++)
            free(s->cache[i]);
    free(s->cache);
    for (size_t i = 0; i < s->mixed_cap; i++)
        free(s->mixed[i].site);
    free(s->mixed);
    free(s->canon);
    free(s->canon_slot);
    for (int i = 0; i < s->npseudo; i++)
        free(s->pseudo[i]);
    sqlite3_finalize(s->frames);
    sqlite3_finalize(s->pyframes);
    gt_nvcc_free(&s->nvcc);
    memset(s, 0, sizeof(*s));
}

void gt_site_put_json(FILE *out, const struct gt_site *s)
{
    fputc('[', out);
    for (int i = 0; i < s->nframes; i++) {
        if (i)
            fputc(',', out);
        gt_put_json_string(out, s->frames[i]);
    }
    fputc(']', out);
}

/* gt_site.c: a call's site, from its stack: the first frames that are the
 * user's code. Frames in CUDA's own libraries, the tracer, the C library,
 * the Python interpreter and the big frameworks say where the call went,
 * not where it came from. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gt_site.h"

static const char *const gt_not_user[] = {
    "libcuda.so", "libcudart", "libcupti", "libgputrace", "libcublas", "libcudnn", "libnccl", "libcufft",
    "libcusparse", "libcurand", "libnvrtc", "libtorch", "libc10", "libc.so", "ld-linux", "libpython",
    "libstdc++", "libpthread",
};

static int gt_is_user_module(const char *path)
{
    if (!path)
        return 1;
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    for (size_t i = 0; i < sizeof(gt_not_user) / sizeof(gt_not_user[0]); i++)
        if (strncmp(base, gt_not_user[i], strlen(gt_not_user[i])) == 0)
            return 0;
    return 1;
}

int gt_sites_init(struct gt_sites *s, sqlite3 *db)
{
    memset(s, 0, sizeof(*s));
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
    if (sqlite3_prepare_v2(db, "SELECT module, offset, function FROM stack_frames WHERE stack_id = ? ORDER BY depth",
                           -1, &s->frames, NULL) != SQLITE_OK)
        return -1;
    return 0;
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

const struct gt_site *gt_site_of(struct gt_sites *s, int64_t stack_id)
{
    static const struct gt_site none = {0, {{0}}, "(no stack)"};
    if (stack_id <= 0 || stack_id > s->max_id)
        return &none;
    if (s->cache[stack_id])
        return s->cache[stack_id];
    struct gt_site *site = calloc(1, sizeof(*site));
    if (!site)
        return &none;
    sqlite3_bind_int64(s->frames, 1, stack_id);
    /* The innermost user frames; if the whole stack is library code, its
     * innermost frames are the best there is. */
    struct gt_site any = {0};
    while (sqlite3_step(s->frames) == SQLITE_ROW) {
        const char *module = (const char *)sqlite3_column_text(s->frames, 0);
        int64_t offset = sqlite3_column_int64(s->frames, 1);
        const char *fn = (const char *)sqlite3_column_text(s->frames, 2);
        const char *base = module ? strrchr(module, '/') : NULL;
        base = base ? base + 1 : module ? module : "?";
        char frame[160];
        if (fn && *fn)
            snprintf(frame, sizeof(frame), "%s (%s+0x%llx)", fn, base, (unsigned long long)offset);
        else
            snprintf(frame, sizeof(frame), "%s+0x%llx", base, (unsigned long long)offset);
        if (any.nframes < GT_SITE_FRAMES)
            snprintf(any.frames[any.nframes++], sizeof(any.frames[0]), "%s", frame);
        if (site->nframes < GT_SITE_FRAMES && gt_is_user_module(module))
            snprintf(site->frames[site->nframes++], sizeof(site->frames[0]), "%s", frame);
    }
    sqlite3_reset(s->frames);
    if (!site->nframes)
        *site = any;
    gt_site_text(site);
    s->cache[stack_id] = site;
    return site;
}

void gt_sites_free(struct gt_sites *s)
{
    if (s->cache)
        for (int64_t i = 0; i <= s->max_id; i++)
            free(s->cache[i]);
    free(s->cache);
    sqlite3_finalize(s->frames);
    memset(s, 0, sizeof(*s));
}

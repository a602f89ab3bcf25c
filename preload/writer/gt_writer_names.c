/* gt_writer_names.c: what the rows refer to, stored once, on first sight:
 * native stacks and their frames (each new frame symbolized here, off the
 * hot path), modules, kernel names (demangled once) and thread names; the
 * writer's small interning tables. Writer thread only. Python stacks are
 * gt_writer_py.c's. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hot/gt_names.h"
#include "hot/gt_stacks.h"
#include "writer/gt_lines.h"
#include "writer/gt_symbols.h"
#include "writer/gt_writer_int.h"

long gt_strlist_intern(struct gt_strlist *l, const char *s, int *added)
{
    *added = 0;
    for (size_t i = 0; i < l->count; i++)
        if (strcmp(l->items[i], s) == 0)
            return (long)i;
    if (l->count == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 64;
        char **n = realloc(l->items, cap * sizeof(*n));
        if (!n)
            return -1;
        l->items = n;
        l->cap = cap;
    }
    char *copy = strdup(s);
    if (!copy)
        return -1;
    l->items[l->count] = copy;
    *added = 1;
    return (long)l->count++;
}

void gt_strlist_free(struct gt_strlist *l)
{
    for (size_t i = 0; i < l->count; i++)
        free(l->items[i]);
    free(l->items);
    l->items = NULL;
    l->count = l->cap = 0;
}

static int64_t gt_module_id(struct gt_writer *w, const char *path)
{
    int added = 0;
    long idx = gt_strlist_intern(&w->modules, path, &added);
    if (idx < 0)
        return 0;
    int64_t id = idx + 1;
    if (added) {
        sqlite3_bind_int64(w->st[ST_MODULE], 1, id);
        sqlite3_bind_text(w->st[ST_MODULE], 2, path, -1, SQLITE_STATIC);
        gt_step(w, ST_MODULE);
    }
    return id;
}

static size_t gt_idmap_slot_of(uint64_t key, size_t cap)
{
    return (size_t)(key * 0x9E3779B97F4A7C15ull >> 20) & (cap - 1);
}

static int gt_idmap_grow(struct gt_idmap *m)
{
    size_t cap = m->cap ? m->cap * 2 : 1024;
    struct gt_idmap_slot *n = calloc(cap, sizeof(*n));
    if (!n)
        return -1;
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->slots[i].key)
            continue;
        size_t j = gt_idmap_slot_of(m->slots[i].key, cap);
        while (n[j].key)
            j = (j + 1) & (cap - 1);
        n[j] = m->slots[i];
    }
    free(m->slots);
    m->slots = n;
    m->cap = cap;
    return 0;
}

int64_t gt_idmap_get(struct gt_idmap *m, uint64_t key, int *added)
{
    *added = 0;
    if (m->count * 2 >= m->cap && gt_idmap_grow(m) < 0)
        return 0;
    size_t j = gt_idmap_slot_of(key, m->cap);
    while (m->slots[j].key) {
        if (m->slots[j].key == key)
            return m->slots[j].id;
        j = (j + 1) & (m->cap - 1);
    }
    m->slots[j].key = key;
    m->slots[j].id = (int64_t)++m->count;
    *added = 1;
    return m->slots[j].id;
}

void gt_idmap_free(struct gt_idmap *m)
{
    free(m->slots);
    memset(m, 0, sizeof(*m));
}

/* Room for frame index k (0-based) in the per-ip arrays. */
static int gt_frame_room(struct gt_writer *w, size_t k)
{
    if (k < w->frame_cap)
        return 0;
    size_t cap = w->frame_cap ? w->frame_cap * 2 : 1024;
    while (cap <= k)
        cap *= 2;
    int64_t *first = realloc(w->frame_first, cap * sizeof(*first));
    if (!first)
        return -1;
    w->frame_first = first;
    uint8_t *n = realloc(w->frame_n, cap * sizeof(*n));
    if (!n)
        return -1;
    w->frame_n = n;
    w->frame_cap = cap;
    return 0;
}

/* One frames row; line information NULL when line is NULL. */
static void gt_frame_row(struct gt_writer *w, uintptr_t ip, int known, int64_t module_id, uint64_t offset,
                         const char *func, const struct gt_line *line)
{
    sqlite3_stmt *s = w->st[ST_FRAME];
    sqlite3_bind_int64(s, 1, ++w->frame_rows);
    sqlite3_bind_int64(s, 2, (int64_t)ip);
    if (known) {
        sqlite3_bind_int64(s, 3, module_id);
        sqlite3_bind_int64(s, 4, (int64_t)offset);
        if (func && func[0])
            sqlite3_bind_text(s, 5, func, -1, SQLITE_TRANSIENT);
    }
    if (line) {
        if (line->file[0])
            sqlite3_bind_text(s, 6, line->file, -1, SQLITE_TRANSIENT);
        if (line->line > 0)
            sqlite3_bind_int64(s, 7, line->line);
        if (line->column > 0)
            sqlite3_bind_int64(s, 8, line->column);
    }
    sqlite3_bind_int(s, 9, line ? line->inlined : 0);
    gt_step(w, ST_FRAME);
}

/* The frames rows of a return address, symbolized and resolved to lines
 * the first time it is seen: *n rows from the returned id on, the
 * functions inlined at the call innermost first, then the function
 * holding it. 0: out of memory. */
static int64_t gt_frame_ids(struct gt_writer *w, uintptr_t ip, int *n)
{
    int added;
    int64_t k = gt_idmap_get(&w->frames, ip, &added);
    *n = 0;
    if (!k || gt_frame_room(w, (size_t)k - 1) < 0)
        return 0;
    if (!added) {
        *n = w->frame_n[k - 1];
        return w->frame_first[k - 1];
    }
    char module[PATH_MAX], func[1024];
    uint64_t offset = 0;
    /* Named, and offset, by its call instruction (version 5): frames.ip
     * keeps the return address itself. */
    int known = gt_symbolize_return(ip, module, sizeof(module), &offset, func, sizeof(func)) == 0;
    int64_t module_id = known ? gt_module_id(w, module) : 0;
    static struct gt_line lines[GT_LINES_MAX]; /* writer thread only; too big for its stack */
    int nl = known ? gt_lines_resolve(module, offset, lines, GT_LINES_MAX) : 0;
    int64_t first = w->frame_rows + 1;
    for (int i = 0; i < nl; i++)
        gt_frame_row(w, ip, known, module_id, offset, lines[i].inlined || !func[0] ? lines[i].func : func,
                     &lines[i]);
    if (!nl)
        gt_frame_row(w, ip, known, module_id, offset, func, NULL);
    w->frame_first[k - 1] = first;
    w->frame_n[k - 1] = (uint8_t)(nl ? nl : 1);
    *n = w->frame_n[k - 1];
    return first;
}

void gt_emit_stack(struct gt_writer *w, uint32_t stack_id)
{
    if (!stack_id || gt_bit_test_set(w->stack_done, stack_id))
        return;
    const uintptr_t *ips;
    uint32_t n = gt_stack_frames(stack_id, &ips);
    /* Depth counts frames as they read: an ip with inlined functions
     * takes one depth for each. */
    uint32_t depth = 0;
    for (uint32_t d = 0; d < n; d++) {
        int nf;
        int64_t fid = gt_frame_ids(w, ips[d], &nf);
        for (int i = 0; i < nf; i++) {
            sqlite3_bind_int64(w->st[ST_STACK], 1, stack_id);
            sqlite3_bind_int64(w->st[ST_STACK], 2, depth++);
            sqlite3_bind_int64(w->st[ST_STACK], 3, fid + i);
            gt_step(w, ST_STACK);
        }
    }
}

void gt_insert_name(struct gt_writer *w, int64_t id, const char *name)
{
    char demangled[4096];
    gt_demangle(name, demangled, sizeof(demangled));
    sqlite3_bind_int64(w->st[ST_STRING], 1, id);
    sqlite3_bind_text(w->st[ST_STRING], 2, name, -1, SQLITE_STATIC);
    sqlite3_bind_text(w->st[ST_STRING], 3, demangled, -1, SQLITE_TRANSIENT);
    gt_step(w, ST_STRING);
}

void gt_emit_name(struct gt_writer *w, uint32_t name_id)
{
    if (!name_id || gt_bit_test_set(w->name_done, name_id))
        return;
    const char *name = gt_names_get(name_id);
    if (name)
        gt_insert_name(w, name_id, name);
}

void gt_emit_thread(struct gt_writer *w, uint32_t tid)
{
    for (size_t i = 0; i < w->tid_count; i++)
        if (w->tids[i] == tid)
            return;
    if (w->tid_count == w->tid_cap) {
        size_t cap = w->tid_cap ? w->tid_cap * 2 : 64;
        uint32_t *t = realloc(w->tids, cap * sizeof(*t));
        if (!t)
            return;
        w->tids = t;
        w->tid_cap = cap;
    }
    w->tids[w->tid_count++] = tid;
    char path[64], name[64];
    snprintf(path, sizeof(path), "/proc/self/task/%u/comm", tid);
    gt_read_text_file(path, name, sizeof(name), 0);
    sqlite3_bind_int64(w->st[ST_THREAD], 1, tid);
    if (name[0])
        sqlite3_bind_text(w->st[ST_THREAD], 2, name, -1, SQLITE_TRANSIENT);
    gt_step(w, ST_THREAD);
}

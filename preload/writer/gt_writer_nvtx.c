/* gt_writer_nvtx.c: NVTX events (hot/gt_nvtx.c) into nvtx_ranges,
 * nvtx_marks, nvtx_names and nvtx_strings. Writer thread only.
 *
 * A range's row is written when it starts, so a process that dies keeps
 * its open ranges, and its end is filled in when it ends. Push/pop ranges
 * nest per thread and domain: the writer sees each thread's events in
 * order and keeps that thread's stack of open rows, which gives depth and
 * parent. A start/end range may end on another thread, whose ring can be
 * drained before the starting thread's: an end whose start is not in yet
 * waits for the next drain before it is counted as unmatched. Everything
 * kept in memory is bounded; what does not fit is counted in meta. */
#include <stdlib.h>
#include <string.h>

#include "base/gt_event.h"
#include "hot/gt_nvtx.h"
#include "writer/gt_writer_int.h"

/* Open push ranges kept, over all stacks; deeper ones are counted. */
#define GT_NVTX_OPEN_MAX (1u << 20)
/* Open start/end ranges kept, and ends waiting for their start. */
#define GT_NVTX_STARTED_MAX (1u << 20)
#define GT_NVTX_WAITING_MAX 4096u
#define GT_NVTX_STR_IDS (1u << 17)

enum { NS_RANGE, NS_END, NS_MARK, NS_NAME, NS_STRING, NS_COUNT };

static const char *const gt_nvtx_sql[NS_COUNT] = {
    [NS_RANGE] = "INSERT INTO nvtx_ranges(id,kind,tid,domain_id,category,name_id,start_ns,depth,parent_id,payload,"
                 "payload_type,stack_id,pystack_id) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?)",
    [NS_END] = "UPDATE nvtx_ranges SET end_ns = ?, end_tid = ? WHERE id = ?",
    [NS_MARK] = "INSERT INTO nvtx_marks(tid,domain_id,category,name_id,ns,payload,payload_type,stack_id,pystack_id) "
                "VALUES(?,?,?,?,?,?,?,?,?)",
    [NS_NAME] = "INSERT INTO nvtx_names VALUES(?,?,?,?,?)",
    [NS_STRING] = "INSERT INTO nvtx_strings VALUES(?,?)",
};

/* One thread's open push ranges in one domain. */
struct gt_nvtx_stack {
    uint64_t key;      /* tid << 32 | domain; 0: empty slot */
    int64_t *rows;
    uint32_t n, cap;
    uint64_t beyond;   /* pushes past what is kept: popped before the kept ones */
};

struct gt_nvtx_started {
    uint64_t id;       /* the nvtxRangeId_t; 0: empty */
    int64_t row;
};

struct gt_nvtx_waiting {
    uint64_t id, ns;
    uint32_t tid;
    int age;
};

struct gt_nvtx_w {
    sqlite3_stmt *st[NS_COUNT];
    int64_t next_row;
    uint8_t str_done[GT_NVTX_STR_IDS / 8 + 1]; /* ids 1 to GT_NVTX_STR_IDS */
    struct gt_nvtx_stack *stacks;
    size_t stacks_cap, stacks_count;
    uint64_t open_kept;
    struct gt_nvtx_started *started;
    size_t started_cap, started_count;
    struct gt_nvtx_waiting waiting[GT_NVTX_WAITING_MAX];
    uint32_t nwaiting;
    uint64_t unbalanced_pops, unmatched_ends, too_deep, too_many_started;
};

static uint64_t gt_mix(uint64_t x)
{
    x *= 0x9E3779B97F4A7C15ull;
    return x ^ (x >> 29);
}

static struct gt_nvtx_w *gt_nvtx_state(struct gt_writer *w)
{
    if (w->nvtx)
        return w->nvtx;
    struct gt_nvtx_w *n = calloc(1, sizeof(*n));
    if (!n)
        return NULL;
    for (int i = 0; i < NS_COUNT; i++) {
        if (sqlite3_prepare_v3(w->db, gt_nvtx_sql[i], -1, SQLITE_PREPARE_PERSISTENT, &n->st[i], NULL) !=
            SQLITE_OK) {
            for (int j = 0; j < i; j++)
                sqlite3_finalize(n->st[j]);
            free(n);
            return NULL;
        }
    }
    w->nvtx = n;
    return n;
}

void gt_writer_nvtx_free(struct gt_writer *w)
{
    struct gt_nvtx_w *n = w->nvtx;
    if (!n)
        return;
    for (int i = 0; i < NS_COUNT; i++)
        sqlite3_finalize(n->st[i]);
    for (size_t i = 0; i < n->stacks_cap; i++)
        free(n->stacks[i].rows);
    free(n->stacks);
    free(n->started);
    free(n);
    w->nvtx = NULL;
}

static int gt_nvtx_step(struct gt_writer *w, struct gt_nvtx_w *n, int which)
{
    sqlite3_stmt *s = n->st[which];
    int rc = sqlite3_step(s);
    sqlite3_reset(s);
    sqlite3_clear_bindings(s);
    if (rc != SQLITE_DONE) {
        /* Through the shared statement path, so the failure stops
         * recording the same way. */
        sqlite3_bind_text(w->st[ST_META], 1, "nvtx_write_error", -1, SQLITE_STATIC);
        sqlite3_bind_text(w->st[ST_META], 2, sqlite3_errstr(rc), -1, SQLITE_STATIC);
        gt_step(w, ST_META);
        return -1;
    }
    return 0;
}

static void gt_bind_id(sqlite3_stmt *s, int col, uint64_t v)
{
    if (v)
        sqlite3_bind_int64(s, col, (int64_t)v);
    else
        sqlite3_bind_null(s, col);
}

/* The string's bytes, made valid UTF-8: a byte that starts no valid
 * sequence becomes U+FFFD, so every reader can decode the value. */
static void gt_nvtx_emit_string(struct gt_writer *w, struct gt_nvtx_w *n, uint32_t id)
{
    if (!id || id > GT_NVTX_STR_IDS || gt_bit_test_set(n->str_done, id))
        return;
    const char *b;
    int len = gt_nvtx_string(id, &b);
    if (len < 0)
        return;
    char out[GT_NVTX_STR_MAX * 3 + 1];
    size_t o = 0;
    const unsigned char *s = (const unsigned char *)b;
    for (int i = 0; i < len;) {
        unsigned c = s[i];
        int k = c < 0x80 ? 1 : (c >= 0xC2 && c <= 0xDF) ? 2 : (c >= 0xE0 && c <= 0xEF) ? 3
              : (c >= 0xF0 && c <= 0xF4) ? 4 : 0;
        int ok = k > 0 && i + k <= len && c != 0;
        for (int j = 1; ok && j < k; j++)
            ok = (s[i + j] & 0xC0) == 0x80;
        if (ok && k == 3)
            ok = !(c == 0xE0 && s[i + 1] < 0xA0) && !(c == 0xED && s[i + 1] > 0x9F);
        if (ok && k == 4)
            ok = !(c == 0xF0 && s[i + 1] < 0x90) && !(c == 0xF4 && s[i + 1] > 0x8F);
        if (ok) {
            memcpy(out + o, s + i, (size_t)k);
            o += (size_t)k;
            i += k;
        } else {
            memcpy(out + o, "\xEF\xBF\xBD", 3);
            o += 3;
            i++;
        }
    }
    sqlite3_stmt *st = n->st[NS_STRING];
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_text(st, 2, out, (int)o, SQLITE_STATIC);
    gt_nvtx_step(w, n, NS_STRING);
}

static void gt_bind_payload(sqlite3_stmt *s, int col, const struct gt_event *e)
{
    uint64_t v = e->u.nvtx.payload;
    switch (e->u.nvtx.payload_type) {
    case 1: /* uint64: past INT64_MAX it reads as its two's complement */
    case 2:
        sqlite3_bind_int64(s, col, (int64_t)v);
        break;
    case 3: {
        double d;
        memcpy(&d, &v, sizeof(d));
        sqlite3_bind_double(s, col, d);
        break;
    }
    case 4:
        sqlite3_bind_int64(s, col, (int64_t)(uint32_t)v);
        break;
    case 5:
        sqlite3_bind_int64(s, col, (int32_t)(uint32_t)v);
        break;
    case 6: {
        uint32_t u = (uint32_t)v;
        float f;
        memcpy(&f, &u, sizeof(f));
        sqlite3_bind_double(s, col, f);
        break;
    }
    default:
        sqlite3_bind_null(s, col + 1);
        sqlite3_bind_null(s, col);
        return;
    }
    sqlite3_bind_int64(s, col + 1, e->u.nvtx.payload_type);
}

static struct gt_nvtx_stack *gt_nvtx_stack_of(struct gt_nvtx_w *n, uint32_t tid, uint32_t domain, int add)
{
    uint64_t key = (uint64_t)tid << 32 | domain | (1ull << 63);
    if (n->stacks_count * 2 >= n->stacks_cap) {
        if (!add)
            goto look;
        size_t cap = n->stacks_cap ? n->stacks_cap * 2 : 64;
        struct gt_nvtx_stack *t = calloc(cap, sizeof(*t));
        if (!t)
            goto look;
        for (size_t i = 0; i < n->stacks_cap; i++) {
            if (!n->stacks[i].key)
                continue;
            size_t j = gt_mix(n->stacks[i].key) & (cap - 1);
            while (t[j].key)
                j = (j + 1) & (cap - 1);
            t[j] = n->stacks[i];
        }
        free(n->stacks);
        n->stacks = t;
        n->stacks_cap = cap;
    }
look:
    if (!n->stacks_cap)
        return NULL;
    for (size_t j = gt_mix(key) & (n->stacks_cap - 1);; j = (j + 1) & (n->stacks_cap - 1)) {
        if (n->stacks[j].key == key)
            return &n->stacks[j];
        if (!n->stacks[j].key) {
            if (!add || n->stacks_count + 1 >= n->stacks_cap)
                return NULL;
            n->stacks[j].key = key;
            n->stacks_count++;
            return &n->stacks[j];
        }
    }
}

static void gt_nvtx_insert_range(struct gt_writer *w, struct gt_nvtx_w *n, const struct gt_event *e, int64_t row,
                                 int kind, int64_t depth, int64_t parent)
{
    sqlite3_stmt *s = n->st[NS_RANGE];
    sqlite3_bind_int64(s, 1, row);
    sqlite3_bind_int64(s, 2, kind);
    sqlite3_bind_int64(s, 3, e->tid);
    gt_bind_id(s, 4, e->u.nvtx.domain);
    sqlite3_bind_int64(s, 5, e->u.nvtx.category);
    gt_bind_id(s, 6, e->u.nvtx.name);
    sqlite3_bind_int64(s, 7, (int64_t)e->start_ns);
    if (depth >= 0)
        sqlite3_bind_int64(s, 8, depth);
    else
        sqlite3_bind_null(s, 8);
    gt_bind_id(s, 9, (uint64_t)(parent > 0 ? parent : 0));
    gt_bind_payload(s, 10, e);
    gt_bind_id(s, 12, e->stack_id);
    gt_bind_id(s, 13, e->pystack_id);
    gt_nvtx_step(w, n, NS_RANGE);
}

static void gt_nvtx_end_row(struct gt_writer *w, struct gt_nvtx_w *n, int64_t row, uint64_t ns, uint32_t tid)
{
    sqlite3_stmt *s = n->st[NS_END];
    sqlite3_bind_int64(s, 1, (int64_t)ns);
    sqlite3_bind_int64(s, 2, tid);
    sqlite3_bind_int64(s, 3, row);
    gt_nvtx_step(w, n, NS_END);
}

static void gt_nvtx_push(struct gt_writer *w, struct gt_nvtx_w *n, const struct gt_event *e)
{
    struct gt_nvtx_stack *st = gt_nvtx_stack_of(n, e->tid, e->u.nvtx.domain, 1);
    if (!st) {
        n->too_deep++;
        return;
    }
    if (st->beyond || n->open_kept >= GT_NVTX_OPEN_MAX) {
        st->beyond++;
        n->too_deep++;
        return;
    }
    if (st->n == st->cap) {
        uint32_t cap = st->cap ? st->cap * 2 : 16;
        int64_t *r = realloc(st->rows, cap * sizeof(*r));
        if (!r) {
            st->beyond++;
            n->too_deep++;
            return;
        }
        st->rows = r;
        st->cap = cap;
    }
    int64_t row = ++n->next_row;
    gt_nvtx_insert_range(w, n, e, row, 0, st->n, st->n ? st->rows[st->n - 1] : 0);
    st->rows[st->n++] = row;
    n->open_kept++;
}

static void gt_nvtx_pop(struct gt_writer *w, struct gt_nvtx_w *n, const struct gt_event *e)
{
    struct gt_nvtx_stack *st = gt_nvtx_stack_of(n, e->tid, e->u.nvtx.domain, 0);
    if (st && st->beyond) {
        st->beyond--;
        return;
    }
    if (!st || !st->n) {
        n->unbalanced_pops++;
        return;
    }
    int64_t row = st->rows[--st->n];
    n->open_kept--;
    gt_nvtx_end_row(w, n, row, e->start_ns, e->tid);
}

/* ---- start/end: range id -> row, open addressing, deletion by shifting
 * back the entries after the removed one ---- */

static int gt_started_grow(struct gt_nvtx_w *n)
{
    size_t cap = n->started_cap ? n->started_cap * 2 : 256;
    struct gt_nvtx_started *t = calloc(cap, sizeof(*t));
    if (!t)
        return -1;
    for (size_t i = 0; i < n->started_cap; i++) {
        if (!n->started[i].id)
            continue;
        size_t j = gt_mix(n->started[i].id) & (cap - 1);
        while (t[j].id)
            j = (j + 1) & (cap - 1);
        t[j] = n->started[i];
    }
    free(n->started);
    n->started = t;
    n->started_cap = cap;
    return 0;
}

static void gt_started_put(struct gt_nvtx_w *n, uint64_t id, int64_t row)
{
    if (n->started_count >= GT_NVTX_STARTED_MAX ||
        (n->started_count * 2 >= n->started_cap && gt_started_grow(n) < 0)) {
        n->too_many_started++;
        return;
    }
    size_t j = gt_mix(id) & (n->started_cap - 1);
    while (n->started[j].id && n->started[j].id != id)
        j = (j + 1) & (n->started_cap - 1);
    if (!n->started[j].id)
        n->started_count++;
    n->started[j].id = id;
    n->started[j].row = row;
}

/* The row of a started range, taken out of the map; 0: not there. */
static int64_t gt_started_take(struct gt_nvtx_w *n, uint64_t id)
{
    if (!n->started_cap || !id)
        return 0;
    size_t mask = n->started_cap - 1, j = gt_mix(id) & mask;
    while (n->started[j].id && n->started[j].id != id)
        j = (j + 1) & mask;
    if (!n->started[j].id)
        return 0;
    int64_t row = n->started[j].row;
    n->started[j].id = 0;
    n->started_count--;
    for (size_t k = (j + 1) & mask; n->started[k].id; k = (k + 1) & mask) {
        size_t home = gt_mix(n->started[k].id) & mask;
        /* Moves back when its home is not cyclically within (j, k]. */
        if ((k > j && (home <= j || home > k)) || (k < j && home <= j && home > k)) {
            n->started[j] = n->started[k];
            n->started[k].id = 0;
            j = k;
        }
    }
    return row;
}

static void gt_nvtx_start(struct gt_writer *w, struct gt_nvtx_w *n, const struct gt_event *e)
{
    int64_t row = ++n->next_row;
    gt_nvtx_insert_range(w, n, e, row, 1, -1, 0);
    gt_started_put(n, e->u.nvtx.id, row);
}

static void gt_nvtx_end(struct gt_writer *w, struct gt_nvtx_w *n, const struct gt_event *e)
{
    int64_t row = gt_started_take(n, e->u.nvtx.id);
    if (row) {
        gt_nvtx_end_row(w, n, row, e->start_ns, e->tid);
        return;
    }
    if (n->nwaiting == GT_NVTX_WAITING_MAX) {
        n->unmatched_ends++;
        return;
    }
    struct gt_nvtx_waiting *x = &n->waiting[n->nwaiting++];
    x->id = e->u.nvtx.id;
    x->ns = e->start_ns;
    x->tid = e->tid;
    x->age = 0;
}

void gt_writer_nvtx_after_drain(struct gt_writer *w, int last)
{
    struct gt_nvtx_w *n = w->nvtx;
    if (!n || !n->nwaiting)
        return;
    uint32_t keep = 0;
    for (uint32_t i = 0; i < n->nwaiting; i++) {
        struct gt_nvtx_waiting *x = &n->waiting[i];
        int64_t row = gt_started_take(n, x->id);
        if (row)
            gt_nvtx_end_row(w, n, row, x->ns, x->tid);
        else if (last || ++x->age > 2)
            n->unmatched_ends++;
        else
            n->waiting[keep++] = *x;
    }
    n->nwaiting = keep;
}

static void gt_nvtx_mark(struct gt_writer *w, struct gt_nvtx_w *n, const struct gt_event *e)
{
    sqlite3_stmt *s = n->st[NS_MARK];
    sqlite3_bind_int64(s, 1, e->tid);
    gt_bind_id(s, 2, e->u.nvtx.domain);
    sqlite3_bind_int64(s, 3, e->u.nvtx.category);
    gt_bind_id(s, 4, e->u.nvtx.name);
    sqlite3_bind_int64(s, 5, (int64_t)e->start_ns);
    gt_bind_payload(s, 6, e);
    gt_bind_id(s, 8, e->stack_id);
    gt_bind_id(s, 9, e->pystack_id);
    gt_nvtx_step(w, n, NS_MARK);
}

static void gt_nvtx_name(struct gt_writer *w, struct gt_nvtx_w *n, const struct gt_event *e)
{
    static const int kinds[GT_NVTX_KIND_COUNT] = {
        [GT_NVTX_NAME_THREAD] = 0, [GT_NVTX_NAME_STREAM] = 1, [GT_NVTX_NAME_CUSTREAM] = 2,
        [GT_NVTX_NAME_CATEGORY] = 3};
    sqlite3_stmt *s = n->st[NS_NAME];
    sqlite3_bind_int64(s, 1, kinds[e->u.nvtx.kind]);
    gt_bind_id(s, 2, e->u.nvtx.domain);
    sqlite3_bind_int64(s, 3, (int64_t)e->u.nvtx.id);
    gt_bind_id(s, 4, e->u.nvtx.name);
    sqlite3_bind_int64(s, 5, (int64_t)e->start_ns);
    gt_nvtx_step(w, n, NS_NAME);
}

void gt_write_nvtx(struct gt_writer *w, const struct gt_event *e)
{
    struct gt_nvtx_w *n = gt_nvtx_state(w);
    if (!n)
        return;
    gt_emit_thread(w, e->tid);
    gt_emit_stack(w, e->stack_id);
    gt_emit_pystack(w, e->pystack_id);
    gt_nvtx_emit_string(w, n, e->u.nvtx.name);
    gt_nvtx_emit_string(w, n, e->u.nvtx.domain);
    switch (e->u.nvtx.kind) {
    case GT_NVTX_PUSH:
        gt_nvtx_push(w, n, e);
        break;
    case GT_NVTX_POP:
        gt_nvtx_pop(w, n, e);
        break;
    case GT_NVTX_START:
        gt_nvtx_start(w, n, e);
        break;
    case GT_NVTX_END:
        gt_nvtx_end(w, n, e);
        break;
    case GT_NVTX_MARK:
        gt_nvtx_mark(w, n, e);
        break;
    case GT_NVTX_NAME_THREAD:
    case GT_NVTX_NAME_STREAM:
    case GT_NVTX_NAME_CUSTREAM:
    case GT_NVTX_NAME_CATEGORY:
        gt_nvtx_name(w, n, e);
        break;
    default:
        break;
    }
}

void gt_writer_nvtx_counters(struct gt_writer *w, void (*meta)(struct gt_writer *, const char *, uint64_t))
{
    struct gt_nvtx_w *n = w->nvtx;
    if (!n)
        return;
    meta(w, "nvtx_unbalanced_pops", n->unbalanced_pops);
    meta(w, "nvtx_unmatched_ends", n->unmatched_ends);
    meta(w, "nvtx_ranges_not_kept", n->too_deep + n->too_many_started);
    meta(w, "nvtx_truncated_strings", gt_nvtx_truncated());
    meta(w, "nvtx_dropped_strings", gt_nvtx_strings_dropped());
}

/* gt_writer_nvtx.c: NVTX events (hot/gt_nvtx.c) into nvtx_ranges,
 * nvtx_marks, nvtx_names and nvtx_strings. Writer thread only.
 *
 * An open range waits in memory and its row is written once it ends,
 * GT_BATCH_ROWS rows to an INSERT (one statement per row would cost the
 * writer more than the ring offers); ranges still open are written, with
 * no end, when the trace is finished (at exit, a signal, exec). Push/pop
 * ranges nest per thread and domain: the writer sees each thread's events
 * in order and keeps that thread's stack of open ranges, which gives depth
 * and parent. A start/end range may end on another thread, whose ring can
 * be drained before the starting thread's: an end whose start is not in
 * yet waits for the next drains before it is counted as unmatched.
 * Everything kept in memory is bounded; what does not fit is counted in
 * meta. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/gt_event.h"
#include "hot/gt_nvtx.h"
#include "writer/gt_writer_int.h"

/* Open ranges kept (push ranges over all stacks, and started ranges);
 * pushes deeper than that are counted. */
#define GT_NVTX_OPEN_MAX (1u << 18)
#define GT_NVTX_WAITING_MAX 4096u
#define GT_NVTX_STR_IDS (1u << 17)
#define GT_NVTX_COLS 15

enum { NS_RANGE, NS_RANGES, NS_MARK, NS_NAME, NS_STRING, NS_COUNT };

#define GT_NVTX_RANGE_INSERT                                                                                  \
    "INSERT INTO nvtx_ranges(id,kind,tid,end_tid,domain_id,category,name_id,start_ns,end_ns,depth,parent_id," \
    "payload,payload_type,stack_id,pystack_id) VALUES"
#define GT_NVTX_RANGE_VALUES "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"

static const char *const gt_nvtx_sql[NS_COUNT] = {
    [NS_RANGE] = GT_NVTX_RANGE_INSERT GT_NVTX_RANGE_VALUES,
    [NS_RANGES] = NULL, /* GT_BATCH_ROWS rows of NS_RANGE's, built at first use */
    [NS_MARK] = "INSERT INTO nvtx_marks(tid,domain_id,category,name_id,ns,payload,payload_type,stack_id,pystack_id) "
                "VALUES(?,?,?,?,?,?,?,?,?)",
    [NS_NAME] = "INSERT INTO nvtx_names VALUES(?,?,?,?,?)",
    [NS_STRING] = "INSERT INTO nvtx_strings VALUES(?,?)",
};

/* A range, open or ended, until its row is written. */
struct gt_nvtx_range {
    int64_t row, parent;   /* parent 0: none */
    int32_t depth;         /* -1: a start/end range */
    uint32_t tid, end_tid; /* end_tid 0: still open */
    uint32_t domain, category, name, stack_id, pystack_id;
    uint64_t start_ns, end_ns;
    uint64_t payload;
    uint8_t payload_type;
};

/* One thread's open push ranges in one domain. */
struct gt_nvtx_stack {
    uint64_t key;      /* 1 << 63 | tid << 32 | domain; 0: empty slot */
    struct gt_nvtx_range *open;
    uint32_t n, cap;
    uint64_t beyond;   /* pushes past what is kept: popped before the kept ones */
};

struct gt_nvtx_started {
    uint64_t id;       /* the nvtxRangeId_t; 0: empty */
    struct gt_nvtx_range r;
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
    struct gt_nvtx_range batch[GT_BATCH_ROWS];
    int nbatch;
    uint64_t unbalanced_pops, unmatched_ends, not_kept;
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
    char many[sizeof(GT_NVTX_RANGE_INSERT) + GT_BATCH_ROWS * sizeof(GT_NVTX_RANGE_VALUES)];
    char *p = many + sprintf(many, "%s", GT_NVTX_RANGE_INSERT);
    for (int i = 0; i < GT_BATCH_ROWS; i++)
        p += sprintf(p, "%s%s", i ? "," : "", GT_NVTX_RANGE_VALUES);
    for (int i = 0; i < NS_COUNT; i++) {
        const char *sql = i == NS_RANGES ? many : gt_nvtx_sql[i];
        if (sqlite3_prepare_v3(w->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &n->st[i], NULL) != SQLITE_OK) {
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
        free(n->stacks[i].open);
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

/* The payload into columns col (its value) and col + 1 (its type). */
static void gt_bind_payload(sqlite3_stmt *s, int col, uint8_t type, uint64_t v)
{
    switch (type) {
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
    sqlite3_bind_int64(s, col + 1, type);
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

/* ---- rows, GT_BATCH_ROWS to a statement ---- */

static void gt_nvtx_bind_range(sqlite3_stmt *s, int c, const struct gt_nvtx_range *r)
{
    sqlite3_bind_int64(s, c, r->row);
    sqlite3_bind_int64(s, c + 1, r->depth < 0 ? 1 : 0);
    sqlite3_bind_int64(s, c + 2, r->tid);
    gt_bind_id(s, c + 3, r->end_tid);
    gt_bind_id(s, c + 4, r->domain);
    sqlite3_bind_int64(s, c + 5, r->category);
    gt_bind_id(s, c + 6, r->name);
    sqlite3_bind_int64(s, c + 7, (int64_t)r->start_ns);
    if (r->end_tid)
        sqlite3_bind_int64(s, c + 8, (int64_t)r->end_ns);
    else
        sqlite3_bind_null(s, c + 8);
    if (r->depth >= 0)
        sqlite3_bind_int64(s, c + 9, r->depth);
    else
        sqlite3_bind_null(s, c + 9);
    gt_bind_id(s, c + 10, (uint64_t)r->parent);
    gt_bind_payload(s, c + 11, r->payload_type, r->payload);
    gt_bind_id(s, c + 13, r->stack_id);
    gt_bind_id(s, c + 14, r->pystack_id);
}

static void gt_nvtx_flush(struct gt_writer *w, struct gt_nvtx_w *n)
{
    if (n->nbatch == GT_BATCH_ROWS) {
        for (int i = 0; i < GT_BATCH_ROWS; i++)
            gt_nvtx_bind_range(n->st[NS_RANGES], 1 + i * GT_NVTX_COLS, &n->batch[i]);
        gt_nvtx_step(w, n, NS_RANGES);
    } else {
        for (int i = 0; i < n->nbatch && !w->failed; i++) {
            gt_nvtx_bind_range(n->st[NS_RANGE], 1, &n->batch[i]);
            gt_nvtx_step(w, n, NS_RANGE);
        }
    }
    n->nbatch = 0;
}

static void gt_nvtx_store(struct gt_writer *w, struct gt_nvtx_w *n, const struct gt_nvtx_range *r)
{
    n->batch[n->nbatch++] = *r;
    if (n->nbatch == GT_BATCH_ROWS)
        gt_nvtx_flush(w, n);
}

static void gt_nvtx_range_from(struct gt_nvtx_range *r, const struct gt_event *e, int64_t row)
{
    r->row = row;
    r->parent = 0;
    r->depth = -1;
    r->tid = e->tid;
    r->end_tid = 0;
    r->domain = e->u.nvtx.domain;
    r->category = e->u.nvtx.category;
    r->name = e->u.nvtx.name;
    r->stack_id = e->stack_id;
    r->pystack_id = e->pystack_id;
    r->start_ns = e->start_ns;
    r->end_ns = 0;
    r->payload = e->u.nvtx.payload;
    r->payload_type = e->u.nvtx.payload_type;
}

/* ---- push/pop ---- */

static void gt_nvtx_push(struct gt_nvtx_w *n, const struct gt_event *e)
{
    struct gt_nvtx_stack *st = gt_nvtx_stack_of(n, e->tid, e->u.nvtx.domain, 1);
    if (!st) {
        n->not_kept++;
        return;
    }
    if (st->beyond || n->open_kept >= GT_NVTX_OPEN_MAX) {
        st->beyond++;
        n->not_kept++;
        return;
    }
    if (st->n == st->cap) {
        uint32_t cap = st->cap ? st->cap * 2 : 16;
        struct gt_nvtx_range *o = realloc(st->open, cap * sizeof(*o));
        if (!o) {
            st->beyond++;
            n->not_kept++;
            return;
        }
        st->open = o;
        st->cap = cap;
    }
    struct gt_nvtx_range *r = &st->open[st->n];
    gt_nvtx_range_from(r, e, ++n->next_row);
    r->depth = (int32_t)st->n;
    r->parent = st->n ? st->open[st->n - 1].row : 0;
    st->n++;
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
    struct gt_nvtx_range *r = &st->open[--st->n];
    n->open_kept--;
    r->end_ns = e->start_ns;
    r->end_tid = e->tid;
    gt_nvtx_store(w, n, r);
    if (!st->n) {
        /* Nothing open: the memory goes back, so threads that come and
         * go leave only their slot behind. */
        free(st->open);
        st->open = NULL;
        st->cap = 0;
    }
}

/* ---- start/end: range id -> open range, open addressing, deletion by
 * shifting back the entries after the removed one ---- */

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

/* 0, or -1 when it cannot be kept. */
static int gt_started_put(struct gt_nvtx_w *n, uint64_t id, const struct gt_nvtx_range *r)
{
    if (!id || n->open_kept >= GT_NVTX_OPEN_MAX ||
        (n->started_count * 2 >= n->started_cap && gt_started_grow(n) < 0))
        return -1;
    size_t j = gt_mix(id) & (n->started_cap - 1);
    while (n->started[j].id && n->started[j].id != id)
        j = (j + 1) & (n->started_cap - 1);
    if (n->started[j].id)
        return -1; /* ids are never reused */
    n->started_count++;
    n->open_kept++;
    n->started[j].id = id;
    n->started[j].r = *r;
    return 0;
}

/* Takes a started range out of the map into *out; 0: not there. */
static int gt_started_take(struct gt_nvtx_w *n, uint64_t id, struct gt_nvtx_range *out)
{
    if (!n->started_cap || !id)
        return 0;
    size_t mask = n->started_cap - 1, j = gt_mix(id) & mask;
    while (n->started[j].id && n->started[j].id != id)
        j = (j + 1) & mask;
    if (!n->started[j].id)
        return 0;
    *out = n->started[j].r;
    n->started[j].id = 0;
    n->started_count--;
    n->open_kept--;
    for (size_t k = (j + 1) & mask; n->started[k].id; k = (k + 1) & mask) {
        size_t home = gt_mix(n->started[k].id) & mask;
        /* Moves back when its home is not cyclically within (j, k]. */
        if ((k > j && (home <= j || home > k)) || (k < j && home <= j && home > k)) {
            n->started[j] = n->started[k];
            n->started[k].id = 0;
            j = k;
        }
    }
    return 1;
}

static void gt_nvtx_start(struct gt_writer *w, struct gt_nvtx_w *n, const struct gt_event *e)
{
    struct gt_nvtx_range r;
    gt_nvtx_range_from(&r, e, ++n->next_row);
    if (gt_started_put(n, e->u.nvtx.id, &r) < 0) {
        /* Written open at once: its end will be counted unmatched. */
        n->not_kept++;
        gt_nvtx_store(w, n, &r);
    }
}

/* 1 when the range was open and is now stored with its end. */
static int gt_nvtx_close_started(struct gt_writer *w, struct gt_nvtx_w *n, uint64_t id, uint64_t ns, uint32_t tid)
{
    struct gt_nvtx_range r;
    if (!gt_started_take(n, id, &r))
        return 0;
    r.end_ns = ns;
    r.end_tid = tid;
    gt_nvtx_store(w, n, &r);
    return 1;
}

static void gt_nvtx_end(struct gt_writer *w, struct gt_nvtx_w *n, const struct gt_event *e)
{
    if (gt_nvtx_close_started(w, n, e->u.nvtx.id, e->start_ns, e->tid))
        return;
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

/* The trace is being finished: every range still open is written open. */
static void gt_nvtx_store_open(struct gt_writer *w, struct gt_nvtx_w *n)
{
    for (size_t i = 0; i < n->stacks_cap; i++) {
        struct gt_nvtx_stack *st = &n->stacks[i];
        for (uint32_t k = 0; st->key && k < st->n; k++)
            gt_nvtx_store(w, n, &st->open[k]);
        st->n = 0;
    }
    for (size_t i = 0; i < n->started_cap; i++) {
        if (n->started[i].id)
            gt_nvtx_store(w, n, &n->started[i].r);
        n->started[i].id = 0;
    }
    n->started_count = 0;
    n->open_kept = 0;
}

void gt_writer_nvtx_after_drain(struct gt_writer *w, int last)
{
    struct gt_nvtx_w *n = w->nvtx;
    if (!n)
        return;
    uint32_t keep = 0;
    for (uint32_t i = 0; i < n->nwaiting; i++) {
        struct gt_nvtx_waiting *x = &n->waiting[i];
        if (gt_nvtx_close_started(w, n, x->id, x->ns, x->tid))
            continue;
        if (last || ++x->age > 2)
            n->unmatched_ends++;
        else
            n->waiting[keep++] = *x;
    }
    n->nwaiting = keep;
    if (last)
        gt_nvtx_store_open(w, n);
}

void gt_writer_nvtx_flush(struct gt_writer *w)
{
    if (w->nvtx && w->nvtx->nbatch && !w->failed)
        gt_nvtx_flush(w, w->nvtx);
}

static void gt_nvtx_mark(struct gt_writer *w, struct gt_nvtx_w *n, const struct gt_event *e)
{
    sqlite3_stmt *s = n->st[NS_MARK];
    sqlite3_bind_int64(s, 1, e->tid);
    gt_bind_id(s, 2, e->u.nvtx.domain);
    sqlite3_bind_int64(s, 3, e->u.nvtx.category);
    gt_bind_id(s, 4, e->u.nvtx.name);
    sqlite3_bind_int64(s, 5, (int64_t)e->start_ns);
    gt_bind_payload(s, 6, e->u.nvtx.payload_type, e->u.nvtx.payload);
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
        gt_nvtx_push(n, e);
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
    meta(w, "nvtx_ranges_not_kept", n->not_kept);
    meta(w, "nvtx_truncated_strings", gt_nvtx_truncated());
    meta(w, "nvtx_dropped_strings", gt_nvtx_strings_dropped());
}

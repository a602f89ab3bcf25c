/* gt_samples.c: host samples joined to the GPU's idle gaps (docs/report.md,
 * "Host during the gap" and "GPU idle by host stack").
 *
 * A gap's launching thread is the thread of the last call making GPU work
 * (a launch, copy, memset or graph launch) that started inside the gap:
 * the host was late with that call, and what that thread was doing
 * meanwhile is the answer. Its samples inside the gap are grouped by what
 * they show (the innermost Python frame, else the native frame, and the
 * thread's state), and each gap's time is shared among its samples evenly
 * for the by-stack table. Samples are few (hz x threads x seconds), so
 * they are held in memory; the calls are read once, kept only when they
 * start inside a listed gap. */
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/gt_analyze.h"
#include "analysis/gt_flame.h"
#include "analysis/gt_samples_int.h"
#include "base/gt_map.h"

/* A distinct (state, syscall, Python stack, native stack): its text and
 * the flame graph's leaf for it; running ones, as gt_smp says, their
 * frame and their name and leaf in a gap whose launching thread waited. */
struct gt_kind {
    uint32_t text, leaf, where, wkey, wleaf;
    uint8_t driver;
};

#define GT_WAITED_STATE GT_HOST_WAITED
static const char *const gt_hcls_text[GT_HCLS] = {"running Python", "running native code", "blocked in I/O",
                                                 "sleeping", "waiting on a lock", "in a system call", "waiting"};

struct gt_texts {
    char (*v)[GT_HOST_TEXT];
    size_t n, cap;
    struct gt_map of;   /* text hash -> index + 1 */
};

static long gt_text_add(struct gt_texts *t, const char *s)
{
    uint64_t h = gt_map_hash_text(s) | 1;
    int64_t *slot = gt_map_at(&t->of, h);
    if (!slot)
        return -1;
    /* a hash collision keeps the first text: both read as one row */
    if (*slot)
        return (long)(*slot - 1);
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 64;
        void *v = realloc(t->v, cap * sizeof(*t->v));
        if (!v)
            return -1;
        t->v = v;
        t->cap = cap;
    }
    snprintf(t->v[t->n], GT_HOST_TEXT, "%s", s);
    *slot = (int64_t)++t->n;
    return (long)(t->n - 1);
}

static const char *gt_base(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* A module of the system's (libc, the loader, libpthread...), skipped
 * for the program's own frame when there is one. */
static int gt_system_module(const char *m)
{
    return strncmp(m, "/lib/", 5) == 0 || strncmp(m, "/lib64/", 7) == 0 || strncmp(m, "/usr/lib/", 9) == 0 ||
           strncmp(m, "/usr/lib64/", 11) == 0;
}

/* Source of the system's headers (libstdc++'s, libc's, the compiler's):
 * a function inlined from them into the program, as
 * std::this_thread::sleep_for or std::condition_variable::wait are, is
 * plumbing on the way to libc, not the program's own frame. */
static int gt_system_source(const char *f)
{
    return strncmp(f, "/usr/include/", 13) == 0 || strncmp(f, "/usr/lib/", 9) == 0;
}

static int gt_is_io(const char *sc)
{
    static const char *const io[] = {"read", "write", "pread64", "pwrite64", "readv", "writev", "poll", "ppoll",
                                     "select", "pselect6", "epoll_wait", "epoll_pwait", "epoll_pwait2", "accept",
                                     "accept4", "recvfrom", "recvmsg", "recvmmsg", "sendto", "sendmsg", "sendmmsg",
                                     "fsync", "fdatasync", "openat", "io_uring_enter"};
    for (size_t i = 0; i < sizeof(io) / sizeof(io[0]); i++)
        if (strcmp(sc, io[i]) == 0)
            return 1;
    return 0;
}

/* select, pselect6, poll or ppoll on no descriptors: a sleep, named so
 * by the tracer (syscall_names, schema 7). */
static int gt_is_no_fds(const char *sc)
{
    size_t n = strlen(sc), k = strlen(" (no fds)");
    return n > k && strcmp(sc + n - k, " (no fds)") == 0;
}

/* A Python frame's name: "FILE:LINE in FUNCTION", FILE's last component. */
static void gt_py_name(char *out, size_t len, sqlite3_stmt *st)
{
    const char *file = (const char *)sqlite3_column_text(st, 0);
    const char *fn = (const char *)sqlite3_column_text(st, 1);
    if (sqlite3_column_type(st, 2) == SQLITE_NULL)
        snprintf(out, len, "%.100s in %.100s", gt_base(file ? file : "?"), fn ? fn : "?");
    else
        snprintf(out, len, "%.100s:%d in %.100s", gt_base(file ? file : "?"), sqlite3_column_int(st, 2),
                 fn ? fn : "?");
}

/* A native frame's name (columns function, module, file, line):
 * "FILE:LINE in FUNCTION" where the line is known, else "FUNCTION (MODULE)". */
static void gt_native_name(char *out, size_t len, sqlite3_stmt *st)
{
    const char *fn = (const char *)sqlite3_column_text(st, 0);
    const char *mod = (const char *)sqlite3_column_text(st, 1);
    const char *file = (const char *)sqlite3_column_text(st, 2);
    if (file && *file && sqlite3_column_type(st, 3) != SQLITE_NULL)
        snprintf(out, len, "%.100s:%d in %.100s", gt_base(file), sqlite3_column_int(st, 3), fn ? fn : "?");
    else
        snprintf(out, len, "%.120s (%.80s)", fn ? fn : "?", gt_base(mod ? mod : "?"));
}

/* The text and class of one distinct (state, syscall, Python stack,
 * native stack). */
static int gt_describe(sqlite3 *db, int state, const char *syscall, int64_t pystack, int64_t stack, char *out,
                       size_t len, uint8_t *cls)
{
    char where[GT_HOST_TEXT] = "";
    sqlite3_stmt *st;
    if (pystack && sqlite3_prepare_v2(db, "SELECT file, function, line FROM py_stack_frames "
                                          "WHERE pystack_id = ? ORDER BY depth LIMIT 1", -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_int64(st, 1, pystack);
        if (sqlite3_step(st) == SQLITE_ROW)
            gt_py_name(where, sizeof(where), st);
        sqlite3_finalize(st);
    }
    /* native: the innermost frame outside the system's libraries and
     * headers (the program's function that called into libc), else the
     * innermost */
    if (!where[0] && stack &&
        sqlite3_prepare_v2(db, "SELECT function, module, file, line FROM stack_frames WHERE stack_id = ? "
                               "ORDER BY depth", -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_int64(st, 1, stack);
        int first = 1;
        while (sqlite3_step(st) == SQLITE_ROW) {
            const char *mod = (const char *)sqlite3_column_text(st, 1);
            const char *file = (const char *)sqlite3_column_text(st, 2);
            int sys = !mod || gt_system_module(mod) || (file && gt_system_source(file));
            if (!first && sys)
                continue;
            gt_native_name(where, sizeof(where), st);
            if (!sys)
                break;
            first = 0;
        }
        sqlite3_finalize(st);
    }
    if (!where[0])
        snprintf(where, sizeof(where), "(no stack)");
    if (state == 0) {
        snprintf(out, len, "%.200s (running)", where);
        *cls = pystack ? GT_HC_PYTHON : GT_HC_NATIVE;
    } else if (state == 1) {
        snprintf(out, len, "%.180s (blocked in %.40s)", where, syscall ? syscall : "?");
        const char *sc = syscall ? syscall : "";
        *cls = gt_is_io(sc) ? GT_HC_IO
             : strcmp(sc, "nanosleep") == 0 || strcmp(sc, "clock_nanosleep") == 0 || strcmp(sc, "pause") == 0 ||
                       gt_is_no_fds(sc)
                 ? GT_HC_SLEEP
             : strcmp(sc, "futex") == 0 ? GT_HC_LOCK : GT_HC_SYSCALL;
    } else {
        snprintf(out, len, "%.200s (waiting)", where);
        *cls = GT_HC_WAITING;
    }
    return 0;
}

/* The kind of a sample: its state, call and stacks. */
static uint64_t gt_sample_kind(int state, const char *syscall, int64_t pystack, int64_t stack)
{
    return gt_map_hash_text(syscall ? syscall : "") ^ ((uint64_t)pystack * 0x9E3779B97F4A7C15ull) ^
           ((uint64_t)stack * 0xC2B2AE3D27D4EB4Full) ^ ((uint64_t)state << 61) ^ 1;
}

static int gt_state_of(const char *state)
{
    return state && strcmp(state, "running") == 0 ? 0 : state && strcmp(state, "syscall") == 0 ? 1 : 2;
}

/* The flame graph's leaf for one distinct sample: its Python frames
 * outermost first, then its native frames, then its state (or `last`,
 * where not NULL). -1: out of memory or unreadable. */
static long gt_flame_path(struct gt_flame_b *f, sqlite3 *db, int state, const char *syscall, int64_t pystack,
                          int64_t stack, const char *last)
{
    static const char *const sql[2] = {
        "SELECT file, function, line FROM py_stack_frames WHERE pystack_id = ? ORDER BY depth DESC",
        "SELECT function, module, file, line FROM stack_frames WHERE stack_id = ? ORDER BY depth DESC"};
    const int64_t id[2] = {pystack, stack};
    long node = 0;
    for (int k = 0; k < 2; k++) {
        sqlite3_stmt *st;
        if (!id[k])
            continue;
        if (sqlite3_prepare_v2(db, sql[k], -1, &st, NULL) != SQLITE_OK)
            return -1;
        sqlite3_bind_int64(st, 1, id[k]);
        while (node >= 0 && sqlite3_step(st) == SQLITE_ROW) {
            char name[GT_HOST_TEXT];
            if (k == 0)
                gt_py_name(name, sizeof(name), st);
            else
                gt_native_name(name, sizeof(name), st);
            node = gt_flame_child(f, (uint32_t)node, name, k == 0 ? GT_FK_PYTHON : GT_FK_NATIVE);
        }
        sqlite3_finalize(st);
    }
    if (node < 0)
        return -1;
    char leaf[64];
    if (last)
        snprintf(leaf, sizeof(leaf), "%s", last);
    else if (state == 0)
        snprintf(leaf, sizeof(leaf), "(running)");
    else if (state == 1)
        snprintf(leaf, sizeof(leaf), "(blocked in %.40s)", syscall ? syscall : "?");
    else
        snprintf(leaf, sizeof(leaf), "(waiting)");
    return gt_flame_child(f, (uint32_t)node, leaf, GT_FK_STATE);
}

static int gt_smp_cmp(const void *a, const void *b)
{
    const struct gt_smp *x = a, *y = b;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    return x->ns < y->ns ? -1 : x->ns > y->ns;
}

static int gt_row_cmp(const void *a, const void *b)
{
    const struct gt_host_stack_row *x = a, *y = b;
    if (x->idle_ns != y->idle_ns)
        return x->idle_ns > y->idle_ns ? -1 : 1;
    return strcmp(x->text, y->text);
}

/* Gap indices by start, for finding the gaps a call starts in. */
static __thread const struct gt_report *gt_sort_r; /* per thread: report -j analyses traces on several */
static int gt_gap_start_cmp(const void *a, const void *b)
{
    uint64_t x = gt_sort_r->gaps[*(const size_t *)a].start_ns, y = gt_sort_r->gaps[*(const size_t *)b].start_ns;
    return x < y ? -1 : x > y;
}

/* Each gap's launching thread: the last work-making call started inside. */
static int gt_launchers(struct gt_trace *t, struct gt_report *r, uint64_t *best)
{
    size_t *order = malloc(r->ngaps * sizeof(*order));
    if (!order)
        return -1;
    for (size_t i = 0; i < r->ngaps; i++)
        order[i] = i;
    gt_sort_r = r;
    qsort(order, r->ngaps, sizeof(*order), gt_gap_start_cmp);
    uint64_t maxdur = 0;
    for (size_t i = 0; i < r->ngaps; i++)
        if (r->gaps[i].dur_ns > maxdur)
            maxdur = r->gaps[i].dur_ns;
    sqlite3_stmt *st;
    int rc = sqlite3_prepare_v2(t->db,
                                "SELECT e.start_ns, e.tid FROM events e JOIN api_names n ON n.id = e.api_id "
                                "WHERE n.category IN ('launch', 'memcpy', 'memset', 'graph_launch')",
                                -1, &st, NULL);
    if (rc != SQLITE_OK) {
        free(order);
        gt_trace_sql_error(t, "host samples");
        return -1;
    }
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        uint64_t s = (uint64_t)sqlite3_column_int64(st, 0);
        int64_t tid = sqlite3_column_int64(st, 1);
        /* the last gap starting at or before s, then back while a gap
         * that starts earlier may still cover s (other devices) */
        size_t lo = 0, hi = r->ngaps;
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (r->gaps[order[mid]].start_ns <= s)
                lo = mid + 1;
            else
                hi = mid;
        }
        for (size_t k = lo; k-- > 0;) {
            struct gt_gap *g = &r->gaps[order[k]];
            if (g->start_ns + maxdur < s)
                break;
            if (s <= g->start_ns + g->dur_ns && (g->host_tid < 0 || s >= best[order[k]])) {
                g->host_tid = tid;
                best[order[k]] = s;
            }
        }
    }
    sqlite3_finalize(st);
    free(order);
    if (rc != SQLITE_DONE) {
        gt_trace_sql_error(t, "host samples");
        return -1;
    }
    return 0;
}

/* A running kind's frame alone, and its name and flame graph leaf in a
 * gap whose launching thread waited: 0, or -1 out of memory. */
static int gt_waited_names(struct gt_texts *texts, struct gt_flame_b *f, sqlite3 *db, const char *text,
                           const char *sc, int64_t py, int64_t nat, struct gt_kind *kd)
{
    char where[GT_HOST_TEXT], wtext[GT_HOST_TEXT + 64];
    size_t len = strlen(text), k = strlen(" (running)");
    snprintf(where, sizeof(where), "%.*s", (int)(len > k ? len - k : len), text);
    snprintf(wtext, sizeof(wtext), "%.180s %s", where, GT_WAITED_STATE);
    long w = gt_text_add(texts, where), wk = gt_text_add(texts, wtext);
    long leaf = gt_flame_path(f, db, 0, sc, py, nat, GT_WAITED_STATE);
    if (w < 0 || wk < 0 || leaf < 0)
        return -1;
    kd->where = (uint32_t)w;
    kd->wkey = (uint32_t)wk;
    kd->wleaf = (uint32_t)leaf;
    return 0;
}

static int gt_count_cmp(const void *a, const void *b)
{
    const struct gt_count *x = a, *y = b;
    if (x->n != y->n)
        return x->n > y->n ? -1 : 1;
    return x->key < y->key ? -1 : x->key > y->key;
}

int gt_host_samples(struct gt_trace *t, struct gt_report *r)
{
    for (size_t i = 0; i < r->ngaps; i++)
        r->gaps[i].host_tid = -1;
    if (t->schema_version < 7)
        return 0;
    int64_t nsamples = 0;
    if (gt_trace_int(t, "SELECT count(*) FROM samples", &nsamples) < 0)
        return -1;
    if (!nsamples)
        return 0;
    r->has_samples = 1;
    struct gt_smp *smp = malloc((size_t)nsamples * sizeof(*smp));
    uint64_t *best = calloc(r->ngaps + 1, sizeof(*best));
    struct gt_texts texts = {0};
    struct gt_map keys = {0};   /* distinct sample kind -> kind index + 1 */
    struct gt_kind *kinds = NULL;
    size_t nkinds = 0, kinds_cap = 0;
    uint8_t *cls_of = NULL;     /* by text index */
    size_t cls_cap = 0;
    struct gt_flame_b flame = {0};
    struct gt_tid_runs runs = {0};
    struct gt_count *counts = NULL, *leaves = NULL;
    uint64_t *row_idle = NULL, *row_samples = NULL, *row_gaps = NULL;
    int ok = 0;
    sqlite3_stmt *st = NULL;
    if (!smp || !best || gt_flame_init(&flame, "all listed gaps") < 0)
        goto out;
    if (sqlite3_prepare_v2(t->db, "SELECT tid, ns, state, syscall, COALESCE(pystack_id, 0), COALESCE(stack_id, 0) "
                                  "FROM host_samples", -1, &st, NULL) != SQLITE_OK) {
        gt_trace_sql_error(t, "host samples");
        goto out;
    }
    size_t n = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW && n < (size_t)nsamples) {
        int stv = gt_state_of((const char *)sqlite3_column_text(st, 2));
        const char *sc = (const char *)sqlite3_column_text(st, 3);
        int64_t py = sqlite3_column_int64(st, 4), nat = sqlite3_column_int64(st, 5);
        uint64_t k = gt_sample_kind(stv, sc, py, nat);
        int64_t *slot = gt_map_at(&keys, k);
        if (!slot)
            goto out;
        if (!*slot) {
            char text[GT_HOST_TEXT];
            uint8_t cls;
            gt_describe(t->db, stv, sc, py, nat, text, sizeof(text), &cls);
            long ti = gt_text_add(&texts, text);
            if (ti < 0)
                goto out;
            if ((size_t)ti >= cls_cap) {
                size_t cap = cls_cap ? cls_cap * 2 : 64;
                while (cap <= (size_t)ti)
                    cap *= 2;
                uint8_t *c = realloc(cls_of, cap);
                if (!c)
                    goto out;
                cls_of = c;
                cls_cap = cap;
            }
            cls_of[ti] = cls;
            long leaf = gt_flame_path(&flame, t->db, stv, sc, py, nat, NULL);
            if (leaf < 0)
                goto out;
            struct gt_kind kd = {(uint32_t)ti, (uint32_t)leaf, 0, 0, 0, 0};
            kd.driver = nat ? (uint8_t)gt_driver_stack(t->db, nat) : 0;
            if (stv == 0 && gt_waited_names(&texts, &flame, t->db, text, sc, py, nat, &kd) < 0)
                goto out;
            if (nkinds == kinds_cap) {
                size_t cap = kinds_cap ? kinds_cap * 2 : 64;
                void *v = realloc(kinds, cap * sizeof(*kinds));
                if (!v)
                    goto out;
                kinds = v;
                kinds_cap = cap;
            }
            kinds[nkinds++] = kd;
            slot = gt_map_at(&keys, k); /* the other maps are others; this slot stands */
            *slot = (int64_t)nkinds;
        }
        const struct gt_kind *kd = &kinds[*slot - 1];
        smp[n].tid = sqlite3_column_int64(st, 0);
        smp[n].ns = (uint64_t)sqlite3_column_int64(st, 1);
        smp[n].key = kd->text;
        smp[n].leaf = kd->leaf;
        smp[n].cls = cls_of[kd->text];
        smp[n].where = kd->where;
        smp[n].wkey = kd->wkey;
        smp[n].wleaf = kd->wleaf;
        smp[n].driver = kd->driver;
        n++;
    }
    sqlite3_finalize(st);
    st = NULL;
    if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
        gt_trace_sql_error(t, "host samples");
        goto out;
    }
    qsort(smp, n, sizeof(*smp), gt_smp_cmp);
    if (r->ngaps && gt_launchers(t, r, best) < 0)
        goto out;
    if (gt_tid_runs_make(&runs, smp, n) < 0)
        goto out;

    /* rows: one per text, and "(no samples)" last */
    size_t nrows = texts.n + 1;
    counts = malloc((n + 1) * sizeof(*counts));
    leaves = malloc((n + 1) * sizeof(*leaves));
    long nosamples = gt_flame_child(&flame, 0, "(no samples)", GT_FK_NONE);
    row_idle = calloc(nrows, sizeof(*row_idle));
    row_samples = calloc(nrows, sizeof(*row_samples));
    row_gaps = calloc(nrows, sizeof(*row_gaps));
    if (!counts || !leaves || nosamples < 0 || !row_idle || !row_samples || !row_gaps)
        goto out;
    for (size_t i = 0; i < r->ngaps; i++) {
        struct gt_gap *g = &r->gaps[i];
        r->host_idle_ns += g->dur_ns;
        size_t first = n, last = n;
        if (g->host_tid >= 0) {
            struct gt_smp key = {.tid = g->host_tid, .ns = g->start_ns};
            size_t lo = 0, hi = n;
            while (lo < hi) {
                size_t mid = (lo + hi) / 2;
                if (gt_smp_cmp(&smp[mid], &key) < 0)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            first = last = lo;
            while (last < n && smp[last].tid == g->host_tid && smp[last].ns <= g->start_ns + g->dur_ns)
                last++;
        }
        size_t m = last - first;
        g->host_samples = m;
        if (!m) {
            row_idle[texts.n] += g->dur_ns;
            row_gaps[texts.n]++;
            gt_flame_add(&flame, (uint32_t)nosamples, g->dur_ns, 0);
            continue;
        }
        size_t nc = 0, nl = 0;
        uint64_t bycls[GT_HCLS] = {0};
        for (size_t j = first; j < last; j++) {
            bycls[smp[j].cls]++;
            size_t c = 0;
            while (c < nc && counts[c].key != smp[j].key)
                c++;
            if (c == nc)
                counts[nc++] = (struct gt_count){smp[j].key, 0, 0};
            counts[c].n++;
            for (c = 0; c < nl && leaves[c].key != smp[j].leaf; c++)
                ;
            if (c == nl)
                leaves[nl++] = (struct gt_count){smp[j].leaf, 0, 0};
            leaves[c].n++;
        }
        qsort(counts, nc, sizeof(*counts), gt_count_cmp);
        for (size_t c = 0; c < nc && c < GT_GAP_HOST; c++) {
            snprintf(g->host[c].text, sizeof(g->host[c].text), "%s", texts.v[counts[c].key]);
            g->host[c].pct = 100.0 * (double)counts[c].n / (double)m;
            g->nhost = (int)c + 1;
        }
        for (int c = 0; c < GT_HCLS; c++)
            if (bycls[c] * 2 > m)
                snprintf(g->host_state, sizeof(g->host_state), "%s", gt_hcls_text[c]);
        /* Each sample's share of the gap is its weight over den: 1 over
         * m, unless the launching thread waited (on a lock, a queue, a
         * condition, an event, or asleep; w of its m samples) while other
         * threads ran (k running samples): then the waiting part goes to
         * them, as far as they ran: moved = min(k, w) of its waiting
         * samples' worth, shared among the k (docs/report.md). */
        unsigned __int128 den = m;
        for (size_t c = 0; c < nc; c++)
            counts[c].w = counts[c].n;
        for (size_t c = 0; c < nl; c++)
            leaves[c].w = leaves[c].n;
        uint64_t w = bycls[GT_HC_LOCK] + bycls[GT_HC_SLEEP];
        g->waited = g->cause == GT_CAUSE_HOST && w * 2 > m; /* outside CUDA: inside, its calls are named */
        size_t nk = 0, nlv = 0;
        uint64_t k = g->waited ? gt_gap_others(&runs, smp, g, (const char(*)[GT_HOST_TEXT])texts.v, counts + nc,
                                               &nk, leaves + nl, &nlv)
                               : 0;
        if (k) {
            uint64_t moved = k < w ? k : w;
            den = (unsigned __int128)m * w * k;
            r->waited_idle_ns += (uint64_t)((unsigned __int128)g->dur_ns * moved / m);
            for (size_t c = 0; c < nc; c++)
                counts[c].w = 0;
            for (size_t c = 0; c < nl; c++)
                leaves[c].w = 0;
            for (size_t j = first; j < last; j++) {
                int waits = smp[j].cls == GT_HC_LOCK || smp[j].cls == GT_HC_SLEEP;
                uint64_t wt = waits ? k * (w - moved) : w * k;
                size_t c = 0;
                while (counts[c].key != smp[j].key)
                    c++;
                counts[c].w += wt;
                for (c = 0; leaves[c].key != smp[j].leaf; c++)
                    ;
                leaves[c].w += wt;
            }
            for (size_t c = nc; c < nc + nk; c++)
                counts[c].w = counts[c].n * w * moved;
            for (size_t c = nl; c < nl + nlv; c++)
                leaves[c].w = leaves[c].n * w * moved;
            nc += nk;
            nl += nlv;
        }
        /* the flame graph shares the gap by path, as the table by name:
         * kinds that read the same path share one rounding */
        for (size_t c = 0; c < nl; c++)
            if (leaves[c].w)
                gt_flame_add(&flame, leaves[c].key, (uint64_t)((unsigned __int128)g->dur_ns * leaves[c].w / den),
                             leaves[c].n);
        for (size_t c = 0; c < nc; c++) {
            if (!counts[c].w)
                continue; /* waiting samples whose time went to the threads that ran */
            /* the gap's time, shared by the samples' weights (to the ns
             * below: the rows may sum to a few ns less than the gaps) */
            uint64_t share = (uint64_t)((unsigned __int128)g->dur_ns * counts[c].w / den);
            row_idle[counts[c].key] += share;
            row_samples[counts[c].key] += counts[c].n;
            row_gaps[counts[c].key]++;
        }
    }
    size_t nout = 0;
    for (size_t i = 0; i < nrows; i++)
        nout += row_gaps[i] > 0;
    if (nout && !(r->host_stacks = calloc(nout, sizeof(*r->host_stacks))))
        goto out;
    for (size_t i = 0; i < nrows; i++) {
        if (!row_gaps[i])
            continue;
        struct gt_host_stack_row *x = &r->host_stacks[r->nhost_stacks++];
        snprintf(x->text, sizeof(x->text), "%s", i < texts.n ? texts.v[i] : "(no samples)");
        x->idle_ns = row_idle[i];
        x->samples = row_samples[i];
        x->gaps = row_gaps[i];
        x->pct = r->host_idle_ns ? 100.0 * (double)x->idle_ns / (double)r->host_idle_ns : 0;
    }
    if (r->nhost_stacks > 1)
        qsort(r->host_stacks, r->nhost_stacks, sizeof(*r->host_stacks), gt_row_cmp);
    gt_flame_set_root(&flame, r->host_idle_ns);
    if (gt_flame_finish(&flame, r) < 0)
        goto out;
    ok = 1;
out:
    if (st)
        sqlite3_finalize(st);
    if (!ok && !r->host_stacks)
        fprintf(stderr, "gputrace: %s: host samples: out of memory or unreadable\n", t->path);
    free(smp);
    free(best);
    free(texts.v);
    gt_map_free(&texts.of);
    gt_map_free(&keys);
    free(cls_of);
    free(kinds);
    gt_flame_free(&flame);
    gt_tid_runs_free(&runs);
    free(counts);
    free(leaves);
    free(row_idle);
    free(row_samples);
    free(row_gaps);
    return ok ? 0 : -1;
}

int gt_host_stack_match(const char *pattern, const char *text)
{
    if (!strpbrk(pattern, "*?["))
        return strstr(text, pattern) != NULL;
    return fnmatch(pattern, text, 0) == 0;
}

double gt_host_stack_pct(const struct gt_report *r, const char *pattern, uint64_t *idle_ns)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < r->nhost_stacks; i++)
        if (gt_host_stack_match(pattern, r->host_stacks[i].text))
            sum += r->host_stacks[i].idle_ns;
    *idle_ns = sum;
    return r->host_idle_ns ? 100.0 * (double)sum / (double)r->host_idle_ns : 0;
}

const char *gt_sample_name(struct gt_sample_names *c, sqlite3 *db, const char *state, const char *syscall,
                           int64_t pystack, int64_t stack)
{
    int stv = gt_state_of(state);
    int64_t *slot = gt_map_at(&c->of, gt_sample_kind(stv, syscall, pystack, stack));
    if (!slot)
        return NULL;
    if (*slot)
        return c->v[*slot - 1];
    char text[GT_HOST_TEXT];
    uint8_t cls;
    gt_describe(db, stv, syscall, pystack, stack, text, sizeof(text), &cls);
    char **v = realloc(c->v, (c->n + 1) * sizeof(*v));
    if (!v)
        return NULL;
    c->v = v;
    if (!(v[c->n] = strdup(text)))
        return NULL;
    *slot = (int64_t)++c->n;
    return v[c->n - 1];
}

void gt_sample_names_free(struct gt_sample_names *c)
{
    for (size_t i = 0; i < c->n; i++)
        free(c->v[i]);
    free(c->v);
    gt_map_free(&c->of);
    memset(c, 0, sizeof(*c));
}

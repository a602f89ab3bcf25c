/* gt_samples_wait.c: what the other threads did while a gap's launching
 * thread waited (docs/report.md, "Host during the gap"): the thread that
 * ended the gap was blocked on a lock, a queue, a condition, an event or
 * asleep, most often on another thread's behalf; the threads that ran
 * meanwhile are the ones the GPU waited on. Each of their running samples
 * inside the gap (ends included) counts once; a thread's share is its
 * count over all of theirs. */
#include <stdlib.h>
#include <string.h>

#include "analysis/gt_samples_int.h"

int gt_driver_stack(sqlite3 *db, int64_t stack)
{
    static const char *const cuda[] = {"libcuda.so", "libcudart.so", "libcupti.so", "libnvidia-"};
    sqlite3_stmt *st;
    int driver = 0;
    if (sqlite3_prepare_v2(db, "SELECT module FROM stack_frames WHERE stack_id = ? ORDER BY depth DESC", -1, &st,
                           NULL) != SQLITE_OK)
        return 0;
    sqlite3_bind_int64(st, 1, stack);
    /* outermost first: CUDA's libraries count wherever they lie (the
     * driver is installed under /usr/lib), the system's others are
     * skipped (libc's start_thread, clone) */
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *m = (const char *)sqlite3_column_text(st, 0);
        if (!m)
            continue;
        const char *b = strrchr(m, '/');
        b = b ? b + 1 : m;
        for (size_t i = 0; i < sizeof(cuda) / sizeof(cuda[0]); i++)
            driver |= strncmp(b, cuda[i], strlen(cuda[i])) == 0;
        if (driver || !(strncmp(m, "/lib/", 5) == 0 || strncmp(m, "/lib64/", 7) == 0 ||
                        strncmp(m, "/usr/lib/", 9) == 0 || strncmp(m, "/usr/lib64/", 11) == 0))
            break;
    }
    sqlite3_finalize(st);
    return driver;
}

int gt_tid_runs_make(struct gt_tid_runs *t, const struct gt_smp *smp, size_t n)
{
    memset(t, 0, sizeof(*t));
    size_t cap = 0;
    for (size_t i = 0; i < n; i++) {
        if (t->n && t->v[t->n - 1].tid == smp[i].tid) {
            t->v[t->n - 1].last = i + 1;
            t->v[t->n - 1].driver |= smp[i].driver;
            continue;
        }
        if (t->n == cap) {
            cap = cap ? cap * 2 : 16;
            void *v = realloc(t->v, cap * sizeof(*t->v));
            if (!v)
                return -1;
            t->v = v;
        }
        t->v[t->n++] = (struct gt_tid_run){smp[i].tid, i, i + 1, smp[i].driver};
    }
    return 0;
}

void gt_tid_runs_free(struct gt_tid_runs *t)
{
    free(t->v);
    memset(t, 0, sizeof(*t));
}

static void gt_tally(struct gt_count *c, size_t *nc, uint32_t key)
{
    size_t i = 0;
    while (i < *nc && c[i].key != key)
        i++;
    if (i == *nc)
        c[(*nc)++] = (struct gt_count){key, 0, 0};
    c[i].n++;
}

static int gt_other_cmp(const void *a, const void *b)
{
    const struct gt_gap_other *x = a, *y = b;
    if (x->samples != y->samples)
        return x->samples > y->samples ? -1 : 1;
    return x->tid < y->tid ? -1 : x->tid > y->tid;
}

uint64_t gt_gap_others(const struct gt_tid_runs *runs, const struct gt_smp *smp, struct gt_gap *g,
                       const char (*texts)[GT_HOST_TEXT], struct gt_count *keys, size_t *nkeys,
                       struct gt_count *leaves, size_t *nleaves)
{
    uint64_t total = 0, end = g->start_ns + g->dur_ns;
    *nkeys = *nleaves = 0;
    g->nothers = 0;
    struct gt_gap_other top[GT_GAP_OTHERS + 1];
    int ntop = 0;
    for (size_t r = 0; r < runs->n; r++) {
        const struct gt_tid_run *run = &runs->v[r];
        if (run->tid == g->host_tid || run->driver)
            continue;
        size_t lo = run->first, hi = run->last;
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (smp[mid].ns < g->start_ns)
                lo = mid + 1;
            else
                hi = mid;
        }
        uint64_t mine = 0;
        size_t nwhere = 0;
        struct gt_count where[64];
        for (size_t j = lo; j < run->last && smp[j].ns <= end; j++) {
            if (smp[j].cls != GT_HC_PYTHON && smp[j].cls != GT_HC_NATIVE)
                continue;
            mine++;
            gt_tally(keys, nkeys, smp[j].wkey);
            gt_tally(leaves, nleaves, smp[j].wleaf);
            /* past 64 frames in one gap, new ones are not counted:
             * the most common one is among the first long before */
            size_t w = 0;
            while (w < nwhere && where[w].key != smp[j].where)
                w++;
            if (w < nwhere)
                where[w].n++;
            else if (nwhere < 64)
                where[nwhere++] = (struct gt_count){smp[j].where, 1, 0};
        }
        if (!mine)
            continue;
        total += mine;
        struct gt_gap_other o = {.tid = run->tid, .samples = mine};
        size_t best = 0;
        for (size_t w = 1; w < nwhere; w++)
            if (where[w].n > where[best].n ||
                (where[w].n == where[best].n && strcmp(texts[where[w].key], texts[where[best].key]) < 0))
                best = w;
        strncpy(o.frame, texts[where[best].key], sizeof(o.frame) - 1);
        o.frame[sizeof(o.frame) - 1] = 0;
        top[ntop++] = o;
        qsort(top, (size_t)ntop, sizeof(top[0]), gt_other_cmp);
        if (ntop > GT_GAP_OTHERS)
            ntop = GT_GAP_OTHERS;
    }
    g->others_samples = total;
    for (int i = 0; i < ntop; i++) {
        top[i].pct = total ? 100.0 * (double)top[i].samples / (double)total : 0;
        g->others[i] = top[i];
    }
    g->nothers = ntop;
    return total;
}

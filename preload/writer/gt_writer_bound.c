/* gt_writer_bound.c: GPUTRACE_MAX_SIZE=SIZE (:stop, the default): the
 * trace file's bound, kept by SQLite itself (max_page_count), so a write
 * that would pass it fails as on a full disk and recording stops with
 * what was committed. Three quarters of the bound go to the data, the
 * rest is kept for the indexes made at the end. (:last is the session's:
 * a flight recorder whose window is written at exit, session/gt_flight.c.)
 * The writer's lowest layer: SQLite's pragmas, nothing of the writer's
 * own (its settings go into meta with the process's, gt_writer_file.c). */
#include <stdio.h>

#include <sqlite3.h>

#include "base/gt_base.h"
#include "writer/gt_writer_int.h"

static int64_t gt_bound_pragma(struct gt_writer *w, const char *sql)
{
    sqlite3_stmt *q = NULL;
    int64_t v = -1;
    if (sqlite3_prepare_v2(w->db, sql, -1, &q, NULL) == SQLITE_OK && sqlite3_step(q) == SQLITE_ROW)
        v = sqlite3_column_int64(q, 0);
    sqlite3_finalize(q);
    return v;
}

static void gt_bound_set_pages(struct gt_writer *w, uint64_t bytes)
{
    int64_t page = gt_bound_pragma(w, "PRAGMA page_size");
    if (page <= 0)
        return;
    char sql[64];
    snprintf(sql, sizeof(sql), "PRAGMA max_page_count = %lld", (long long)(bytes / (uint64_t)page));
    gt_bound_pragma(w, sql);
}

void gt_writer_bound_setup(struct gt_writer *w)
{
    if (!w->cfg.max_size_bytes)
        return;
    /* :last writes what its rings hold, sized to fit: the bound is only a
     * safety net there. */
    gt_bound_set_pages(w, w->cfg.max_size_keep_last ? w->cfg.max_size_bytes : w->cfg.max_size_bytes / 4 * 3);
}

int gt_writer_at_bound(struct gt_writer *w)
{
    if (!w->cfg.max_size_bytes || !w->db)
        return 0;
    int64_t max = gt_bound_pragma(w, "PRAGMA max_page_count"), n = gt_bound_pragma(w, "PRAGMA page_count");
    return max > 0 && n >= 0 && n + 64 >= max;
}

void gt_writer_bound_release(struct gt_writer *w)
{
    if (w->cfg.max_size_bytes && w->db)
        gt_bound_set_pages(w, w->cfg.max_size_bytes);
}

/* gt_trace.h: opening a trace file read-only and checking it is one this
 * gputrace understands. Shared by every subcommand that reads traces. */
#ifndef GT_TRACE_H
#define GT_TRACE_H

#include <sqlite3.h>
#include <stdint.h>

/* The SQL for a call's site key, from a row `c` of calls or api_calls: its
 * native stack id in the low 32 bits, its Python stack id in the high.
 * Sites themselves are analysis/gt_site.h's. */
#define GT_SITE_KEY(c) "(COALESCE(" c ".stack_id, 0) | (COALESCE(" c ".pystack_id, 0) << 32))"

/* The newest trace schema this build reads (PRAGMA user_version). */
#define GT_SCHEMA_VERSION 9

struct gt_trace {
    sqlite3 *db;
    const char *path;
    int schema_version;
    /* Opened with immutable=1 because the -wal/-shm files could not be used:
     * anything still only in the write-ahead log is not visible. */
    int wal_skipped;
    /* A private copy of the trace and its write-ahead log, read instead of
     * the file when the log could not be used where it lies (a read-only
     * directory); removed by gt_trace_close. NULL when none. */
    char *copy_dir;
};

/* Opens and validates `path`. Returns 0, or GT_EXIT_USAGE (2) after printing
 * "gputrace: PATH: reason" to stderr. Never writes to the trace. */
int gt_trace_open(struct gt_trace *t, const char *path);
void gt_trace_close(struct gt_trace *t);

/* A meta value, malloc'ed; NULL when the key is absent or NULL. */
char *gt_trace_meta(struct gt_trace *t, const char *key);
/* A meta value parsed as an integer; `dflt` when absent or not a number. */
int64_t gt_trace_meta_int(struct gt_trace *t, const char *key, int64_t dflt);

/* Why recording stopped before its process ended, when the tracer could
 * say (meta.stop_reason, written when a write failed: a full disk, a
 * quota, a file size limit): "the disk was full (No space left on
 * device)", malloc'ed; NULL for a trace that does not say (finished, or
 * killed). */
char *gt_trace_stop_reason(struct gt_trace *t);

/* Runs a query returning one integer (NULL reads as 0). Returns 0, or -1
 * after printing the SQLite error. */
int gt_trace_int(struct gt_trace *t, const char *sql, int64_t *out);

/* Prints "gputrace: PATH: what: sqlite message" for a failed query. */
void gt_trace_sql_error(struct gt_trace *t, const char *what);

#endif

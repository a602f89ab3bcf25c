/* gt_merge.c: many traces into one SQLite file for SQL across ranks
 * (docs/ranks.md, SQL across ranks): each public view of each trace
 * becomes rows of a table of the same name, with the trace's rank first.
 * Columns are matched by name, so traces of different schema versions
 * merge (a column one lacks is NULL in its rows). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/gt_err.h"
#include "output/gt_merge.h"
#include "trace/gt_trace.h"

const char *const gt_merge_views[] = {"api_calls", "kernels", "memcpys", "memsets", "syncs", "allocations",
                                      "gpu_activity", "stack_frames", "py_stack_frames", "ranges", "marks",
                                      "thread_names", "stream_names", NULL};

static int gt_exec(sqlite3 *db, const char *sql, const char *out)
{
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) == SQLITE_OK)
        return 0;
    gt_err("%s: %s", out, msg ? msg : "error");
    sqlite3_free(msg);
    return -1;
}

/* Column names of t's view v (none: the trace has no such view). */
static int gt_columns(sqlite3 *db, const char *v, char ***cols, int *n)
{
    *cols = NULL;
    *n = 0;
    char *sql = sqlite3_mprintf("SELECT * FROM \"%w\" LIMIT 0", v);
    sqlite3_stmt *q;
    int rc = sqlite3_prepare_v2(db, sql, -1, &q, NULL);
    sqlite3_free(sql);
    if (rc != SQLITE_OK)
        return 0; /* an older trace without it */
    int k = sqlite3_column_count(q);
    *cols = calloc((size_t)k + 1, sizeof(**cols));
    for (int i = 0; *cols && i < k; i++)
        (*cols)[(*n)++] = strdup(sqlite3_column_name(q, i));
    sqlite3_finalize(q);
    return *cols ? 0 : -1;
}

static void gt_free_cols(char **cols, int n)
{
    for (int i = 0; i < n; i++)
        free(cols[i]);
    free(cols);
}

/* The merged table v has rank plus every column of cols. */
static int gt_ensure_table(sqlite3 *out, const char *path, const char *v, char **cols, int n)
{
    char *sql = sqlite3_mprintf("CREATE TABLE IF NOT EXISTS \"%w\" (rank TEXT)", v);
    int rc = gt_exec(out, sql, path);
    sqlite3_free(sql);
    for (int i = 0; rc == 0 && i < n; i++) {
        sqlite3_stmt *q;
        sql = sqlite3_mprintf("SELECT 1 FROM pragma_table_info(%Q) WHERE name = %Q", v, cols[i]);
        int have = sqlite3_prepare_v2(out, sql, -1, &q, NULL) == SQLITE_OK && sqlite3_step(q) == SQLITE_ROW;
        sqlite3_finalize(q);
        sqlite3_free(sql);
        if (!have) {
            sql = sqlite3_mprintf("ALTER TABLE \"%w\" ADD COLUMN \"%w\"", v, cols[i]);
            rc = gt_exec(out, sql, path);
            sqlite3_free(sql);
        }
    }
    return rc;
}

static int gt_copy_view(struct gt_trace *t, sqlite3 *out, const char *path, const char *v, const char *rank,
                        uint64_t *rows)
{
    char **cols;
    int n;
    if (gt_columns(t->db, v, &cols, &n) < 0)
        return -1;
    if (!n)
        return 0;
    int rc = gt_ensure_table(out, path, v, cols, n);
    char *ins = NULL;
    if (rc == 0) {
        size_t len = 64 + strlen(v) * 2;
        for (int i = 0; i < n; i++)
            len += strlen(cols[i]) * 2 + 8;
        ins = malloc(len);
        if (!ins)
            rc = -1;
    }
    sqlite3_stmt *sel = NULL, *put = NULL;
    if (rc == 0) {
        char *p = ins;
        p += sprintf(p, "INSERT INTO \"%s\" (rank", v);
        for (int i = 0; i < n; i++)
            p += sprintf(p, ",\"%s\"", cols[i]);
        p += sprintf(p, ") VALUES (?");
        for (int i = 0; i < n; i++)
            p += sprintf(p, ",?");
        strcpy(p, ")");
        char *q = sqlite3_mprintf("SELECT * FROM \"%w\"", v);
        if (sqlite3_prepare_v2(t->db, q, -1, &sel, NULL) != SQLITE_OK) {
            gt_trace_sql_error(t, v);
            rc = -1;
        } else if (sqlite3_prepare_v2(out, ins, -1, &put, NULL) != SQLITE_OK) {
            gt_err("%s: %s", path, sqlite3_errmsg(out));
            rc = -1;
        }
        sqlite3_free(q);
    }
    while (rc == 0) {
        int s = sqlite3_step(sel);
        if (s == SQLITE_DONE)
            break;
        if (s != SQLITE_ROW) {
            gt_trace_sql_error(t, v);
            rc = -1;
            break;
        }
        sqlite3_bind_text(put, 1, rank, -1, SQLITE_STATIC);
        for (int i = 0; i < n; i++)
            sqlite3_bind_value(put, i + 2, sqlite3_column_value(sel, i));
        if (sqlite3_step(put) != SQLITE_DONE) {
            gt_err("%s: %s", path, sqlite3_errmsg(out));
            rc = -1;
        }
        sqlite3_reset(put);
        (*rows)++;
    }
    sqlite3_finalize(sel);
    sqlite3_finalize(put);
    free(ins);
    gt_free_cols(cols, n);
    return rc;
}

int gt_merge_one(sqlite3 *out, const char *out_path, struct gt_trace *t, uint64_t *rows)
{
    char rank[64];
    char *v = gt_trace_meta(t, "rank");
    if (v)
        snprintf(rank, sizeof(rank), "%s", v);
    else
        snprintf(rank, sizeof(rank), "pid %lld", (long long)gt_trace_meta_int(t, "pid", 0));
    free(v);
    if (gt_exec(out, "BEGIN", out_path) < 0)
        return -1;
    /* which rank each trace is, and its meta */
    sqlite3_stmt *q;
    int rc = 0;
    char *host = gt_trace_meta(t, "host");
    if (sqlite3_prepare_v2(out, "INSERT INTO traces VALUES (?, ?, ?, ?, ?, ?)", -1, &q, NULL) == SQLITE_OK) {
        sqlite3_bind_text(q, 1, rank, -1, SQLITE_STATIC);
        sqlite3_bind_int64(q, 2, gt_trace_meta_int(t, "pid", 0));
        sqlite3_bind_text(q, 3, host ? host : "", -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(q, 4, t->path, -1, SQLITE_STATIC);
        sqlite3_bind_int(q, 5, gt_trace_meta_int(t, "complete", 0) == 1);
        sqlite3_bind_int(q, 6, t->schema_version);
        if (sqlite3_step(q) != SQLITE_DONE)
            rc = -1;
    } else {
        rc = -1;
    }
    sqlite3_finalize(q);
    free(host);
    if (rc < 0)
        gt_err("%s: %s", out_path, sqlite3_errmsg(out));
    sqlite3_stmt *m = NULL, *put = NULL;
    if (rc == 0 && sqlite3_prepare_v2(t->db, "SELECT key, value FROM meta", -1, &m, NULL) == SQLITE_OK &&
        sqlite3_prepare_v2(out, "INSERT INTO meta VALUES (?, ?, ?)", -1, &put, NULL) == SQLITE_OK) {
        while (sqlite3_step(m) == SQLITE_ROW) {
            sqlite3_bind_text(put, 1, rank, -1, SQLITE_STATIC);
            sqlite3_bind_value(put, 2, sqlite3_column_value(m, 0));
            sqlite3_bind_value(put, 3, sqlite3_column_value(m, 1));
            sqlite3_step(put);
            sqlite3_reset(put);
        }
    }
    sqlite3_finalize(m);
    sqlite3_finalize(put);
    for (int i = 0; rc == 0 && gt_merge_views[i]; i++)
        rc = gt_copy_view(t, out, out_path, gt_merge_views[i], rank, rows);
    if (gt_exec(out, rc == 0 ? "COMMIT" : "ROLLBACK", out_path) < 0)
        rc = -1;
    return rc;
}

int gt_merge_begin(sqlite3 *out, const char *out_path)
{
    return gt_exec(out,
                   "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;"
                   "CREATE TABLE traces (rank TEXT, pid INTEGER, host TEXT, path TEXT, complete INTEGER, "
                   "schema_version INTEGER);"
                   "CREATE TABLE meta (rank TEXT, key TEXT, value);",
                   out_path);
}

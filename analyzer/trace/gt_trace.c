/* gt_trace.c: read-only trace open and validation. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/gt_err.h"
#include "trace/gt_catrules.h"
#include "trace/gt_trace.h"

static int gt_fail(struct gt_trace *t, const char *fmt, const char *arg)
{
    fprintf(stderr, "gputrace: %s: ", t->path);
    fprintf(stderr, fmt, arg);
    fputc('\n', stderr);
    gt_trace_close(t);
    return GT_EXIT_USAGE;
}

/* SQLite URIs are the only way to ask for mode=ro/immutable, so the path is
 * percent-encoded: '?', '#' and '%' in file names would otherwise be read as
 * URI syntax. An absolute path gets the empty authority ("file:///x") so a
 * leading "//" is not taken for a host name. */
static char *gt_uri(const char *path, const char *params)
{
    size_t len = strlen(path) * 3 + strlen(params) + 16;
    char *u = malloc(len), *p = u;
    if (!u)
        return NULL;
    p += sprintf(p, "file:%s", path[0] == '/' ? "//" : "");
    for (const unsigned char *s = (const unsigned char *)path; *s; s++) {
        if ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
            strchr("/._-~", *s))
            *p++ = (char)*s;
        else
            p += sprintf(p, "%%%02X", *s);
    }
    sprintf(p, "?%s", params);
    return u;
}

static int gt_open_uri_at(struct gt_trace *t, const char *path, const char *params)
{
    char *uri = gt_uri(path, params);
    if (!uri)
        return SQLITE_NOMEM;
    if (t->db) {
        sqlite3_close(t->db);
        t->db = NULL;
    }
    int rc = sqlite3_open_v2(uri, &t->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX, NULL);
    free(uri);
    if (t->db) {
        sqlite3_extended_result_codes(t->db, 1);
        /* A process still recording may hold a write lock for a moment. */
        sqlite3_busy_timeout(t->db, 2000);
        /* SQLite's own memory bounded whatever the trace's length (many
         * traces may be open at once): a 2 MiB page cache, its sorts and
         * temporary tables on disk past that, no memory-mapped reads
         * (mapped pages count as the process's resident memory) */
        sqlite3_exec(t->db, "PRAGMA cache_size = -2048; PRAGMA temp_store = FILE; PRAGMA mmap_size = 0;", NULL,
                     NULL, NULL);
    }
    return rc;
}

static int gt_open_uri(struct gt_trace *t, const char *params)
{
    return gt_open_uri_at(t, t->path, params);
}

static int gt_copy_file(const char *from, const char *to)
{
    int in = open(from, O_RDONLY | O_CLOEXEC);
    if (in < 0)
        return -1;
    int out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (out < 0) {
        close(in);
        return -1;
    }
    char buf[1 << 16];
    ssize_t n;
    int rc = 0;
    while ((n = read(in, buf, sizeof(buf))) != 0) {
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 || write(out, buf, (size_t)n) != n) {
            rc = -1;
            break;
        }
    }
    close(in);
    if (close(out) != 0)
        rc = -1;
    return rc;
}

static void gt_drop_copy(struct gt_trace *t)
{
    if (!t->copy_dir)
        return;
    static const char *const names[] = {"t.db", "t.db-wal", "t.db-shm", "t.db-journal"};
    char p[4200];
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        snprintf(p, sizeof(p), "%s/%s", t->copy_dir, names[i]);
        unlink(p);
    }
    rmdir(t->copy_dir);
    free(t->copy_dir);
    t->copy_dir = NULL;
}

/* A trace whose process died keeps its last commits in PATH-wal, which
 * SQLite reads only through a PATH-shm it can create or lock: in a
 * directory this user cannot write, the trace and its log are read from a
 * private copy instead (the original is never written). SQLite's code of
 * the copy's open, or -1 when no copy could be made. */
static int gt_open_copy(struct gt_trace *t)
{
    const char *tmp = getenv("TMPDIR");
    char dir[4096], wal[4200], dst[4200];
    snprintf(dir, sizeof(dir), "%s/gputrace-read-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir))
        return -1;
    t->copy_dir = strdup(dir);
    if (!t->copy_dir) {
        rmdir(dir);
        return -1;
    }
    snprintf(dst, sizeof(dst), "%s/t.db", dir);
    snprintf(wal, sizeof(wal), "%s-wal", t->path);
    int ok = gt_copy_file(t->path, dst) == 0;
    if (ok && access(wal, F_OK) == 0) {
        snprintf(dst, sizeof(dst), "%s/t.db-wal", dir);
        ok = gt_copy_file(wal, dst) == 0;
    }
    if (!ok) {
        gt_drop_copy(t);
        return -1;
    }
    snprintf(dst, sizeof(dst), "%s/t.db", dir);
    return gt_open_uri_at(t, dst, "mode=ro");
}

/* The first real read: checks the file decodes and whether it has a meta
 * table. Returns an SQLite code; *has_meta set on SQLITE_OK. */
static int gt_probe(struct gt_trace *t, int *has_meta)
{
    sqlite3_stmt *st;
    int rc = sqlite3_prepare_v2(t->db, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'meta'",
                                -1, &st, NULL);
    if (rc != SQLITE_OK)
        return sqlite3_extended_errcode(t->db);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        *has_meta = sqlite3_column_int(st, 0) > 0;
        rc = SQLITE_OK;
    } else {
        rc = sqlite3_extended_errcode(t->db);
    }
    sqlite3_finalize(st);
    return rc;
}

/* Version 1 traces predate Python stacks. The analyses read both versions
 * through the same names: temporary objects (found before the file's own)
 * supply the missing column and empty Python tables, leaving the file
 * untouched. */
static int gt_trace_shim_v1(struct gt_trace *t)
{
    return sqlite3_exec(t->db,
                        "CREATE TEMP VIEW calls AS SELECT *, NULL AS pystack_id FROM main.calls;"
                        "CREATE TEMP VIEW api_calls AS SELECT *, NULL AS pystack_id FROM main.api_calls;"
                        "CREATE TEMP TABLE py_code (id INTEGER PRIMARY KEY, file TEXT, function TEXT, "
                        "first_line INTEGER);"
                        "CREATE TEMP TABLE py_frames (id INTEGER PRIMARY KEY, code_id INTEGER, lasti INTEGER, "
                        "line INTEGER);"
                        "CREATE TEMP TABLE py_stacks (pystack_id INTEGER, depth INTEGER, frame_id INTEGER);"
                        "CREATE TEMP VIEW py_stack_frames AS SELECT s.pystack_id, s.depth, c.file, c.function, "
                        "f.line, c.first_line, f.lasti FROM py_stacks s JOIN py_frames f ON f.id = s.frame_id "
                        "JOIN py_code c ON c.id = f.code_id;",
                        NULL, NULL, NULL);
}

int gt_trace_open(struct gt_trace *t, const char *path)
{
    memset(t, 0, sizeof(*t));
    t->path = path;

    struct stat sb;
    if (stat(path, &sb) < 0)
        return gt_fail(t, "%s", errno == ENOENT ? "no such file" : strerror(errno));
    if (S_ISDIR(sb.st_mode))
        return gt_fail(t, "%s", "is a directory, not a trace file");

    /* SQLite happily treats an empty or missing-header file as a new empty
     * database; checking the header ourselves gives the honest answer. */
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return gt_fail(t, "cannot read: %s", strerror(errno));
    char hdr[20];
    ssize_t n = read(fd, hdr, sizeof(hdr));
    close(fd);
    int hdr_wal_mode = n == (ssize_t)sizeof(hdr) && hdr[18] == 2;
    if (n == 0)
        return gt_fail(t, "%s", "not an SQLite database (empty file: the process may have stopped before "
                               "writing anything)");
    if (n < 16 || memcmp(hdr, "SQLite format 3", 16) != 0)
        return gt_fail(t, "%s", "not an SQLite database");

    /* Looked for before the open, which would create an empty one; a
     * missing log is not made up: the main file is read as it is. */
    char wal[4200];
    struct stat wsb;
    snprintf(wal, sizeof(wal), "%s-wal", path);
    int wal_missing = hdr_wal_mode && (stat(wal, &wsb) != 0 || wsb.st_size == 0);
    int rc = gt_open_uri(t, wal_missing ? "mode=ro&immutable=1" : "mode=ro");
    int has_meta = 0;
    if (rc == SQLITE_OK)
        rc = gt_probe(t, &has_meta);
    /* A WAL-mode trace (e.g. from a process that died before closing it)
     * needs its -shm file; in a directory we cannot write, it is read from
     * a copy, and failing that from the main file as it is, which misses
     * uncheckpointed data. */
    int cant_use_wal = (rc & 0xff) == SQLITE_CANTOPEN || rc == SQLITE_READONLY_CANTINIT ||
                       rc == SQLITE_READONLY_RECOVERY || rc == SQLITE_READONLY_DIRECTORY;
    if (cant_use_wal) {
        int rc2 = gt_open_copy(t);
        if (rc2 == SQLITE_OK)
            rc2 = gt_probe(t, &has_meta);
        if (rc2 == SQLITE_OK)
            rc = SQLITE_OK, cant_use_wal = 0;
        else
            gt_drop_copy(t);
    }
    if (cant_use_wal) {
        int rc2 = gt_open_uri(t, "mode=ro&immutable=1");
        if (rc2 == SQLITE_OK)
            rc2 = gt_probe(t, &has_meta);
        if (rc2 == SQLITE_OK) {
            t->wal_skipped = 1;
            fprintf(stderr,
                    "gputrace: %s: warning: cannot use its write-ahead log (%s); showing only data "
                    "already in the main file\n",
                    path, sqlite3_errstr(rc));
        }
        rc = rc2;
    }
    switch (rc & 0xff) {
    case SQLITE_OK:
        break;
    case SQLITE_NOTADB:
        return gt_fail(t, "%s", "not an SQLite database");
    case SQLITE_CORRUPT:
        return gt_fail(t, "%s", "damaged SQLite database (corrupt)");
    case SQLITE_READONLY:
        if (rc == SQLITE_READONLY_ROLLBACK)
            return gt_fail(t, "%s",
                           "has an unfinished write (hot journal); recover it with "
                           "'sqlite3 TRACE \"PRAGMA quick_check\"' from a writable directory");
        /* fallthrough */
    default:
        return gt_fail(t, "cannot open: %s", t->db ? sqlite3_errmsg(t->db) : sqlite3_errstr(rc));
    }

    /* Header byte 18 is 2 while the file is in WAL mode: the trace of a
     * process that did not finish, whose last commits are in PATH-wal. */
    if (!has_meta && wal_missing) {
        fprintf(stderr, "gputrace: %s: holds no data of its own: its process did not finish, and what it recorded "
                        "is in its write-ahead log %s, which is not beside it (copy the -wal file along with the "
                        "trace)\n", path, wal);
        gt_trace_close(t);
        return GT_EXIT_USAGE;
    }
    if (!has_meta)
        return gt_fail(t, "%s", "not a gputrace trace (no meta table)");
    if (wal_missing && !t->wal_skipped) {
        t->wal_skipped = 1;
        fprintf(stderr, "gputrace: %s: warning: its write-ahead log %s is missing (its process did not finish); "
                        "showing only data already in the main file\n", path, wal);
    }
    char *tracer = gt_trace_meta(t, "tracer");
    int ours = tracer && strcmp(tracer, "gputrace") == 0;
    free(tracer);
    if (!ours)
        return gt_fail(t, "%s", "not a gputrace trace");

    int64_t v;
    if (gt_trace_int(t, "PRAGMA user_version", &v) < 0) {
        gt_trace_close(t);
        return GT_EXIT_USAGE;
    }
    t->schema_version = (int)v;
    if (v > GT_SCHEMA_VERSION) {
        fprintf(stderr,
                "gputrace: %s: schema version %lld is newer than this gputrace supports (%d); "
                "upgrade gputrace\n",
                path, (long long)v, GT_SCHEMA_VERSION);
        gt_trace_close(t);
        return GT_EXIT_USAGE;
    }
    int64_t merged = 0;
    if (v == 0 &&
        gt_trace_int(t, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'traces'", &merged) == 0 &&
        merged && gt_trace_int(t, "SELECT count(*) FROM traces", &merged) == 0) {
        /* what `gputrace merge` writes: rows of many traces, for SQL */
        fprintf(stderr,
                "gputrace: %s: a file of %lld merged traces (gputrace merge), not a trace: query it with SQL "
                "(docs/ranks.md), or give the traces themselves\n",
                path, (long long)merged);
        gt_trace_close(t);
        return GT_EXIT_USAGE;
    }
    if (v < 1) {
        fprintf(stderr, "gputrace: %s: schema version %lld is not a released trace format (need 1 to %d)\n",
                path, (long long)v, GT_SCHEMA_VERSION);
        gt_trace_close(t);
        return GT_EXIT_USAGE;
    }
    if (v < 2 && gt_trace_shim_v1(t) < 0) {
        fprintf(stderr, "gputrace: %s: cannot read this version 1 trace: %s\n", path, sqlite3_errmsg(t->db));
        gt_trace_close(t);
        return GT_EXIT_USAGE;
    }
    /* kernel categories (version 9): older traces read the default rules */
    if (v < 9 && gt_catrules_shim(t->db) != SQLITE_OK) {
        fprintf(stderr, "gputrace: %s: cannot add kernel categories to this version %lld trace: %s\n", path,
                (long long)v, sqlite3_errmsg(t->db));
        gt_trace_close(t);
        return GT_EXIT_USAGE;
    }
    return 0;
}

void gt_trace_close(struct gt_trace *t)
{
    if (t->db)
        sqlite3_close(t->db);
    t->db = NULL;
    gt_drop_copy(t);
}

char *gt_trace_meta(struct gt_trace *t, const char *key)
{
    sqlite3_stmt *st;
    char *v = NULL;
    if (sqlite3_prepare_v2(t->db, "SELECT value FROM meta WHERE key = ?", -1, &st, NULL) != SQLITE_OK)
        return NULL;
    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
        v = strdup((const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    return v;
}

int64_t gt_trace_meta_int(struct gt_trace *t, const char *key, int64_t dflt)
{
    char *v = gt_trace_meta(t, key), *end;
    if (!v)
        return dflt;
    errno = 0;
    long long n = strtoll(v, &end, 10);
    int ok = *v && !*end && !errno;
    free(v);
    return ok ? n : dflt;
}

char *gt_trace_stop_reason(struct gt_trace *t)
{
    char *reason = gt_trace_meta(t, "stop_reason");
    if (!reason)
        return NULL;
    char *detail = gt_trace_meta(t, "stop_detail");
    const char *what = strcmp(reason, "max_size") == 0          ? "the trace reached its size bound"
                     : strcmp(reason, "disk_full") == 0         ? "the disk was full"
                     : strcmp(reason, "quota") == 0             ? "the disk quota was reached"
                     : strcmp(reason, "file_size_limit") == 0   ? "the file size limit (ulimit -f) was reached"
                                                                : "a write to the trace failed";
    size_t len = strlen(what) + (detail ? strlen(detail) : 0) + 8;
    char *out = malloc(len);
    if (out)
        snprintf(out, len, detail && *detail ? "%s (%s)" : "%s", what, detail);
    free(reason);
    free(detail);
    return out;
}

void gt_trace_sql_error(struct gt_trace *t, const char *what)
{
    fprintf(stderr, "gputrace: %s: %s: %s\n", t->path, what, sqlite3_errmsg(t->db));
}

int gt_trace_int(struct gt_trace *t, const char *sql, int64_t *out)
{
    sqlite3_stmt *st;
    *out = 0;
    if (sqlite3_prepare_v2(t->db, sql, -1, &st, NULL) != SQLITE_OK) {
        gt_trace_sql_error(t, "query failed");
        return -1;
    }
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW)
        *out = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
        gt_trace_sql_error(t, "query failed");
        return -1;
    }
    return 0;
}

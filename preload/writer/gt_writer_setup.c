/* gt_writer_setup.c: a new trace file's tables, views and statements, and
 * what it says about the process, before its first row. On the writer
 * thread at its start for a trace opened at the program's first CUDA call
 * (tens of milliseconds on a loaded machine that were the program's), on
 * the opening thread for a standby window's. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <fcntl.h>

#include "base/gt_base.h"
#include "hot/gt_threads.h"
#include "writer/gt_writer_int.h"
#include "gt_schema_db.h"

/* The new, empty file at path becomes an empty trace: the schema's tables
 * and views as scripts/gen_schema_db.py made them from the same schema
 * (8 KiB pages, WAL). 0, or -1 (the caller runs the schema's SQL instead). */
static int gt_copy_template(const char *path)
{
    int fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t done = 0;
    while (done < gt_schema_db_len) {
        ssize_t n = write(fd, gt_schema_db + done, gt_schema_db_len - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        done += (size_t)n;
    }
    int ok = done == gt_schema_db_len;
    if (!ok && ftruncate(fd, 0) != 0)
        ok = 0; /* left as it was: an empty file SQLite makes a database of */
    close(fd);
    return ok ? 0 : -1;
}

/* Statement `one`'s insert with GT_BATCH_ROWS rows of values, as `many`. */
static int gt_prepare_batch(struct gt_writer *w, struct gt_batch *b, int one, int many, int cols)
{
    b->one = one;
    b->many = many;
    b->cols = cols;
    const char *values = strstr(gt_sql[one], "VALUES") + 6;
    size_t head = (size_t)(values - gt_sql[one]), row = strlen(values);
    char *sql = malloc(head + GT_BATCH_ROWS * (row + 1) + 1);
    if (!sql)
        return SQLITE_NOMEM;
    char *p = sql;
    memcpy(p, gt_sql[one], head);
    p += head;
    for (int i = 0; i < GT_BATCH_ROWS; i++) {
        if (i)
            *p++ = ',';
        memcpy(p, values, row);
        p += row;
    }
    *p = 0;
    int rc = sqlite3_prepare_v3(w->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &w->st[many], NULL);
    free(sql);
    return rc;
}

int gt_writer_setup(struct gt_writer *w, const char *schema_sql, size_t schema_len,
                    const char *index_mark, char *err, size_t err_len)
{
    int copied = gt_copy_template(w->path) == 0;
    int rc = sqlite3_open_v2(w->path, &w->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW | SQLITE_OPEN_NOMUTEX,
                             NULL);
    char *schema = NULL;
    if (rc == SQLITE_OK && copied) {
        /* the tables and views are there: this connection's settings only */
        rc = sqlite3_exec(w->db, "PRAGMA synchronous=OFF; PRAGMA cache_size=-8192; PRAGMA wal_autocheckpoint=4000; "
                                 "BEGIN",
                          NULL, NULL, NULL);
    } else if (rc == SQLITE_OK) {
        schema = malloc(schema_len + 1);
        if (schema) {
            memcpy(schema, schema_sql, schema_len);
            schema[schema_len] = 0;
            /* Tables and views now, indexes at the end (gt_create_indexes). */
            char *idx = strstr(schema, index_mark);
            if (idx)
                *idx = 0;
            /* 8 KiB pages and a checkpoint every 32 MiB of WAL rather than
             * every 4 MiB: the writer's CPU per row fell about 12% with
             * them (docs/performance.md, "Total cost"); the file's size
             * is the same. */
            rc = sqlite3_exec(w->db, "PRAGMA page_size=8192; PRAGMA journal_mode=WAL; PRAGMA synchronous=OFF; "
                                     "PRAGMA cache_size=-8192; PRAGMA wal_autocheckpoint=4000; BEGIN",
                              NULL, NULL, NULL);
            if (rc == SQLITE_OK)
                rc = sqlite3_exec(w->db, schema, NULL, NULL, NULL);
        } else {
            rc = SQLITE_NOMEM;
        }
    }
    free(schema);
    for (int i = 0; rc == SQLITE_OK && i < ST_COUNT; i++) {
        if (i == ST_EVENT_BATCH)
            rc = gt_prepare_batch(w, &w->events, ST_EVENT, ST_EVENT_BATCH, EC_COUNT);
        else if (i == ST_GPU_BATCH)
            rc = gt_prepare_batch(w, &w->gpu, ST_GPU, ST_GPU_BATCH, 16);
        else
            rc = sqlite3_prepare_v3(w->db, gt_sql[i], -1, SQLITE_PREPARE_PERSISTENT, &w->st[i], NULL);
    }
    if (rc == SQLITE_OK) {
        w->ready = 1;
        gt_write_process_meta(w, &w->cfg);
        gt_writer_bound_setup(w);
        for (int i = 0; i < w->ndeferred; i++)
            gt_meta(w, w->deferred[i][0], w->deferred[i][1]);
        w->ndeferred = 0;
        rc = gt_write_api_names(w);
        if (rc == SQLITE_OK)
            rc = gt_write_syscall_names(w);
    }
    if (rc == SQLITE_OK && !w->failed)
        rc = sqlite3_exec(w->db, "COMMIT", NULL, NULL, NULL);
    if (rc != SQLITE_OK || w->failed) {
        snprintf(err, err_len, "cannot create trace %s: %s", w->path,
                 w->db ? sqlite3_errmsg(w->db) : sqlite3_errstr(rc));
        w->ready = 0;
        return -1;
    }
    return 0;
}

struct gt_setup_job {
    struct gt_writer *w;
    const char *schema, *index_mark;
    size_t schema_len;
    char *err;
    size_t err_len;
    int rc;
};

static void *gt_setup_main(void *arg)
{
    struct gt_setup_job *job = arg;
    gt_tls_busy = 1; /* the tracer's own thread: never recorded */
    pid_t tid = (pid_t)syscall(SYS_gettid);
    gt_threads_mark_tracer((uint32_t)tid); /* and never sampled */
    errno = 0;
    int nice_now = getpriority(PRIO_PROCESS, (id_t)tid);
    if (errno == 0)
        setpriority(PRIO_PROCESS, (id_t)tid, nice_now + 10 > 19 ? 19 : nice_now + 10);
    job->rc = gt_writer_setup(job->w, job->schema, job->schema_len, job->index_mark, job->err, job->err_len);
    return NULL;
}

/* On a thread of its own at nice +10, ended once done, so that the
 * caller (the writer thread) keeps its priority: making the file is tens
 * of milliseconds of CPU on a loaded machine, at the program's start, when
 * the program's threads must not wait for a CPU. */
int gt_writer_setup_apart(struct gt_writer *w, const char *schema, size_t schema_len,
                          const char *index_mark, char *err, size_t err_len)
{
    struct gt_setup_job job = {w, schema, index_mark, schema_len, err, err_len, -1};
    pthread_t t;
    if (gt_thread_spawn(&t, 0, gt_setup_main, &job) == 0)
        pthread_join(t, NULL);
    else
        job.rc = gt_writer_setup(w, schema, schema_len, index_mark, err, err_len);
    return job.rc;
}

/* gt_writer_file.c: a new trace file, on the thread that opens it (the
 * program's first CUDA call, or a standby window's opening): the process
 * it describes written to meta (who, where, when, with which settings);
 * the name is claimed by gt_writer_claim.c. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "base/gt_base.h"
#include "base/gt_config.h"
#include "hot/gt_python.h"
#include "writer/gt_writer.h"
#include "writer/gt_writer_int.h"

#define GT_VERSION "0.1.0"

void gt_read_text_file(const char *path, char *buf, size_t len, int nul_to_space)
{
    buf[0] = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    ssize_t n = read(fd, buf, len - 1);
    close(fd);
    if (n <= 0)
        return;
    buf[n] = 0;
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == 0))
        buf[--n] = 0;
    if (nul_to_space)
        for (ssize_t i = 0; i < n; i++)
            if (buf[i] == 0)
                buf[i] = ' ';
}

void gt_writer_note_stop(struct gt_writer *w)
{
    if (w->stop_noted || !w->db)
        return;
    if (w->in_txn) {
        /* The failed transaction, which gt_commit would roll back: with
         * no GPU records to wait for, nothing else may come to it. */
        sqlite3_exec(w->db, "ROLLBACK", NULL, NULL, NULL);
        w->in_txn = 0;
    }
    w->stop_noted = 1;
    int e = w->fail_errno;
    /* SQLite's errno may be lost by then: a file at the size limit says it. */
    struct rlimit fsz;
    struct stat st;
    char wal[PATH_MAX + 8];
    snprintf(wal, sizeof(wal), "%s-wal", w->path);
    if ((e == 0 || e == EIO) && getrlimit(RLIMIT_FSIZE, &fsz) == 0 && fsz.rlim_cur != RLIM_INFINITY &&
        ((stat(w->path, &st) == 0 && (rlim_t)st.st_size + 65536 >= fsz.rlim_cur) ||
         (stat(wal, &st) == 0 && (rlim_t)st.st_size + 65536 >= fsz.rlim_cur)))
        e = EFBIG;
    int bound = gt_writer_at_bound(w);
    gt_writer_bound_release(w); /* the meta row and the indexes still fit */
    const char *reason = bound ? "max_size" : e == ENOSPC ? "disk_full" : e == EDQUOT ? "quota" : e == EFBIG ? "file_size_limit"
                       : "write_error";
    char *sql = sqlite3_mprintf("BEGIN; INSERT OR REPLACE INTO meta VALUES('stop_reason', %Q), "
                                "('stop_detail', %Q), ('stopped_at_ns', '%llu'); COMMIT",
                                reason, bound ? "GPUTRACE_MAX_SIZE" : e ? strerror(e) : w->fail_why,
                                (unsigned long long)gt_now_ns());
    /* The rolled-back transaction's pages in the log are written over:
     * on a full disk a row this small usually still fits. */
    if (!sql || sqlite3_exec(w->db, sql, NULL, NULL, NULL) != SQLITE_OK)
        sqlite3_exec(w->db, "ROLLBACK", NULL, NULL, NULL);
    sqlite3_free(sql);
}

/* When this process started (clock ticks since boot, /proc/self/stat field
 * 22): with the pid, it tells this process's earlier images (before an
 * exec) from another process that had the same pid. */
static unsigned long long gt_process_start_ticks(void)
{
    char buf[1024];
    gt_read_text_file("/proc/self/stat", buf, sizeof(buf), 0);
    const char *p = strrchr(buf, ')'); /* the command name may hold spaces */
    unsigned long long ticks = 0;
    for (int field = 2; p && *p && field < 22; p++)
        if (*p == ' ')
            field++;
    if (p)
        ticks = strtoull(p, NULL, 10);
    return ticks;
}

int gt_writer_is_earlier_image(const char *path)
{
    sqlite3 *db = NULL;
    int same = 0;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOFOLLOW, NULL) == SQLITE_OK) {
        sqlite3_stmt *q = NULL;
        if (sqlite3_prepare_v2(db,
                               "SELECT (SELECT value FROM meta WHERE key = 'pid'), "
                               "(SELECT value FROM meta WHERE key = 'process_start_ticks')",
                               -1, &q, NULL) == SQLITE_OK &&
            sqlite3_step(q) == SQLITE_ROW) {
            const char *pid = (const char *)sqlite3_column_text(q, 0);
            const char *ticks = (const char *)sqlite3_column_text(q, 1);
            same = pid && ticks && strtoll(pid, NULL, 10) == (long long)getpid() &&
                   strtoull(ticks, NULL, 10) == gt_process_start_ticks();
        }
        sqlite3_finalize(q);
    }
    sqlite3_close(db);
    return same;
}

static const char *gt_writer_getenv(const char *name)
{
    return getenv(name);
}

void gt_write_process_meta(struct gt_writer *w, const struct gt_config *cfg)
{
    char buf[8192];
    gt_meta(w, "tracer", "gputrace");
    gt_meta(w, "tracer_version", GT_VERSION);
    gt_meta(w, "schema_version", "9");
    gt_meta_u64(w, "pid", (uint64_t)getpid());
    gt_meta_u64(w, "ppid", (uint64_t)getppid());
    gt_meta_u64(w, "process_start_ticks", gt_process_start_ticks());
    gt_read_text_file("/proc/self/cmdline", buf, sizeof(buf), 1);
    gt_meta(w, "cmdline", buf);
    if (gethostname(buf, sizeof(buf)) != 0)
        buf[0] = 0;
    buf[sizeof(buf) - 1] = 0;
    gt_meta(w, "host", buf);
    /* the job's rank, as %r names it, for the cross-rank report */
    const char *rank_var = gt_rank_var_from_env(gt_writer_getenv);
    if (rank_var) {
        gt_meta(w, "rank", getenv(rank_var));
        gt_meta(w, "rank_source", rank_var);
    }
    gt_meta_u64(w, "start_ns", w->start_ns);
    gt_meta_u64(w, "start_time_unix_ns", w->start_unix_ns);
    gt_meta(w, "clock", "CLOCK_MONOTONIC");
    gt_meta_u64(w, "stack_depth", (uint64_t)cfg->stack_depth);
    /* Which interpreter's stacks are recorded; "" when none are. */
    gt_meta(w, "python", gt_python_version());
    gt_meta_u64(w, "buffer_events", cfg->buffer_events);
    gt_meta(w, "output_pattern", cfg->output);
    gt_meta(w, "gpu_timing", "none");
    gt_meta_u64(w, "sample_hz", (uint64_t)cfg->sample_hz);
    gt_meta(w, "sample_threads", cfg->sample_all ? "all" : "cuda");
    /* the sampler's bound, a percentage of one core ("0": none) */
    char budget[16];
    snprintf(budget, sizeof(budget), "%g", cfg->sample_budget_bp / 100.0);
    gt_meta(w, "sample_budget_pct", budget);
    /* Python stacks of every sampled thread; native stacks of blocked
     * threads only, unwound: a running thread's needs a signal, which the
     * sampler never sends. The sampler's counters say what it found at
     * its start: blocked_unwound, perf_callchain with perf events
     * (GPUTRACE_SAMPLE_NATIVE=perf/auto), blocked_pc_only without an
     * unwinder. */
    gt_meta(w, "sample_native_stacks", cfg->sample_hz ? "blocked_unwound" : "off");
    /* GPUTRACE_MAX_SIZE (gt_writer_bound.c keeps it) */
    if (cfg->max_size_bytes) {
        gt_meta_u64(w, "max_size_bytes", cfg->max_size_bytes);
        gt_meta(w, "max_size_mode", cfg->max_size_keep_last ? "last" : "stop");
    }
    gt_meta(w, "complete", "0");
}

void gt_writer_origin_back(struct gt_writer *w, uint64_t since_ns)
{
    if (!since_ns || since_ns >= w->start_ns)
        return;
    /* The trace's one origin (meta.start_ns) is never after its first call. */
    w->start_unix_ns -= w->start_ns - since_ns;
    w->start_ns = since_ns;
    gt_meta_u64(w, "start_ns", w->start_ns);
    gt_meta_u64(w, "start_time_unix_ns", w->start_unix_ns);
}

/* gt_writer_file.c: a new trace file, on the thread that opens it (the
 * program's first CUDA call, or a standby window's opening): the way
 * cleared at its path, and the process it describes written to meta (who,
 * where, when, with which settings). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* Clears the way for a new trace at `path`: stale WAL files from an
 * earlier run under the same name would be replayed into the new one. */
int gt_writer_create_file(const char *path, char *err, size_t err_len)
{
    struct stat st;
    if (lstat(path, &st) == 0) {
        if (S_ISLNK(st.st_mode)) {
            snprintf(err, err_len, "%s is a symbolic link; refusing to write through it", path);
            return -1;
        }
        if (!S_ISREG(st.st_mode)) {
            snprintf(err, err_len, "%s exists and is not a regular file", path);
            return -1;
        }
        if (unlink(path) != 0) {
            snprintf(err, err_len, "cannot replace %s: %s", path, strerror(errno));
            return -1;
        }
    }
    char side[PATH_MAX + 8];
    snprintf(side, sizeof(side), "%s-wal", path);
    unlink(side);
    snprintf(side, sizeof(side), "%s-shm", path);
    unlink(side);
    int fd = open(path, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        snprintf(err, err_len, "cannot create %s: %s", path, strerror(errno));
        return -1;
    }
    close(fd);
    return 0;
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
    gt_meta(w, "schema_version", "8");
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
    gt_meta_u64(w, "start_ns", gt_now_ns());
    struct timespec rt;
    clock_gettime(CLOCK_REALTIME, &rt);
    gt_meta_u64(w, "start_time_unix_ns", (uint64_t)rt.tv_sec * 1000000000ull + (uint64_t)rt.tv_nsec);
    gt_meta(w, "clock", "CLOCK_MONOTONIC");
    gt_meta_u64(w, "stack_depth", (uint64_t)cfg->stack_depth);
    /* Which interpreter's stacks are recorded; "" when none are. */
    gt_meta(w, "python", gt_python_version());
    gt_meta_u64(w, "buffer_events", cfg->buffer_events);
    gt_meta(w, "output_pattern", cfg->output);
    gt_meta(w, "gpu_timing", "none");
    gt_meta_u64(w, "sample_hz", (uint64_t)cfg->sample_hz);
    gt_meta(w, "sample_threads", cfg->sample_all ? "all" : "cuda");
    /* Python stacks of every sampled thread; native stacks only as the
     * program counter of a blocked thread: unwinding a running thread
     * needs a signal, which the sampler never sends. With perf events
     * (GPUTRACE_SAMPLE_NATIVE=perf/auto) the sampler's counters say
     * perf_callchain once it has them open. */
    gt_meta(w, "sample_native_stacks", cfg->sample_hz ? "blocked_pc_only" : "off");
    gt_meta(w, "complete", "0");
}

/* gt_writer.c: rings -> SQLite, on the tracer's own thread: the writer's
 * loop and transactions, and the trace file's life (opened, finished at
 * exit, by a signal, before exec; forks). The file's creation and the
 * process's description in meta are gt_writer_file.c's; the statements,
 * meta rows and what a failed write does, gt_writer_sql.c's.
 *
 * Everything slow happens on this thread and only here: SQL, symbolization
 * of each new frame, demangling of each new kernel name. Transactions are
 * large and committed at least every GT_COMMIT_NS so a crash loses little.
 * An event becomes its row in gt_writer_rows.c, what the row refers to is
 * stored once by gt_writer_names.c and gt_writer_py.c, and CUPTI's records
 * go in by gt_writer_gpu.c and gt_writer_pend.c. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "base/gt_base.h"
#include "cupti/gt_cupti.h"
#include "hot/gt_hooks.h"
#include "hot/gt_ring.h"
#include "hot/gt_python.h"
#include "hot/gt_stacks.h"
#include "hot/gt_threads.h"
#include "writer/gt_writer.h"
#include "writer/gt_writer_int.h"
#include "gt_schema_sql.h"

#define GT_POLL_NS   10000000ull   /* how often the rings are drained */
#define GT_COMMIT_NS 250000000ull  /* longest time an event stays uncommitted */
#define GT_BUSY_EVENTS 256         /* a drain this big means more are coming */
#define GT_INDEX_MARK "-- @indexes"

static struct gt_writer *gt_w;
/* Static, never destroyed: threads may still signal it while the writer
 * shuts down. */
static pthread_mutex_t gt_wake_lock = PTHREAD_MUTEX_INITIALIZER;
/* Held by the writer while it works (SQLite, the symbolizer, their locks),
 * and by fork() for its duration: a child must never inherit a lock that
 * the parent's writer held mid-write, with no thread left to release it. */
static pthread_mutex_t gt_work_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gt_wake = PTHREAD_COND_INITIALIZER;
/* A fatal signal asks the writer to finish the trace (gt_signals.c). */
static _Atomic int gt_finish_signal;
static sem_t gt_finish_done;

/* ---- events ---- */

/* The event's kind of GPU record, if it waits for one (gt_pend_hold); -1
 * if not: it made no GPU work, failed, or was captured into a graph. */
static int gt_event_gpu_kind(const struct gt_event *e, int cat)
{
    if (!e->corr || e->captured || e->result != 0)
        return -1;
    return cat == GT_CAT_LAUNCH ? GT_GPU_KERNEL : cat == GT_CAT_MEMCPY ? GT_GPU_MEMCPY
         : cat == GT_CAT_MEMSET ? GT_GPU_MEMSET : -1;
}

static void gt_write_event(const struct gt_event *e, void *arg)
{
    struct gt_writer *w = arg;
    if (w->windowed) {
        uint64_t until = atomic_load_explicit(&w->until_ns, memory_order_relaxed);
        if (e->start_ns < atomic_load_explicit(&w->since_ns, memory_order_relaxed) ||
            (until && e->start_ns >= until)) {
            if (e->corr)
                w->left_corr[w->left_next++ % 64] = e->corr;
            return;
        }
    }
    if (gt_begin_txn(w) < 0)
        return;
    if (e->api == GT_API_NVTX) {
        gt_write_nvtx(w, e);
        return;
    }
    if (e->api == GT_API_GRAPH_NODE) {
        gt_write_graph_node(w, e);
        return;
    }
    if (e->api == GT_API_SAMPLE) {
        gt_write_sample(w, e);
        return;
    }
    gt_emit_thread(w, e->tid);
    gt_emit_stack(w, e->stack_id);
    gt_emit_pystack(w, e->pystack_id);
    int cat = e->api < GT_API_COUNT ? gt_hooks[e->api].category : GT_CAT_NONE;
    if (cat == GT_CAT_LAUNCH)
        gt_emit_name(w, e->u.launch.name_id);
    /* A launch, copy or memset that made GPU work waits for its GPU record
     * to join it in one row. */
    int gpu_kind = gt_event_gpu_kind(e, cat);
    if (gpu_kind >= 0 && gt_pend_hold(w, e, gpu_kind))
        return;
    struct gt_row row;
    gt_event_row(w, e, &row);
    gt_event_store(w, &row);
    if (cat == GT_CAT_GRAPH_BUILD)
        gt_write_graph_node(w, e);
}

int gt_begin_txn(struct gt_writer *w)
{
    if (w->failed) {
        gt_writer_note_stop(w); /* once, when no transaction is open: why recording stopped */
        return -1;
    }
    if (!w->in_txn) {
        if (gt_exec(w->db, "BEGIN") != SQLITE_OK) {
            gt_writer_failed(w, sqlite3_errmsg(w->db));
            return -1;
        }
        w->in_txn = 1;
    }
    return 0;
}

static void gt_write_counters(struct gt_writer *w)
{
    gt_writer_cupti_counters(w);
    gt_meta_u64(w, "dropped_events", gt_ring_dropped());
    gt_meta_u64(w, "dropped_stacks", gt_stacks_dropped());
    gt_meta_u64(w, "dropped_python_stacks", gt_python_dropped());
    gt_meta_u64(w, "events_written", w->events_written);
    gt_writer_nvtx_counters(w, gt_meta_u64);
    gt_writer_sample_counters(w, gt_meta_u64);
    gt_meta_u64(w, "end_ns", gt_now_ns());
}

static void gt_commit(struct gt_writer *w)
{
    if (!w->in_txn)
        return;
    if (!w->failed) {
        gt_batch_flush(w, &w->events);
        gt_batch_flush(w, &w->gpu);
        gt_writer_nvtx_flush(w);
    }
    if (!w->failed)
        gt_write_counters(w);
    int rc = gt_exec(w->db, w->failed ? "ROLLBACK" : "COMMIT");
    if (rc != SQLITE_OK && !w->failed) {
        gt_writer_failed(w, sqlite3_errmsg(w->db));
        gt_exec(w->db, "ROLLBACK");
    }
    w->in_txn = 0;
    w->last_commit_ns = gt_now_ns();
}

/* CUPTI's buffers waiting for the writer can hold tens of thousands of
 * records: writing them all before the rings' next turn would leave the
 * rings filling for as long, so the rings are drained between every few
 * thousand records (which also brings in the calls later records name). */
static void gt_write_gpu_record_paced(const void *record, void *arg)
{
    struct gt_writer *w = arg;
    gt_write_gpu_record(record, w);
    if (++w->gpu_since_drain >= 4096) {
        w->gpu_since_drain = 0;
        gt_ring_drain_all(gt_write_event, w);
    }
}

static uint64_t gt_drain(struct gt_writer *w)
{
    pthread_mutex_lock(&gt_work_lock);
    uint64_t n = gt_ring_drain_all(gt_write_event, w);
    gt_writer_nvtx_after_drain(w, 0);
    gt_cupti_drain(gt_write_gpu_record_paced, w);
    gt_pend_expire(w, 0);
    if (w->in_txn && gt_now_ns() - w->last_commit_ns >= GT_COMMIT_NS)
        gt_commit(w);
    pthread_mutex_unlock(&gt_work_lock);
    atomic_fetch_add_explicit(&w->drains, 1, memory_order_release);
    return n;
}

void gt_writer_fork_prepare(void)
{
    pthread_mutex_lock(&gt_work_lock);
    pthread_mutex_lock(&gt_wake_lock);
}

void gt_writer_fork_release(void)
{
    pthread_mutex_unlock(&gt_wake_lock);
    pthread_mutex_unlock(&gt_work_lock);
}

static void gt_writer_close_db(struct gt_writer *w);
static void gt_writer_free(struct gt_writer *w);
static void gt_create_indexes(struct gt_writer *w);

static uint64_t gt_tv_ns(struct timeval tv)
{
    return (uint64_t)tv.tv_sec * 1000000000u + (uint64_t)tv.tv_usec * 1000u;
}

static uint64_t gt_thread_cpu_ns(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
        return 0;
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The writer thread's CPU so far, user and system apart. */
static void gt_writer_note_cpu(struct gt_writer *w)
{
    struct rusage ru;
    if (getrusage(RUSAGE_THREAD, &ru) == 0) {
        w->writer_user_ns = gt_tv_ns(ru.ru_utime);
        w->writer_sys_ns = gt_tv_ns(ru.ru_stime);
    }
}

/* What the tracer cost the process, in meta: written after the file is
 * whole, one small transaction more (synchronous is off). Users weigh
 * the trace's cost from these; bench/ splits the total CPU with them. */
static void gt_write_cost(struct gt_writer *w, uint64_t finish_cpu, uint64_t index_ns, uint64_t fold_ns)
{
    if (w->failed || gt_exec(w->db, "BEGIN") != SQLITE_OK)
        return;
    gt_meta_u64(w, "tracer_writer_cpu_ns", w->writer_user_ns + w->writer_sys_ns);
    gt_meta_u64(w, "tracer_writer_sys_ns", w->writer_sys_ns);
    gt_meta_u64(w, "tracer_finish_cpu_ns", finish_cpu);
    gt_meta_u64(w, "tracer_index_ns", index_ns);
    gt_meta_u64(w, "tracer_fold_ns", fold_ns);
    if (gt_exec(w->db, "COMMIT") != SQLITE_OK)
        gt_exec(w->db, "ROLLBACK");
}

/* Everything buffered goes in, then the indexes; the file is left whole. */
static void gt_writer_finish(struct gt_writer *w, int complete, int sig, int free_after)
{
    if (!w->ready) { /* its setup failed or never ran: no file to finish */
        if (free_after)
            gt_writer_free(w);
        return;
    }
    uint64_t cpu0 = gt_thread_cpu_ns(), index_ns = 0, fold_ns = 0;
    gt_ring_drain_all(gt_write_event, w);
    if (gt_begin_txn(w) == 0)
        gt_writer_nvtx_after_drain(w, 1);
    gt_cupti_drain(gt_write_gpu_record, w);
    gt_pend_expire(w, 1);
    gt_write_result_names(w); /* if the writer thread never got to it */
    if (gt_begin_txn(w) == 0) {
        gt_meta(w, "complete", complete ? "1" : "0");
        if (sig > 0)
            gt_meta_u64(w, "terminated_by_signal", (uint64_t)sig);
        uint64_t startup = atomic_load(&w->startup_ns);
        if (startup)
            gt_meta_u64(w, "tracer_startup_ns", startup);
        if (w->windowed) {
            gt_meta_u64(w, "window_start_ns", atomic_load(&w->since_ns));
            uint64_t until = atomic_load(&w->until_ns);
            gt_meta_u64(w, "window_end_ns", until ? until : gt_now_ns());
        }
        /* The data first, on its own: indexes that do not fit must not take the last events. */
        gt_commit(w);
        uint64_t t0 = gt_now_ns();
        gt_writer_bound_release(w); /* the indexes' room under GPUTRACE_MAX_SIZE */
        if (!w->failed)
            gt_create_indexes(w);
        uint64_t t1 = gt_now_ns();
        /* One self-contained file: fold the WAL back in. */
        gt_exec(w->db, "PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode=DELETE");
        index_ns = t1 - t0;
        fold_ns = gt_now_ns() - t1;
        gt_write_cost(w, gt_thread_cpu_ns() - cpu0, index_ns, fold_ns);
    }
    if (free_after)
        gt_writer_free(w);
    else
        gt_writer_close_db(w);
}

/* On the writer thread, asked by a signal handler: the process is about to
 * die of a signal whose default action it kept. */
static void gt_writer_finish_for_signal(struct gt_writer *w, int sig)
{
    if (!atomic_exchange(&w->finishing, 1)) {
        atomic_store(&gt_state, GT_STATE_FINISHED);
        gt_cupti_end();
        /* Not freed: exit() on another thread may still be looking at it. */
        pthread_mutex_lock(&gt_work_lock);
        gt_writer_note_cpu(w); /* the finish, on this thread too, is counted apart */
        gt_writer_finish(w, 1, sig, 0);
        pthread_mutex_unlock(&gt_work_lock);
    }
    sem_post(&gt_finish_done);
}

void gt_writer_finish_on_signal(int sig)
{
    atomic_store(&gt_finish_signal, sig);
}

int gt_writer_wait_finished(int seconds)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += seconds;
    int rc;
    while ((rc = sem_timedwait(&gt_finish_done, &ts)) == -1 && errno == EINTR)
        ;
    return rc;
}

static void *gt_writer_main(void *arg)
{
    struct gt_writer *w = arg;
    gt_tls_busy = 1; /* the tracer's own thread: never recorded */
    gt_threads_mark_tracer((uint32_t)syscall(SYS_gettid)); /* and never sampled */
    if (w->setup_on_thread) {
        char err[768];
        pthread_mutex_lock(&gt_work_lock);
        int rc = gt_writer_setup_apart(w, (const char *)gt_schema_sql, gt_schema_sql_len, GT_INDEX_MARK, err,
                                       sizeof(err));
        pthread_mutex_unlock(&gt_work_lock);
        if (rc < 0) {
            /* As a failed open on the program's thread: one line, no trace,
             * the process's calls go straight through from now on. */
            gt_warn("%s; not tracing this process", err);
            gt_cupti_bound_buffers(); /* nothing drains them: as few as ever */
            atomic_store(&gt_state, GT_STATE_DISABLED);
            unlink(w->path);
            return NULL;
        }
        w->last_commit_ns = gt_now_ns();
    }
    /* Here rather than at open, which runs on the program's first CUDA
     * call; committed at once, so a process killed early still has them. */
    pthread_mutex_lock(&gt_work_lock);
    gt_write_result_names(w);
    gt_commit(w);
    pthread_mutex_unlock(&gt_work_lock);
    /* What CUPTI handed back while the file was made, written out before
     * the pool is bounded (the buffers lent meanwhile may outnumber it). */
    uint64_t drained = gt_drain(w);
    gt_cupti_bound_buffers();
    while (!atomic_load(&w->stop)) {
        /* While events pour in, drain again at once: a ring that passed
         * half full while this thread was writing sent its wake-up to no
         * one, and would fill up during a sleep. */
        if (drained >= GT_BUSY_EVENTS || gt_ring_pressure() >= 25) {
            int sig = atomic_load(&gt_finish_signal);
            if (sig) {
                gt_writer_finish_for_signal(w, sig);
                return NULL;
            }
            drained = gt_drain(w);
            continue;
        }
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += (long)GT_POLL_NS;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_mutex_lock(&gt_wake_lock);
        if (!atomic_load(&w->stop))
            pthread_cond_timedwait(&gt_wake, &gt_wake_lock, &ts);
        pthread_mutex_unlock(&gt_wake_lock);
        int sig = atomic_load(&gt_finish_signal);
        if (sig) {
            gt_writer_finish_for_signal(w, sig);
            return NULL;
        }
        drained = gt_drain(w);
    }
    gt_writer_note_cpu(w);
    return NULL;
}

/* ---- open, start, stop ---- */

static void gt_writer_close_db(struct gt_writer *w)
{
    gt_writer_nvtx_free(w);
    for (int i = 0; i < ST_COUNT; i++) {
        sqlite3_finalize(w->st[i]);
        w->st[i] = NULL;
    }
    if (w->db)
        sqlite3_close(w->db);
    w->db = NULL;
    if (w->lock_fd >= 0)
        close(w->lock_fd); /* the file is no longer being written */
    w->lock_fd = -1;
}

static void gt_writer_free(struct gt_writer *w)
{
    gt_writer_close_db(w);
    gt_strlist_free(&w->modules);
    gt_idmap_free(&w->frames);
    free(w->frame_first);
    free(w->frame_n);
    w->frame_first = NULL;
    w->frame_n = NULL;
    w->frame_cap = 0;
    w->frame_rows = 0;
    free(w->tids);
    gt_strlist_free(&w->gpu_names);
    free(w->stack_done);
    free(w->name_done);
    free(w->pystack_done);
    free(w->pycode_done);
    gt_idmap_free(&w->pyframes);
    gt_writer_gpu_free(w);
    gt_writer_rows_free(w);
    free(w);
}

/* A file size limit (RLIMIT_FSIZE) reached by the tracer's writes raises
 * SIGXFSZ, whose default action would kill the program. The writer thread
 * blocks every signal; a program thread that writes the trace (creating it,
 * finishing it at exit) blocks SIGXFSZ meanwhile and discards the one its
 * own writes raised. The write itself fails with EFBIG, as on a full disk. */
struct gt_xfsz {
    sigset_t old;
    int was_pending;
};

static void gt_xfsz_block(struct gt_xfsz *x)
{
    sigset_t s, pending;
    sigemptyset(&s);
    sigaddset(&s, SIGXFSZ);
    pthread_sigmask(SIG_BLOCK, &s, &x->old);
    x->was_pending = sigpending(&pending) == 0 && sigismember(&pending, SIGXFSZ);
}

static void gt_xfsz_restore(struct gt_xfsz *x)
{
    sigset_t s, pending;
    sigemptyset(&s);
    sigaddset(&s, SIGXFSZ);
    if (!x->was_pending && sigpending(&pending) == 0 && sigismember(&pending, SIGXFSZ)) {
        struct timespec now = {0, 0};
        sigtimedwait(&s, NULL, &now);
    }
    pthread_sigmask(SIG_SETMASK, &x->old, NULL);
}

static int gt_writer_open_blocked(char *path, size_t path_len, const struct gt_config *cfg, char *err,
                                  size_t err_len);

int gt_writer_open(char *path, size_t path_len, const struct gt_config *cfg, char *err, size_t err_len)
{
    struct gt_xfsz x;
    gt_xfsz_block(&x);
    int rc = gt_writer_open_blocked(path, path_len, cfg, err, err_len);
    gt_xfsz_restore(&x);
    return rc;
}

static int gt_writer_open_blocked(char *path, size_t path_len, const struct gt_config *cfg, char *err,
                                  size_t err_len)
{
    int lock_fd = gt_writer_claim_file(path, path_len, cfg->force_overwrite, err, err_len);
    if (lock_fd < 0)
        return -1;
    struct gt_writer *w = calloc(1, sizeof(*w));
    if (!w) {
        snprintf(err, err_len, "out of memory");
        unlink(path);
        close(lock_fd);
        return -1;
    }
    w->lock_fd = lock_fd;
    snprintf(w->path, sizeof(w->path), "%s", path);
    w->cfg = *cfg;
    /* The trace's start is now, on the program's thread, whichever thread
     * fills the file in. */
    w->start_ns = gt_now_ns();
    struct timespec rt;
    clock_gettime(CLOCK_REALTIME, &rt);
    w->start_unix_ns = (uint64_t)rt.tv_sec * 1000000000ull + (uint64_t)rt.tv_nsec;
    w->stack_done = calloc(1, (1u << 17) / 8 + 1);
    w->name_done = calloc(1, 8192 / 8 + 1);
    w->pystack_done = calloc(1, (1u << 16) / 8 + 1);
    w->pycode_done = calloc(1, (1u << 16) / 8 + 1);
    if (!w->stack_done || !w->name_done || !w->pystack_done || !w->pycode_done) {
        snprintf(err, err_len, "out of memory");
        unlink(path); /* before the lock goes, with gt_writer_free */
        gt_writer_free(w);
        return -1;
    }
    /* Creating the tables, views and statements takes milliseconds (tens
     * on a loaded machine): on the program's first CUDA call they would be
     * the program's time, so the writer thread does it first thing, before
     * it drains the rings (issue 31). A standby window's trace is made here:
     * it opens while the program runs, and its failure returns to standby. */
    w->setup_on_thread = !cfg->standby;
    if (!w->setup_on_thread && gt_writer_setup(w, (const char *)gt_schema_sql, gt_schema_sql_len,
                                               GT_INDEX_MARK, err, err_len) < 0) {
        unlink(path); /* before the lock goes, with gt_writer_free */
        gt_writer_free(w);
        return -1;
    }
    w->last_commit_ns = gt_now_ns();
    sem_init(&gt_finish_done, 0, 0);
    gt_w = w;
    return 0;
}

/* The indexes after the schema's mark, one at a time: a partial index over a
 * column no row filled is left out (building it would scan for nothing). */
static void gt_create_indexes(struct gt_writer *w)
{
    char *schema = malloc(gt_schema_sql_len + 1);
    if (!schema)
        return;
    memcpy(schema, gt_schema_sql, gt_schema_sql_len);
    schema[gt_schema_sql_len] = 0;
    char *p = strstr(schema, GT_INDEX_MARK);
    int ok = p && gt_exec(w->db, "BEGIN") == SQLITE_OK;
    while (ok && p && (p = strstr(p, "CREATE INDEX"))) {
        char *end = strchr(p, ';');
        if (!end)
            break;
        *end = 0;
        int skip = (strstr(p, "(corr) WHERE") && strstr(p, " ON events(") && !w->rows_with_corr) ||
                   (strstr(p, "(pystack_id) WHERE") && strstr(p, " ON events(") && !w->rows_with_pystack);
        if (!skip && gt_exec(w->db, p) != SQLITE_OK)
            ok = 0;
        p = end + 1;
    }
    if (ok && gt_exec(w->db, "COMMIT") != SQLITE_OK)
        ok = 0;
    if (!ok && p) {
        gt_warn("cannot index %s: %s; the trace is complete but slower to query", w->path, sqlite3_errmsg(w->db));
        gt_exec(w->db, "ROLLBACK");
    }
    free(schema);
}

void gt_writer_set_window(long window, uint64_t since_ns)
{
    struct gt_writer *w = gt_w;
    if (!w)
        return;
    w->windowed = 1;
    gt_writer_origin_back(w, since_ns); /* a flight recorder's window starts before its file */
    atomic_store(&w->since_ns, since_ns);
    gt_meta(w, "mode", "standby");
    gt_meta_u64(w, "window", (uint64_t)window);
    gt_meta_u64(w, "window_start_ns", since_ns);
}

void gt_writer_settle(int max_ms)
{
    struct gt_writer *w = gt_w;
    if (!w || !w->thread_started)
        return;
    /* A drain begun after this call, done (the one under way may have
     * passed a ring already): the rings' last calls are in the waiting
     * room by then. An empty room before it says nothing: a writer kept
     * off the CPU by a loaded machine has not yet seen them. */
    uint64_t first = atomic_load_explicit(&w->drains, memory_order_acquire) + 2;
    for (int ms = 0; ms < max_ms; ms += 10) {
        if (atomic_load_explicit(&w->drains, memory_order_acquire) >= first && atomic_load(&w->waiting) == 0)
            return;
        gt_cupti_flush(1);
        gt_writer_wake();
        usleep(10000);
    }
}

int gt_writer_left_out(const struct gt_writer *w, uint64_t ext)
{
    if (!w->windowed || !ext)
        return 0;
    for (unsigned i = 0; i < 64; i++)
        if (w->left_corr[i] == ext)
            return 1;
    return 0;
}

void gt_writer_window_bounds(uint64_t since_ns, uint64_t until_ns)
{
    struct gt_writer *w = gt_w;
    if (!w || !w->windowed)
        return;
    if (since_ns)
        atomic_store(&w->since_ns, since_ns);
    uint64_t none = 0; /* the first end given stands (a window by steps ends at its last step) */
    if (until_ns)
        atomic_compare_exchange_strong(&w->until_ns, &none, until_ns);
}

void gt_writer_set_gpu_timing(const char *mode, const char *detail)
{
    struct gt_writer *w = gt_w;
    if (!w)
        return;
    gt_meta(w, "gpu_timing", mode);
    gt_meta(w, "gpu_timing_detail", detail);
}

void gt_writer_set_meta(const char *key, const char *value)
{
    struct gt_writer *w = gt_w;
    if (w)
        gt_meta(w, key, value);
}

void gt_writer_note_startup(uint64_t ns)
{
    struct gt_writer *w = gt_w;
    if (w)
        atomic_store(&w->startup_ns, ns);
}

int gt_writer_start(void)
{
    struct gt_writer *w = gt_w;
    if (!w)
        return -1;
    int rc = gt_thread_spawn(&w->thread, 0, gt_writer_main, w);
    if (rc != 0)
        return -1;
    w->thread_started = 1;
    return 0;
}

void gt_writer_wake(void)
{
    pthread_cond_signal(&gt_wake);
}

void gt_writer_stop(int complete)
{
    struct gt_writer *w = gt_w;
    if (!w)
        return;
    gt_w = NULL;
    if (w->thread_started) {
        pthread_mutex_lock(&gt_wake_lock);
        atomic_store(&w->stop, 1);
        pthread_cond_signal(&gt_wake);
        pthread_mutex_unlock(&gt_wake_lock);
        pthread_join(w->thread, NULL);
    }
    if (atomic_exchange(&w->finishing, 1))
        return; /* a fatal signal got there first and finished the trace */
    struct gt_xfsz x;
    gt_xfsz_block(&x);
    pthread_mutex_lock(&gt_work_lock);
    gt_writer_finish(w, complete, 0, 1);
    pthread_mutex_unlock(&gt_work_lock);
    gt_xfsz_restore(&x);
}

void gt_writer_join_finished(void)
{
    struct gt_writer *w = gt_w;
    if (w && w->thread_started && atomic_load(&w->finishing)) {
        pthread_join(w->thread, NULL);
        w->thread_started = 0;
    }
}

void gt_writer_after_fork_child(void)
{
    /* The parent's connection and thread belong to the parent; its lock
     * stays the parent's alone. */
    if (gt_w && gt_w->lock_fd >= 0)
        close(gt_w->lock_fd);
    gt_w = NULL;
}

/* gt_writer_int.h: the writer's state, shared by its two halves:
 * gt_writer.c (host events, the file's life) and gt_writer_gpu.c (CUPTI
 * records). Writer thread only. */
#ifndef GT_WRITER_INT_H
#define GT_WRITER_INT_H

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sqlite3.h>

#include "base/gt_config.h"

enum { ST_EVENT, ST_EVENT_BATCH, ST_THREAD, ST_LAUNCH_CONFIG, ST_STRING, ST_MODULE, ST_FRAME, ST_STACK, ST_META, ST_GPU,
       ST_GPU_BATCH, ST_GPU_CORR,
       ST_OVERHEAD, ST_PYCODE, ST_PYFRAME, ST_PYSTACK, ST_RESULT_NAME, ST_GNODE, ST_GNODE_CLONE, ST_SAMPLE, ST_COUNT };

/* Strings interned in first-seen order; an entry's index is its id. */
struct gt_strlist {
    char **items;
    size_t count, cap;
};

/* Index of s, added if new (*added set). -1: out of memory. */
long gt_strlist_intern(struct gt_strlist *l, const char *s, int *added);
void gt_strlist_free(struct gt_strlist *l);

/* Writer-private map from a nonzero raw key (an ip, a Python frame) to the
 * row id it was given; ids count up from 1 in first-seen order. */
struct gt_idmap_slot {
    uint64_t key;
    int64_t id;
};

struct gt_idmap {
    struct gt_idmap_slot *slots;
    size_t cap, count;
};

/* The id of `key`: found, or the next one, with *added set. 0: out of memory. */
int64_t gt_idmap_get(struct gt_idmap *m, uint64_t key, int *added);
void gt_idmap_free(struct gt_idmap *m);

/* Events and GPU records go in GT_BATCH_ROWS rows per INSERT: one
 * statement run per row costs SQLite more than the row itself. */
#define GT_BATCH_ROWS 32
#define GT_BATCH_COLS 16
struct gt_row {
    int64_t v[GT_BATCH_COLS];
    uint32_t null_mask;    /* bit i: column i is NULL */
};
struct gt_batch {
    int one, many;         /* the single-row and GT_BATCH_ROWS-row statements */
    int cols;
    int n;
    struct gt_row rows[GT_BATCH_ROWS];
};
/* The next row of b to fill; gt_batch_done() counts it in. */
static inline struct gt_row *gt_batch_row(struct gt_batch *b)
{
    return &b->rows[b->n];
}
struct gt_writer;
/* Counts the row gt_batch_row() gave; writes the batch once full. */
void gt_batch_done(struct gt_writer *w, struct gt_batch *b);
/* Writes what the batch holds (before a commit). */
void gt_batch_flush(struct gt_writer *w, struct gt_batch *b);

/* Metas set before the file's tables exist (gt_writer_setup writes them). */
#define GT_DEFERRED_META 24 /* the window's and the flight recorder's among them */

struct gt_writer {
    sqlite3 *db;
    int ready;             /* tables, views and statements made (gt_writer_setup) */
    int setup_on_thread;   /* the writer thread makes them, not the program's thread that opened the trace */
    struct gt_config cfg;  /* the settings it was opened with */
    uint64_t start_ns, start_unix_ns; /* when it was opened, on the program's thread */
    _Atomic uint64_t startup_ns;      /* the tracer's start-up on the program's thread (gt_writer_note_startup) */
    int ndeferred;
    char deferred[GT_DEFERRED_META][2][256];
    sqlite3_stmt *st[ST_COUNT];
    char path[PATH_MAX];
    int lock_fd;           /* its flock says the file is being written (gt_writer_claim.c) */
    int in_txn;
    int failed;            /* a write failed: stop recording, keep what is committed */
    int fail_errno;        /* the system's reason (ENOSPC...), 0 if none known */
    char fail_why[160];    /* SQLite's words for it */
    int stop_noted;        /* the reason is in meta, or was tried (gt_writer_note_stop) */
    uint64_t last_commit_ns;
    struct gt_batch events;
    struct gt_batch gpu;
    int64_t next_gpu_id;
    unsigned gpu_since_drain; /* CUPTI records written since the rings were last drained */
    uint64_t events_written;
    int result_names_done;
    uint8_t *stack_done;   /* bitmap: stack ids already in the file */
    uint8_t *name_done;    /* bitmap: string ids already in the file */
    uint8_t *pystack_done; /* bitmap: Python stack ids already in the file */
    uint8_t *pycode_done;  /* bitmap: Python code ids already in the file */
    struct gt_idmap pyframes;  /* (code id << 32 | lasti) -> py_frames row id */
    struct gt_idmap frames;    /* ip -> index into frame_first/frame_n, plus one */
    int64_t *frame_first;      /* by that index: the first frames row of the ip (its innermost inlined frame) */
    uint8_t *frame_n;          /* by that index: how many frames rows the ip has (1 + inlined frames) */
    size_t frame_cap;
    int64_t frame_rows;        /* frames rows written */
    struct gt_strlist modules;   /* module paths; id = index + 1 */
    struct gt_strlist gpu_names; /* kernel names from CUPTI; id = GT_GPU_NAME_BASE + index */
    struct gt_corrmap *corr;   /* CUPTI correlation id -> our external id (gt_writer_gpu.c) */
    struct gt_pend *pend;      /* rows waiting for their GPU record (gt_writer_pend.c) */
    struct gt_launch_map *launches; /* launch configurations already stored (gt_writer_rows.c) */
    struct gt_nvtx_w *nvtx;    /* NVTX ranges' state (gt_writer_nvtx.c) */
    uint32_t *tids;        /* threads already in the file */
    size_t tid_count, tid_cap;
    pthread_t thread;
    int thread_started;
    atomic_int stop;
    atomic_int finishing;  /* taken by whichever of exit and a fatal signal finishes first */
    /* What the tracer's own work cost, for meta (docs/schema.md): the writer
     * thread's CPU, read as it ends; the finish's, on the thread that runs it. */
    uint64_t writer_user_ns, writer_sys_ns;
    /* Whether any row holds a correlation id or a Python stack: the partial
     * indexes on them are not built over a table without any (each costs a
     * scan of every row at exit). */
    uint64_t rows_with_corr, rows_with_pystack;
    /* A standby window's opening: calls that started before it (left in a
     * thread's ring from an earlier window) are not this window's. */
    _Atomic uint64_t since_ns;
    _Atomic uint64_t until_ns; /* the window's close (0: open); later calls are not its */
    int windowed;
    /* Correlation ids of calls left out at the window's edges: their GPU
     * records are left out too (a few a thread, so a small ring). */
    uint64_t left_corr[64];
    unsigned left_next;
    _Atomic uint32_t waiting; /* rows in the waiting room still without their GPU record */
    _Atomic uint64_t drains;  /* drain rounds done (gt_writer_settle counts them) */
};

/* 1 if the GPU record with our correlation id `ext` belongs to a call left
 * out of the window. */
int gt_writer_left_out(const struct gt_writer *w, uint64_t ext);

/* Ids for names first seen in CUPTI records, clear of the shim's own. */
#define GT_GPU_NAME_BASE (1 << 24)

/* gt_writer_sql.c: the statements (ST_*'s SQL), each stepped and reset
 * (gt_step clears its bindings, gt_step_keep leaves them: every column is
 * bound on every row); a raw SQL line; a failed write: one line, recording
 * stopped, what was committed kept. */
extern const char *const gt_sql[ST_COUNT];
int gt_step(struct gt_writer *w, int which);
int gt_step_keep(struct gt_writer *w, int which);
int gt_exec(sqlite3 *db, const char *sql);
void gt_writer_failed(struct gt_writer *w, const char *why);
/* gt_writer.c: a transaction opened if none is (-1 once writes failed). */
int gt_begin_txn(struct gt_writer *w);
/* The tables every trace holds the same (gt_writer_catalog.c): api_names,
 * at open (an SQLite result code back), and result_names, in the current
 * transaction, once. */
int gt_write_api_names(struct gt_writer *w);
void gt_write_result_names(struct gt_writer *w);
/* A row of `strings`: the kernel name and its demangled form. */
void gt_insert_name(struct gt_writer *w, int64_t id, const char *name);
/* The rows a call refers to, each written the first time it is seen
 * (gt_writer_names.c): a native stack and its frames, a kernel name, a
 * thread. */
void gt_emit_stack(struct gt_writer *w, uint32_t stack_id);
void gt_emit_name(struct gt_writer *w, uint32_t name_id);
void gt_emit_thread(struct gt_writer *w, uint32_t tid);
/* A small text file (a /proc entry), its trailing newlines and NULs cut,
 * inner NULs made spaces if asked; "" when unreadable (gt_writer_file.c). */
void gt_read_text_file(const char *path, char *buf, size_t len, int nul_to_space);
/* A meta row (gt_writer_sql.c), kept by gt_meta_defer until the file is
 * ready. */
void gt_meta(struct gt_writer *w, const char *key, const char *value);
void gt_meta_u64(struct gt_writer *w, const char *key, uint64_t v);
/* gt_writer_claim.c: creates the trace at `path` (never through a
 * symlink, mode 0600) or, when another process writes that name or an
 * earlier run's trace is there and `force` is 0, at a name beside it
 * (t.2.db...), written back into `path` and said in one line. Returns the
 * descriptor whose flock marks the file as being written (held until the
 * trace is closed), or -1 with the reason in err. */
int gt_writer_claim_file(char *path, size_t path_len, int force, char *err, size_t err_len);
/* gt_writer_file.c: after a write failed and its transaction was rolled
 * back, why recording stopped into meta (stop_reason, stop_detail,
 * stopped_at_ns) in a transaction of its own, so the trace does not read
 * as a crash; once, and only if it fits (a full disk may refuse it). */
void gt_writer_note_stop(struct gt_writer *w);
/* gt_writer_bound.c: GPUTRACE_MAX_SIZE's bound on the file (set up with
 * the file; whether a failed write was it; room for the indexes at the
 * end). */
void gt_writer_bound_setup(struct gt_writer *w);
int gt_writer_at_bound(struct gt_writer *w);
void gt_writer_bound_release(struct gt_writer *w);
/* gt_writer_setup.c: the file's tables, views (the schema up to `index_mark`)
 * and statements, its process meta, API and syscall names and the metas
 * deferred so far, in one transaction; w->ready after. -1 with the reason. */
int gt_writer_setup(struct gt_writer *w, const char *schema, size_t schema_len,
                    const char *index_mark, char *err, size_t err_len);
/* The same on a short-lived thread at a lower priority (nice +10), waited for. */
int gt_writer_setup_apart(struct gt_writer *w, const char *schema, size_t schema_len,
                          const char *index_mark, char *err, size_t err_len);
/* A meta set before the file is ready, kept for gt_writer_setup. */
void gt_meta_defer(struct gt_writer *w, const char *key, const char *value);
/* gt_writer_file.c: who, where, when, with which settings, into meta. */
struct gt_config;
void gt_write_process_meta(struct gt_writer *w, const struct gt_config *cfg);
/* A window that starts before its file was made (the flight recorder's):
 * meta.start_ns, the trace's origin, moved back to its start. */
void gt_writer_origin_back(struct gt_writer *w, uint64_t since_ns);
/* The rows of a Python stack, its frames and code objects, once each
 * (gt_writer_py.c). */
void gt_emit_pystack(struct gt_writer *w, uint32_t pystack_id);
int gt_bit_test_set(uint8_t *bits, uint32_t i);
/* CUDA Graph nodes (gt_writer_graph.c): the node a graph-building call or
 * a GT_API_GRAPH_NODE record made, into graph_node_rows. */
struct gt_event;
void gt_write_graph_node(struct gt_writer *w, const struct gt_event *e);
/* Columns of the events row (schema/gputrace.sql), from 0. */
enum { EC_TID, EC_API, EC_START, EC_DUR, EC_RESULT, EC_STREAM, EC_STACK, EC_PYSTACK, EC_CORR, EC_A0, EC_A1,
       EC_A2, EC_G_START, EC_G_DUR, EC_G_STREAM, EC_COUNT };

/* The events row of an event (its id is SQLite's next rowid); a launch's
 * configuration is stored on first sight (gt_writer_rows.c). */
struct gt_event;
void gt_event_row(struct gt_writer *w, const struct gt_event *e, struct gt_row *r);
/* Puts a GPU record in the row: its times, where it ran and, for a copy,
 * CUPTI's memory kinds (has_mem). */
void gt_event_row_gpu(struct gt_row *r, uint64_t start, uint64_t end, uint32_t device, uint32_t stream, int has_mem,
                      unsigned src_kind, unsigned dst_kind);
/* Queues the row for writing. */
void gt_event_store(struct gt_writer *w, struct gt_row *r);
void gt_writer_rows_free(struct gt_writer *w);

/* GPU record kinds, as gpu_ops.kind stores them. */
enum { GT_GPU_KERNEL, GT_GPU_MEMCPY, GT_GPU_MEMSET, GT_GPU_SYNC };

/* An event whose GPU record CUPTI will deliver later: its row waits, so
 * the record can go in it (gt_writer_pend.c). 0: not held; store it now. */
int gt_pend_hold(struct gt_writer *w, const struct gt_event *e, int gpu_kind);
/* Stores the waiting rows that waited too long, or all of them. */
void gt_pend_expire(struct gt_writer *w, int all);
/* Puts a GPU record in its call's waiting row and stores the row. 0: no
 * such row waits; the record goes to gpu_ops. */
int gt_pend_fold(struct gt_writer *w, uint64_t ext, int gpu_kind, uint32_t device, uint32_t stream, uint64_t start,
                 uint64_t end, int has_mem, unsigned src_kind, unsigned dst_kind, uint64_t bytes);
void gt_writer_pend_free(struct gt_writer *w);

/* meta's CUPTI counters: the tracer's dropped records, and the program's
 * own use of CUPTI beside it (cupti/gt_cupti_app.h). */
void gt_writer_cupti_counters(struct gt_writer *w);
/* Stores one CUPTI activity record (a gt_cupti_record_fn). */
void gt_write_gpu_record(const void *record, void *arg);
/* The writer's GPU-side state, freed with the writer. */
void gt_writer_gpu_free(struct gt_writer *w);

/* NVTX events (api GT_API_NVTX) into their tables (gt_writer_nvtx.c);
 * after each drain of all rings, the ends that came in before their start
 * try again (last: at the end, when the ranges still open are written);
 * the counters go to meta; freed with the database connection. */
void gt_write_nvtx(struct gt_writer *w, const struct gt_event *e);
void gt_writer_nvtx_after_drain(struct gt_writer *w, int last);
/* Writes the ranges waiting in the batch (before a commit). */
void gt_writer_nvtx_flush(struct gt_writer *w);
void gt_writer_nvtx_counters(struct gt_writer *w, void (*meta)(struct gt_writer *, const char *, uint64_t));
void gt_writer_nvtx_free(struct gt_writer *w);

/* Host samples (api GT_API_SAMPLE) into `samples` (gt_writer_samples.c);
 * syscall_names at open; the sampler's counters to meta. */
void gt_write_sample(struct gt_writer *w, const struct gt_event *e);
int gt_write_syscall_names(struct gt_writer *w);
void gt_writer_sample_counters(struct gt_writer *w, void (*meta)(struct gt_writer *, const char *, uint64_t));

#endif

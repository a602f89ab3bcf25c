/* gt_writer_sql.c: the writer's statements and the few calls every other
 * part of the writer makes through them: a statement stepped, a meta row
 * set (kept until the file is ready), a raw SQL line run, and what a
 * failed write does (one line, recording stopped). Below everything else
 * in writer/ but gt_writer_bound.c, which it asks whether a failed write
 * was GPUTRACE_MAX_SIZE's bound. */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include <sqlite3.h>

#include "base/gt_base.h"
#include "writer/gt_writer_int.h"

const char *const gt_sql[ST_COUNT] = {
    /* No id: SQLite's next rowid is the next id, found without the
     * lookup an explicit one costs. */
    [ST_EVENT] = "INSERT INTO events(tid,api_id,start_ns,dur_ns,result,stream,stack_id,pystack_id,corr,"
                 "a0,a1,a2,g_start_ns,g_dur_ns,g_stream) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    [ST_EVENT_BATCH] = NULL, /* GT_BATCH_ROWS rows of ST_EVENT's, built at open */
    [ST_THREAD] = "INSERT OR IGNORE INTO threads VALUES(?,?)",
    [ST_LAUNCH_CONFIG] = "INSERT INTO launch_configs VALUES(?,?,?,?,?,?,?,?,?,?,?)",
    [ST_STRING] = "INSERT INTO strings VALUES(?,?,?)",
    [ST_MODULE] = "INSERT INTO modules VALUES(?,?)",
    [ST_FRAME] = "INSERT INTO frames VALUES(?,?,?,?,?,?,?,?,?)",
    [ST_STACK] = "INSERT INTO stacks VALUES(?,?,?)",
    [ST_META] = "INSERT OR REPLACE INTO meta VALUES(?,?)",
    [ST_GPU] = "INSERT INTO gpu_ops(id,kind,corr,correlation_id,device,stream,start_ns,dur_ns,name_id,bytes,"
               "copy_kind,src_kind,dst_kind,sync_type,graph_id,graph_node_id) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    [ST_GPU_BATCH] = NULL, /* GT_BATCH_ROWS rows of ST_GPU's, built at open */
    [ST_GPU_CORR] = "UPDATE gpu_ops SET corr = ? WHERE id = ?",
    /* A node's first row stands: the call that made it comes first, and a
     * later call that only read the same capture state (an event record,
     * a wait, work the driver did not capture) must not take it over. */
    [ST_GNODE] = "INSERT OR IGNORE INTO graph_node_rows VALUES(?,?,?,?,?,?,?,?,?,?)",
    /* A clone's node takes its original's kind, kernel and site. */
    [ST_GNODE_CLONE] = "INSERT OR REPLACE INTO graph_node_rows SELECT ?1, ?2, kind, name_id, api_id, tid, ns, "
                       "stack_id, pystack_id, ?3 FROM graph_node_rows WHERE node_id = ?3",
    [ST_OVERHEAD] = "INSERT INTO cupti_overhead VALUES(?,?,?)",
    [ST_PYCODE] = "INSERT INTO py_code VALUES(?,?,?,?)",
    [ST_PYFRAME] = "INSERT INTO py_frames VALUES(?,?,?,?)",
    [ST_PYSTACK] = "INSERT INTO py_stacks VALUES(?,?,?)",
    [ST_RESULT_NAME] = "INSERT INTO result_names VALUES(?,?,?)",
    [ST_SAMPLE] = "INSERT INTO samples(tid,ns,state,syscall,stack_id,pystack_id) VALUES(?,?,?,?,?,?)",
};

int gt_exec(sqlite3 *db, const char *sql)
{
    return sqlite3_exec(db, sql, NULL, NULL, NULL);
}

/* Why recording stops: GPUTRACE_MAX_SIZE reached, or the write's error. */
static void gt_writer_say_failed(struct gt_writer *w, const char *why)
{
    if (gt_writer_at_bound(w))
        gt_warn("%s reached GPUTRACE_MAX_SIZE (%llu bytes with its indexes): recording stops, the trace keeps what "
                "was recorded before", w->path, (unsigned long long)w->cfg.max_size_bytes);
    else
        gt_warn("cannot write %s: %s; recording stops, the trace keeps what was committed", w->path, why);
}

/* A write failed (a full disk, a file size limit, an I/O error): one line,
 * and recording stops for the rest of the process, whose calls then go
 * straight through. What was committed stays a consistent database. */
void gt_writer_failed(struct gt_writer *w, const char *why)
{
    if (w->failed)
        return;
    w->failed = 1;
    /* For meta: SQLite says a full disk as SQLITE_FULL, with no errno. */
    int full = strcmp(why, sqlite3_errstr(SQLITE_FULL)) == 0;
    w->fail_errno = full ? ENOSPC : w->db ? sqlite3_system_errno(w->db) : 0;
    snprintf(w->fail_why, sizeof(w->fail_why), "%s", why);
    int active = GT_STATE_ACTIVE;
    atomic_compare_exchange_strong(&gt_state, &active, GT_STATE_DISABLED);
    gt_writer_say_failed(w, why);
}

/* For statements whose every column is bound on every row. */
int gt_step_keep(struct gt_writer *w, int which)
{
    sqlite3_stmt *s = w->st[which];
    int rc = sqlite3_step(s);
    sqlite3_reset(s);
    if (rc != SQLITE_DONE)
        gt_writer_failed(w, sqlite3_errstr(rc));
    return rc == SQLITE_DONE ? 0 : -1;
}

int gt_step(struct gt_writer *w, int which)
{
    int rc = gt_step_keep(w, which);
    sqlite3_clear_bindings(w->st[which]);
    return rc;
}

void gt_meta(struct gt_writer *w, const char *key, const char *value)
{
    if (!w->ready) {
        gt_meta_defer(w, key, value);
        return;
    }
    sqlite3_bind_text(w->st[ST_META], 1, key, -1, SQLITE_STATIC);
    sqlite3_bind_text(w->st[ST_META], 2, value, -1, SQLITE_TRANSIENT);
    gt_step(w, ST_META);
}

void gt_meta_u64(struct gt_writer *w, const char *key, uint64_t v)
{
    char buf[32];
    snprintf(buf, sizeof(buf), "%llu", (unsigned long long)v);
    gt_meta(w, key, buf);
}

int gt_bit_test_set(uint8_t *bits, uint32_t i)
{
    uint8_t m = (uint8_t)(1u << (i & 7));
    if (bits[i >> 3] & m)
        return 1;
    bits[i >> 3] |= m;
    return 0;
}

void gt_meta_defer(struct gt_writer *w, const char *key, const char *value)
{
    if (w->ndeferred == GT_DEFERRED_META)
        return; /* the few the session sets fit */
    snprintf(w->deferred[w->ndeferred][0], sizeof(w->deferred[0][0]), "%s", key);
    snprintf(w->deferred[w->ndeferred][1], sizeof(w->deferred[0][1]), "%s", value ? value : "");
    w->ndeferred++;
}

/* gt_export_perfetto.c: Perfetto's native trace format, packets of
 * perfetto.protos.Trace (perfetto_trace.proto, encoded by protobuf-c).
 *
 * Tracks: the process, one per host thread under it (its CUDA calls; in
 * schema 6 and later its NVTX push/pop ranges and marks, each start/end
 * range, which may end on another thread, on a child track of its own; in
 * schema 7 its host samples as instant events), one per GPU ("GPU N (pid
 * P)") with a child per stream (kernels, copies, memsets) that has a
 * "busy %" counter child, and one of idle gaps. Slices are a BEGIN and an END packet;
 * each call names the GPU work it caused by flow ids its GPU slices end.
 * Slice names and call sites are interned: written once per trace, then
 * referred to by number, so a slice costs a few dozen bytes.
 *
 * Rows are streamed from the storage tables by start time (one pass over
 * the calls, carrying the GPU records kept in their rows, then one over
 * the GPU records kept apart): memory does not grow with the trace.
 * Perfetto reads packets by timestamp, file order breaking ties, so a
 * track's slices must reach the file in start order for a slice that ends
 * at t to close before the next one opens at t. Threads' calls do; a
 * stream's work comes in the order of the calls that queued it (its
 * order on a stream, which runs in issue order), except that records kept
 * apart from their calls (a graph's kernels) come after the rest: a tie
 * between one of those and a record kept in its call's row, on the same
 * stream, could nest the two.
 *
 * This file writes the packets, the tracks, the calls and the GPU work;
 * the busy counters, NVTX ranges, idle gaps and host samples are
 * gt_export_perfetto_more.c's. */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/gt_err.h"
#include "base/gt_fmt.h"
#include "output/gt_export_perfetto_int.h"

/* ---- packets ---- */

void gt_pf_write(struct gt_pf *w, gt_packet *p)
{
    if (w->failed)
        return;
    p->has_trusted_packet_sequence_id = 1;
    p->trusted_packet_sequence_id = w->seq;
    /* A Trace holding one packet: concatenated, they are one Trace. */
    Perfetto__Protos__Trace tr = PERFETTO__PROTOS__TRACE__INIT;
    tr.n_packet = 1;
    tr.packet = &p;
    size_t n = perfetto__protos__trace__get_packed_size(&tr);
    if (n > w->bufcap) {
        uint8_t *b = realloc(w->buf, n * 2);
        if (!b) {
            gt_err("out of memory");
            w->failed = 1;
            return;
        }
        w->buf = b;
        w->bufcap = n * 2;
    }
    perfetto__protos__trace__pack(&tr, w->buf);
    if (fwrite(w->buf, 1, n, w->x->out) != n) {
        /* reported by the caller when it closes the file */
        w->x->write_errno = errno ? errno : EIO;
        w->failed = 1;
    }
}

uint64_t gt_pf_rel(const struct gt_pf *w, int64_t ns)
{
    return ns > w->x->origin_ns ? (uint64_t)ns - (uint64_t)w->x->origin_ns : 0;
}

/* ---- tracks ---- */

void gt_pf_track(struct gt_pf *w, uint64_t uuid, uint64_t parent, const char *name,
                 Perfetto__Protos__ProcessDescriptor *proc, Perfetto__Protos__ThreadDescriptor *thr)
{
    Perfetto__Protos__TrackDescriptor d = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
    d.has_uuid = 1;
    d.uuid = uuid;
    if (parent) {
        d.has_parent_uuid = 1;
        d.parent_uuid = parent;
    }
    d.name = (char *)name;
    d.process = proc;
    d.thread = thr;
    gt_packet p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
    p.track_descriptor = &d;
    gt_pf_write(w, &p);
}

uint64_t gt_pf_thread(struct gt_pf *w, int64_t tid)
{
    int64_t *slot = gt_map_at(&w->thread_uuid, (uint64_t)tid);
    if (!slot)
        return w->process_uuid;
    if (*slot)
        return (uint64_t)*slot;
    *slot = (int64_t)++w->next_uuid;
    char *tname = NULL;
    sqlite3_stmt *q;
    /* the name NVTX gave it (schema 6), else the one the tracer read */
    const char *sql = w->t->schema_version >= 6
                          ? "SELECT COALESCE((SELECT name FROM thread_names WHERE tid = ?1), "
                            "(SELECT name FROM threads WHERE tid = ?1))"
                          : "SELECT name FROM threads WHERE tid = ?1";
    if (sqlite3_prepare_v2(w->t->db, sql, -1, &q, NULL) == SQLITE_OK) {
        sqlite3_bind_int64(q, 1, tid);
        if (sqlite3_step(q) == SQLITE_ROW && sqlite3_column_text(q, 0))
            tname = strdup((const char *)sqlite3_column_text(q, 0));
        sqlite3_finalize(q);
    }
    char name[160];
    snprintf(name, sizeof(name), "%s (tid %lld)", tname && *tname ? tname : "thread", (long long)tid);
    free(tname);
    Perfetto__Protos__ThreadDescriptor td = PERFETTO__PROTOS__THREAD_DESCRIPTOR__INIT;
    td.has_pid = td.has_tid = 1;
    td.pid = (int32_t)w->pid;
    td.tid = tid;
    td.thread_name = name;
    gt_pf_track(w, (uint64_t)*slot, w->process_uuid, NULL, NULL, &td);
    return (uint64_t)*slot;
}

uint64_t gt_pf_gpu(struct gt_pf *w, int64_t device)
{
    int64_t *slot = gt_map_at(&w->gpu_uuid, (uint64_t)device);
    if (!slot)
        return 0;
    if (!*slot) {
        *slot = (int64_t)++w->next_uuid;
        char name[96];
        snprintf(name, sizeof(name), "GPU %lld (pid %lld)", (long long)device, (long long)w->pid);
        gt_pf_track(w, (uint64_t)*slot, 0, name, NULL, NULL);
    }
    return (uint64_t)*slot;
}

uint64_t gt_pf_stream(struct gt_pf *w, int64_t device, int64_t stream)
{
    uint64_t key = ((uint64_t)device << 48) ^ (uint64_t)stream;
    int64_t *slot = gt_map_at(&w->stream_uuid, key);
    if (!slot)
        return 0;
    if (!*slot) {
        uint64_t gpu = gt_pf_gpu(w, device);
        slot = gt_map_at(&w->stream_uuid, key); /* the map may have moved */
        if (!slot)
            return 0;
        *slot = (int64_t)++w->next_uuid;
        char name[64];
        snprintf(name, sizeof(name), "stream %lld", (long long)stream);
        gt_pf_track(w, (uint64_t)*slot, gpu, name, NULL, NULL);
    }
    return (uint64_t)*slot;
}

/* ---- interning ---- */

/* The iid of an event name, interned into the packet being built when new. */
uint64_t gt_pf_name(struct gt_pf *w, const char *name, int by_pointer)
{
    int64_t *pslot = NULL;
    if (by_pointer) {
        pslot = gt_map_at(&w->name_ptr, (uint64_t)(uintptr_t)name);
        if (pslot && *pslot)
            return (uint64_t)*pslot;
    }
    uint64_t h = gt_map_hash_text(name);
    int64_t *slot;
    for (;; h++) {
        if (!(slot = gt_map_at(&w->name_iid, h)))
            return 0;
        if (!*slot || strcmp(w->names[*slot - 1], name) == 0)
            break;
    }
    if (!*slot) {
        if (w->nnames == w->capnames) {
            uint64_t cap = w->capnames ? w->capnames * 2 : 256;
            char **n = realloc(w->names, cap * sizeof(*n));
            if (!n)
                return 0;
            w->names = n;
            w->capnames = cap;
        }
        if (!(w->names[w->nnames] = strdup(name)))
            return 0;
        *slot = (int64_t)++w->nnames;
        /* One new name per packet at most: a slice has one name. */
        w->new_name.has_iid = 1;
        w->new_name.iid = (uint64_t)*slot;
        w->new_name.name = w->names[*slot - 1];
        w->new_name_p = &w->new_name;
        w->in.n_event_names = 1;
        w->in.event_names = &w->new_name_p;
    }
    uint64_t iid = (uint64_t)*slot;
    if (by_pointer && (pslot = gt_map_at(&w->name_ptr, (uint64_t)(uintptr_t)name)) != NULL)
        *pslot = (int64_t)iid;
    return iid;
}

/* The iid of a call's site (its SourceLocation), 0 when it has no stack. */
static uint64_t gt_pf_site(struct gt_pf *w, int64_t key)
{
    if (!key)
        return 0;
    uint32_t i = gt_site_index(&w->sites, key);
    if (i == UINT32_MAX)
        return 0;
    if (i >= w->site_cap) {
        size_t cap = w->site_cap ? w->site_cap : 256;
        while (cap <= i)
            cap *= 2;
        uint8_t *s = realloc(w->site_sent, cap);
        if (!s)
            return 0;
        memset(s + w->site_cap, 0, cap - w->site_cap);
        w->site_sent = s;
        w->site_cap = cap;
    }
    if (!w->site_sent[i]) {
        const struct gt_site *site = gt_site_by_index(&w->sites, i);
        w->site_sent[i] = 1;
        w->new_loc.has_iid = 1;
        w->new_loc.iid = (uint64_t)i + 1;
        /* The innermost frame, and the whole stack innermost first. */
        w->new_loc.function_name = (char *)(site->nframes ? site->frames[0] : site->text);
        w->new_loc.file_name = (char *)site->text;
        w->new_loc_p = &w->new_loc;
        w->in.n_source_locations = 1;
        w->in.source_locations = &w->new_loc_p;
    }
    return (uint64_t)i + 1;
}

/* ---- slices ---- */

/* 1 when the event limit stops this slice (and the export's events). */
int gt_pf_limit(struct gt_pf *w, int64_t start)
{
    struct gt_export *x = w->x;
    if (!x->max_events || x->events < x->max_events)
        return 0;
    uint64_t at = gt_pf_rel(w, start);
    if (!x->cut || at < x->cut_at_ns)
        x->cut_at_ns = at;
    x->cut = 1;
    return 1;
}

void gt_pf_slice(struct gt_pf *w, const struct gt_pf_slice *s)
{
    memset(&w->in, 0, sizeof(w->in));
    perfetto__protos__interned_data__init(&w->in);
    perfetto__protos__event_name__init(&w->new_name);
    perfetto__protos__source_location__init(&w->new_loc);
    gt_tevent e = PERFETTO__PROTOS__TRACK_EVENT__INIT;
    e.has_type = e.has_track_uuid = 1;
    e.type = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN;
    e.track_uuid = s->track;
    e.name_iid = gt_pf_name(w, s->name, s->name_by_pointer);
    e.has_name_iid = e.name_iid != 0;
    e.source_location_iid = gt_pf_site(w, s->site_key);
    e.has_source_location_iid = e.source_location_iid != 0;
    e.n_flow_ids = s->nflows;
    e.flow_ids = s->flows;
    uint64_t end_flow = s->end_flow;
    if (end_flow) {
        e.n_terminating_flow_ids = 1;
        e.terminating_flow_ids = &end_flow;
    }
    Perfetto__Protos__DebugAnnotation a = PERFETTO__PROTOS__DEBUG_ANNOTATION__INIT, *ap = &a;
    if (s->result || s->cause || s->domain) {
        a.name = s->result ? "result" : s->cause ? "cause" : "domain";
        a.string_value = (char *)(s->result ? s->result : s->cause ? s->cause : s->domain);
        e.n_debug_annotations = 1;
        e.debug_annotations = &ap;
    }
    if (s->instant)
        e.type = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_INSTANT;
    static char *const nvtx_category = "nvtx";
    if (s->nvtx) {
        e.n_categories = 1;
        e.categories = (char **)&nvtx_category;
    }
    gt_packet p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
    /* No SEQ_NEEDS_INCREMENTAL_STATE: it only asks a reader to drop
     * packets whose sequence lost its start, which a file written whole
     * never does; 2 bytes a slice. */
    p.has_timestamp = 1;
    p.timestamp = gt_pf_rel(w, s->start);
    p.track_event = &e;
    if (w->in.n_event_names || w->in.n_source_locations)
        p.interned_data = &w->in;
    gt_pf_write(w, &p);
    if (s->instant) {
        w->x->events++;
        return;
    }

    gt_tevent end = PERFETTO__PROTOS__TRACK_EVENT__INIT;
    end.has_type = end.has_track_uuid = 1;
    end.type = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_END;
    end.track_uuid = s->track;
    gt_packet q = PERFETTO__PROTOS__TRACE_PACKET__INIT;
    q.has_timestamp = 1;
    q.timestamp = gt_pf_rel(w, s->end > s->start ? s->end : s->start);
    q.track_event = &end;
    gt_pf_write(w, &q);
    w->x->events++;
}

static const char *const gt_pf_copy_names[] = {
    "memcpy HtoD", "memcpy DtoH", "memcpy DtoD", "memcpy HtoH", "memcpy PtoP", "memcpy",
};

static void gt_pf_op_name(const struct gt_op_rec *o, const char *kernel, struct gt_pf_slice *s)
{
    if (o->kind == GT_OP_KERNEL) {
        s->name = o->name ? o->name : kernel ? kernel : "kernel";
        s->name_by_pointer = o->name != NULL || kernel != NULL;
    } else {
        s->name = o->kind == GT_OP_MEMSET ? "memset"
                : gt_pf_copy_names[o->copy_kind >= 0 && o->copy_kind <= GT_RCOPY_OTHER ? o->copy_kind : 5];
        s->name_by_pointer = 1; /* static strings */
    }
}

/* Flow ids are global in Perfetto, and free again once the flow ended
 * (read in time order). An arrow to a GPU record kept in its call's row,
 * whose start is known when the call is written, takes an id below
 * GT_PF_RING (a 2-byte varint) that the flow before it has given back by
 * the time this call starts; calls come by start time, so the ring is
 * checked in passing. Other arrows take ids from GT_PF_RING on, one each
 * over the export. A call whose GPU records are kept apart takes one id
 * per record it has in the window, in a run; its records take them in
 * turn. */
#define GT_PF_RING 16384
static uint64_t gt_pf_ring_free[GT_PF_RING]; /* by id: its last flow's end, +1 */
static uint64_t gt_pf_ring_at = 1;
static uint64_t gt_pf_next_flow = GT_PF_RING;

static uint64_t gt_pf_row_flow(uint64_t start, uint64_t end)
{
    for (int tries = 0; tries < 64; tries++) {
        uint64_t id = gt_pf_ring_at;
        gt_pf_ring_at = gt_pf_ring_at + 1 < GT_PF_RING ? gt_pf_ring_at + 1 : 1;
        if (gt_pf_ring_free[id] <= start + 1) {
            gt_pf_ring_free[id] = end + 1;
            return id;
        }
    }
    return gt_pf_next_flow++;
}

static void gt_pf_on_call(const struct gt_rec *r, void *arg)
{
    struct gt_pf *w = arg;
    if (w->failed)
        return;
    int in = gt_export_in_window(w->x, (int64_t)r->start);
    int op_in = r->has_op && gt_export_in_window(w->x, (int64_t)r->op.start);
    if (!in && !op_in)
        return;
    if (gt_pf_limit(w, in ? (int64_t)r->start : (int64_t)r->op.start))
        return;
    uint64_t flows[GT_PF_FLOWS + 1];
    size_t nflows = 0;
    uint64_t row_flow = 0;
    if (op_in && in)
        flows[nflows++] = row_flow = gt_pf_row_flow(gt_pf_rel(w, (int64_t)r->start), gt_pf_rel(w, (int64_t)r->op.start));
    if (in) {
        int64_t count = r->link ? gt_map_get(&w->op_count, (uint64_t)r->link) : 0;
        if (count) {
            int64_t n = count < GT_PF_FLOWS ? count : GT_PF_FLOWS;
            int64_t *first = gt_map_at(&w->call_flow, (uint64_t)r->link);
            if (first) {
                *first = (int64_t)gt_pf_next_flow;
                for (int64_t k = 0; k < n; k++)
                    flows[nflows++] = gt_pf_next_flow++;
            }
        }
        char rbuf[96];
        struct gt_pf_slice s = {
            .track = gt_pf_thread(w, r->tid), .start = (int64_t)r->start, .end = (int64_t)r->end,
            .name = gt_scan_api_name(w->scan, r->api), .name_by_pointer = 1, .site_key = r->site_key,
            .flows = flows, .nflows = nflows,
            .result = r->result ? gt_scan_result_name(w->scan, r->api, r->result, rbuf, sizeof(rbuf)) : NULL,
        };
        gt_pf_slice(w, &s);
    }
    if (op_in && (!in || !gt_pf_limit(w, (int64_t)r->op.start))) {
        struct gt_pf_slice s = {
            .track = gt_pf_stream(w, r->op.device, r->op.stream), .start = (int64_t)r->op.start,
            .end = (int64_t)r->op.end, .end_flow = row_flow,
        };
        gt_pf_op_name(&r->op, r->kernel, &s);
        gt_pf_slice(w, &s);
        gt_pf_busy_add(w, r->op.device, r->op.stream, (int64_t)r->op.start, (int64_t)r->op.end);
    }
}

static void gt_pf_on_op(const struct gt_op_rec *o, void *arg)
{
    struct gt_pf *w = arg;
    if (w->failed || !gt_export_in_window(w->x, (int64_t)o->start) || gt_pf_limit(w, (int64_t)o->start))
        return;
    struct gt_pf_slice s = {.track = gt_pf_stream(w, o->device, o->stream), .start = (int64_t)o->start,
                            .end = (int64_t)o->end};
    gt_pf_op_name(o, NULL, &s);
    if (o->link) {
        int64_t f = gt_map_get(&w->call_flow, (uint64_t)o->link);
        if (f) {
            /* taken: the records of this call written so far, + 1 */
            int64_t *taken = gt_map_at(&w->op_taken, (uint64_t)o->link);
            if (taken) {
                int64_t k = *taken ? *taken - 1 : 0;
                if (k < GT_PF_FLOWS)
                    s.end_flow = (uint64_t)(f + k);
                *taken = k + 2;
            }
        }
    }
    gt_pf_slice(w, &s);
    gt_pf_busy_add(w, o->device, o->stream, (int64_t)o->start, (int64_t)o->end);
}

/* How many GPU records kept apart from their call each call has in the
 * window, so the call's slice can name a flow to each. */
static int gt_pf_count_ops(struct gt_pf *w)
{
    sqlite3_stmt *q;
    const char *sql = w->t->schema_version >= 4
        ? "SELECT corr, count(*) FROM gpu_ops WHERE corr IS NOT NULL AND kind < 3 "
          "AND start_ns >= ?1 AND start_ns < ?2 GROUP BY corr"
        : "SELECT api_call_id, count(*) FROM gpu_activity WHERE api_call_id IS NOT NULL "
          "AND start_ns >= ?1 AND start_ns < ?2 GROUP BY api_call_id";
    if (sqlite3_prepare_v2(w->t->db, sql, -1, &q, NULL) != SQLITE_OK) {
        gt_trace_sql_error(w->t, "query");
        return -1;
    }
    int64_t to = w->x->to_ns > (uint64_t)INT64_MAX - (uint64_t)w->x->origin_ns ? INT64_MAX
               : w->x->origin_ns + (int64_t)w->x->to_ns;
    sqlite3_bind_int64(q, 1, w->x->origin_ns + (int64_t)w->x->from_ns);
    sqlite3_bind_int64(q, 2, to);
    int rc;
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        int64_t *slot = gt_map_at(&w->op_count, (uint64_t)sqlite3_column_int64(q, 0));
        if (!slot) {
            sqlite3_finalize(q);
            return -1;
        }
        *slot = sqlite3_column_int64(q, 1);
    }
    sqlite3_finalize(q);
    if (rc != SQLITE_DONE) {
        gt_trace_sql_error(w->t, "reading the trace");
        return -1;
    }
    return 0;
}

int gt_export_perfetto_trace(struct gt_trace *t, struct gt_export *x, uint32_t seq)
{
    static uint64_t next_uuid; /* track uuids unique over the traces of one export */
    struct gt_pf w = {.x = x, .t = t, .seq = seq, .next_uuid = next_uuid};
    w.pid = gt_trace_meta_int(t, "pid", 0);
    if (gt_sites_init(&w.sites, t->db, t->schema_version) < 0) {
        gt_err("%s: %s", t->path, sqlite3_errmsg(t->db));
        gt_sites_free(&w.sites);
        return -1;
    }
    int rc = -1;
    if (!(w.scan = gt_scan_open(t)))
        goto out;
    /* The sequence starts with its incremental state (interned data) cleared. */
    gt_packet first = PERFETTO__PROTOS__TRACE_PACKET__INIT;
    first.has_sequence_flags = first.has_first_packet_on_sequence = 1;
    first.sequence_flags = GT_SEQ_CLEARED;
    first.first_packet_on_sequence = 1;
    Perfetto__Protos__TrackDescriptor pd = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
    Perfetto__Protos__ProcessDescriptor proc = PERFETTO__PROTOS__PROCESS_DESCRIPTOR__INIT;
    char *cmd = gt_trace_meta(t, "cmdline");
    proc.has_pid = 1;
    proc.pid = (int32_t)w.pid;
    proc.process_name = cmd && *cmd ? cmd : "process";
    pd.has_uuid = 1;
    pd.uuid = w.process_uuid = ++w.next_uuid;
    pd.process = &proc;
    first.track_descriptor = &pd;
    gt_pf_write(&w, &first);
    free(cmd);

    int64_t from = x->origin_ns + (int64_t)x->from_ns;
    int64_t to = x->to_ns > (uint64_t)INT64_MAX - (uint64_t)x->origin_ns ? INT64_MAX : x->origin_ns + (int64_t)x->to_ns;
    gt_scan_set_window(w.scan, from, to);
    struct gt_pf_gapjob job = {.path = t->path, .min_gap_ns = x->min_gap_ns, .rc = -1};
    pthread_t gap_thread;
    int threaded = pthread_create(&gap_thread, NULL, gt_pf_gap_run, &job) == 0;
    int ok = gt_pf_count_ops(&w) == 0 && gt_scan_calls(w.scan, gt_pf_on_call, &w) == 0 &&
             gt_scan_ops(w.scan, gt_pf_on_op, &w) == 0 && gt_pf_samples(&w, from, to) == 0;
    if (threaded)
        pthread_join(gap_thread, NULL);
    else if (ok)
        gt_pf_gap_run(&job);
    if (ok && gt_pf_gaps(&w, &job) == 0 && gt_pf_nvtx(&w) == 0) {
        if (gt_pf_busy_write(&w) == 0)
            rc = 0;
    }
    if (job.rc == 0)
        gt_report_free(&job.r);
out:
    next_uuid = w.next_uuid;
    gt_scan_close(w.scan);
    gt_sites_free(&w.sites);
    gt_map_free(&w.thread_uuid);
    gt_map_free(&w.gpu_uuid);
    gt_map_free(&w.stream_uuid);
    gt_map_free(&w.name_iid);
    gt_map_free(&w.name_ptr);
    gt_map_free(&w.op_count);
    gt_map_free(&w.call_flow);
    gt_map_free(&w.op_taken);
    gt_map_free(&w.busy_idx);
    for (size_t i = 0; i < w.nbusy; i++)
        gt_buckets_free(&w.busy[i].b);
    free(w.busy);
    gt_xs_free(&w.busy_work);
    for (uint64_t i = 0; i < w.nnames; i++)
        free(w.names[i]);
    free(w.names);
    free(w.site_sent);
    free(w.buf);
    return rc;
}

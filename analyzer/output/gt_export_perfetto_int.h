/* gt_export_perfetto_int.h: what the Perfetto export's two files share:
 * the writer's state, the slice it writes, and the packet, track, name and
 * slice helpers of gt_export_perfetto.c that the tracks beside the calls
 * and the GPU work (gt_export_perfetto_more.c) are written with. */
#ifndef GT_EXPORT_PERFETTO_INT_H
#define GT_EXPORT_PERFETTO_INT_H

#include <stdint.h>

#include "analysis/gt_analyze.h"
#include "analysis/gt_site.h"
#include "base/gt_extsort.h"
#include "base/gt_map.h"
#include "output/gt_export_buckets.h"
#include "output/gt_export_perfetto.h"
#include "perfetto_trace.pb-c.h"
#include "trace/gt_scan.h"

typedef Perfetto__Protos__TracePacket gt_packet;
typedef Perfetto__Protos__TrackEvent gt_tevent;

#define GT_SEQ_CLEARED 1 /* TracePacket.SEQ_INCREMENTAL_STATE_CLEARED */
/* Arrows drawn from one call to GPU records kept apart from it (a graph's
 * kernels, a batch's copies): the first this many. */
#define GT_PF_FLOWS 256

struct gt_pf {
    struct gt_export *x;
    struct gt_trace *t;
    struct gt_scan *scan;
    struct gt_sites sites;
    uint32_t seq;
    int failed;
    uint8_t *buf;
    size_t bufcap;
    int64_t pid;
    uint64_t next_uuid, process_uuid;
    struct gt_map thread_uuid;  /* tid -> uuid */
    struct gt_map gpu_uuid;     /* device -> uuid */
    struct gt_map stream_uuid;  /* device << 48 ^ stream -> uuid */
    /* Interned event names: text -> iid by hash (probing on collisions),
     * and the scan's interned pointers -> iid for the common case. */
    struct gt_map name_iid, name_ptr;
    char **names;               /* by iid - 1 */
    uint64_t nnames, capnames;
    uint8_t *site_sent;         /* by site index: its SourceLocation was written */
    size_t site_cap;
    /* Flows to GPU records kept apart from their calls (gpu_ops): how many
     * each call has in the window, which calls were written, and how many
     * of each call's records have been written. */
    struct gt_map op_count, call_flow, op_taken;
    /* Each stream's busy time in buckets, for its "busy %" counter:
     * device << 48 ^ stream -> index + 1 into busy. */
    struct gt_map busy_idx;
    struct gt_pf_busy {
        int64_t device, stream;
        struct gt_buckets b;
    } *busy;
    size_t nbusy, capbusy;
    /* every stream's work, sorted by stream then start before it goes into
     * the buckets: export reads the calls' records first and those kept
     * apart from their calls after (gpu_ops), hundreds out of start order
     * where a loaded writer kept many apart */
    struct gt_extsort busy_work;
    int busy_work_on;
    /* The packet being built: interned data it introduces. */
    Perfetto__Protos__InternedData in;
    Perfetto__Protos__EventName new_name, *new_name_p;
    Perfetto__Protos__SourceLocation new_loc, *new_loc_p;
};

struct gt_pf_slice {
    uint64_t track;
    int64_t start, end;
    const char *name;
    int name_by_pointer;      /* `name` is the scan's interned copy */
    int64_t site_key;
    uint64_t *flows;          /* flows leaving (calls) */
    size_t nflows;
    uint64_t end_flow;        /* the flow it ends (GPU work); 0: none */
    const char *result;       /* a failed call's result name */
    const char *cause;        /* an idle gap's */
    const char *domain;       /* an NVTX range's, when not the default */
    int instant;              /* an NVTX mark: no end */
    int nvtx;                 /* an NVTX range or mark: category "nvtx" */
};

/* The idle gaps come from the report's own analysis, a pass of its own
 * over the trace: it runs beside the export's pass, on a connection of its
 * own, and its gaps are written once both are done. */
struct gt_pf_gapjob {
    const char *path;
    uint64_t min_gap_ns;
    struct gt_report r;
    int rc;
};

/* ---- gt_export_perfetto.c ---- */
void gt_pf_write(struct gt_pf *w, gt_packet *p);
/* ns on the trace's clock, from the export's origin. */
uint64_t gt_pf_rel(const struct gt_pf *w, int64_t ns);
void gt_pf_track(struct gt_pf *w, uint64_t uuid, uint64_t parent, const char *name,
                 Perfetto__Protos__ProcessDescriptor *proc, Perfetto__Protos__ThreadDescriptor *thr);
uint64_t gt_pf_thread(struct gt_pf *w, int64_t tid);
uint64_t gt_pf_gpu(struct gt_pf *w, int64_t device);
uint64_t gt_pf_stream(struct gt_pf *w, int64_t device, int64_t stream);
/* An event name's interned id, interning it in w->in when new. */
uint64_t gt_pf_name(struct gt_pf *w, const char *name, int by_pointer);
int gt_pf_limit(struct gt_pf *w, int64_t start);
void gt_pf_slice(struct gt_pf *w, const struct gt_pf_slice *s);

/* ---- gt_export_perfetto_more.c ---- */
void gt_pf_busy_add(struct gt_pf *w, int64_t device, int64_t stream, int64_t s, int64_t e);
/* -1 when the work could not be sorted (said on stderr) */
int gt_pf_busy_write(struct gt_pf *w);
int gt_pf_nvtx(struct gt_pf *w);
void *gt_pf_gap_run(void *arg);
int gt_pf_gaps(struct gt_pf *w, struct gt_pf_gapjob *j);
int gt_pf_samples(struct gt_pf *w, int64_t from, int64_t to);

#endif

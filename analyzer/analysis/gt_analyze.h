/* gt_analyze.h: the analyses behind `report`, `audit` and `record`'s
 * closing lines, computed from one trace into plain structs (no printing
 * here). docs/report.md defines every figure; tests/oracle.py recomputes
 * each from the public views. */
#ifndef GT_ANALYZE_H
#define GT_ANALYZE_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/gt_busy.h"
#include "analysis/gt_window.h"
#include "base/gt_map.h"
#include "trace/gt_trace.h"

#define GT_SITE_FRAMES 5
#define GT_SITE_NATIVE_FRAMES 3

/* Where a call came from, innermost first: the first frames of the user's
 * code (frames in the CUDA, tracer and framework libraries are skipped);
 * for a call made from Python, its Python frames, then the framework's
 * native frames that reached CUDA. */
struct gt_site {
    int nframes;                    /* 0: no stack recorded */
    char frames[GT_SITE_FRAMES][160];  /* "function (module+0xoffset)", "file.py:12 in function" */
    char text[840];                 /* frames joined with " < ", or "(no stack)" */
    uint32_t index1;                /* gt_site_index + 1, once asked; 0 before */
};

/* Why the GPU was idle: what the host was doing (docs/report.md). The
 * first GT_CALL_CAUSES are the categories of calls, in the order that
 * breaks ties. */
enum gt_cause {
    GT_CAUSE_SYNC, GT_CAUSE_COPY, GT_CAUSE_MEMSET, GT_CAUSE_LAUNCH, GT_CAUSE_GRAPH, GT_CAUSE_ALLOC,
    GT_CAUSE_FREE, GT_CAUSE_EVENT, GT_CAUSE_STREAM, GT_CAUSE_MODULE, GT_CAUSE_OTHER,
    GT_CAUSE_HOST, GT_CAUSE_STARTUP, GT_CAUSE_TEARDOWN, GT_CAUSES
};
#define GT_CALL_CAUSES (GT_CAUSE_OTHER + 1)
/* "sync", "copy", ..., "module", "other_cuda", "host", "startup", "teardown" */
extern const char *const gt_cause_names[GT_CAUSES];
/* How the text report says it: "blocked in a sync", "outside CUDA"... */
extern const char *const gt_cause_text[GT_CAUSES];

/* Room for a kernel's demangled name whole: PyTorch's reach 600 bytes,
 * and two names cut to one length would read as one kernel. */
#define GT_KERNEL_NAME_MAX 4096

struct gt_launch_row {
    char kernel[GT_KERNEL_NAME_MAX]; /* per-kernel rows; "" in per-site rows */
    struct gt_site site;    /* per-site rows; nframes 0 in per-kernel rows */
    uint64_t count;
    uint64_t api_total_ns, api_mean_ns, api_p50_ns, api_p99_ns, api_max_ns;
    uint64_t queue_mean_ns; /* GPU start minus the call's end, over launches with a GPU record */
    uint64_t gpu_total_ns, gpu_mean_ns;
    uint64_t launch_bound;
    uint64_t first_api_ns;  /* per kernel: the host time of its first launch */
};

/* Kernels by GPU time, as `nsys stats` sums them. */
struct gt_kernel_row {
    char name[GT_KERNEL_NAME_MAX];
    uint64_t count, graph_count, total_ns, mean_ns, median_ns, min_ns, max_ns;
    double stddev_ns, share_pct;
};

enum gt_xfer_kind { GT_XK_HTOD, GT_XK_DTOH, GT_XK_DTOD, GT_XK_HTOH, GT_XK_PTOP, GT_XK_MEMSET, GT_XK_OTHER, GT_XKINDS };
extern const char *const gt_xfer_kind_names[GT_XKINDS];
#define GT_XBANDS 5
extern const char *const gt_xfer_band_names[GT_XBANDS];

struct gt_xfer_row {
    int kind;               /* enum gt_xfer_kind */
    int band;               /* -1 in by-kind rows */
    uint64_t count, bytes, total_ns;
    double bandwidth_gbps;
};

struct gt_h2d_row {
    struct gt_site site;
    uint64_t bytes, count, host_ns, gpu_ns;
    uint64_t pageable_bytes, pinned_bytes, mapped_bytes;
    uint64_t pageable_calls, pageable_host_ns;  /* calls with pageable memory, their host time */
    uint64_t blocking, async;       /* calls that held the host / made through an async API */
    uint64_t async_pageable;        /* async calls from pageable memory: staged, so they block */
    double bandwidth_gbps;          /* bytes / GPU time (host time without GPU times) */
    int small_storm;                /* >= 100 calls averaging under 64 KiB */
};

/* A stack the host was in, and its share of samples (gt_samples.c). */
#define GT_HOST_TEXT 240
struct gt_host_share {
    char text[GT_HOST_TEXT];        /* "train.py:45 in __next__ (blocked in read)" */
    double pct;
};
#define GT_GAP_HOST 3

/* Another thread that ran while a gap's launching thread waited
 * (gt_samples_wait.c; docs/report.md, "Host during the gap"). */
#define GT_GAP_OTHERS 3
struct gt_gap_other {
    int64_t tid;
    uint64_t samples;               /* its running samples in the gap */
    double pct;                     /* of every other thread's running samples in the gap */
    char frame[GT_HOST_TEXT];       /* its innermost own frame, as most of those show it */
};

struct gt_gap {
    int device;
    uint64_t start_ns, offset_ns, dur_ns;
    int cause;                      /* enum gt_cause */
    struct gt_site before, after;   /* the calls whose work ended before it and ended it */
    int has_before, has_after;
    char before_api[64], after_api[64];
    /* a gap the host spent inside CUDA calls of one kind: the site whose
     * calls of that kind spent the most of it, and its longest call's
     * entry point (docs/report.md: a gap's site) */
    struct gt_site spent;
    int has_spent;
    char spent_api[64];
    /* Host during the gap (schema 7 samples): the launching thread (the
     * thread of the last call making GPU work that started inside the
     * gap; -1: none), its samples inside the gap, its top stacks. */
    int64_t host_tid;
    uint64_t host_samples;
    int nhost;
    struct gt_host_share host[GT_GAP_HOST];
    char host_state[32];            /* what most (over half) of them show: "sleeping", "blocked in I/O"...; "" */
    /* the launching thread waited (a gap the host spent outside CUDA,
     * over half its samples blocked on a lock or asleep): the other
     * threads' running samples in the gap, and the threads with the most */
    int waited;
    uint64_t others_samples;
    int nothers;
    struct gt_gap_other others[GT_GAP_OTHERS];
};

/* GPU idle by host stack: each listed gap's time shared among the
 * launching thread's samples inside it. */
/* The same idle time as a tree, for the flame graph (docs/report.md, "GPU
 * idle by host stack"): root the listed gaps, then each sample's Python
 * frames outermost first, its native frames, and its state; a gap's time
 * shared among its samples' paths by count (rounded down). Nodes in
 * preorder, children by idle time, most first; x_ns is where the node
 * starts inside its parent's span, from the root's start. */
#define GT_FLAME_MIN 1000
enum gt_flame_kind { GT_FK_ROOT, GT_FK_PYTHON, GT_FK_NATIVE, GT_FK_STATE, GT_FK_NONE };
struct gt_flame_node {
    uint32_t name;                  /* offset into gt_report.flame_text */
    uint16_t depth;                 /* 0: the root */
    uint8_t kind;                   /* enum gt_flame_kind */
    uint64_t idle_ns, x_ns, samples;
};

/* The state a running sample's name ends with in a gap whose launching
 * thread waited and which is shared among the other threads (gt_samples.c). */
#define GT_HOST_WAITED "(running, launcher waiting)"
struct gt_host_stack_row {
    char text[GT_HOST_TEXT];        /* as gt_host_share; "(no samples)" for gaps without */
    uint64_t idle_ns, samples, gaps;
    double pct;                     /* of the listed gaps' idle time */
};

/* Idle time summed over every gap, by the gap's site (docs/report.md). */
struct gt_idle_site {
    struct gt_site site;
    uint64_t idle_ns, gaps;
};

/* Graph launches by call site: what each site's launches ran. */
struct gt_graph_row {
    struct gt_site site;
    uint64_t count, api_total_ns;   /* graph launch calls, their host time */
    uint64_t ops, kernels, gpu_ns;  /* the operations they ran, of which kernels; GPU time */
};

/* Work CUDA Graphs ran, by the node it ran as: where the node was made
 * (its creating call's site) and where the graph was launched
 * (docs/report.md, Graph nodes). */
struct gt_gnode_row {
    char kind[12];                  /* kernel, memcpy, memset, host, empty, other, mem_alloc, mem_free */
    char kernel[GT_KERNEL_NAME_MAX]; /* kernel nodes: the kernel the GPU ran */
    struct gt_site created, launched;
    uint64_t nodes, runs, gpu_ns;   /* distinct nodes, operations, their GPU time */
};

struct gt_sync_row {
    struct gt_site site;
    char kind[32];                  /* device, context, stream, event, memcpy_dtoh, memcpy_pageable */
    uint64_t count, blocked_ns;
};

struct gt_stream_row {
    int64_t device, stream;
    uint64_t ops, busy_ns;
    double busy_pct;
};

struct gt_device_row {
    int64_t device;
    uint64_t busy_ns, idle_ns;
    double idle_pct;
    uint64_t idle_by_cause[GT_CAUSES];
    uint64_t compute_ns, copy_ns, overlap_ns;
    double overlap_pct;
};

struct gt_api_row {
    char name[64];
    uint64_t count, total_ns, mean_ns, max_ns, errors;
};

struct gt_error_row {
    char api[64], error[64];
    uint64_t count;
};

/* One phase: a name of top-level NVTX ranges (docs/report.md, Phases). */
struct gt_phase_row {
    char name[256];
    uint64_t first_ns;              /* its first range's start */
    uint64_t ranges, wall_ns, gpu_busy_ns, gpu_idle_ns;
    double gpu_idle_pct;
    uint64_t launches, launch_host_ns, h2d_bytes, syncs, sync_ns;
};

/* One top-level range, for drawing: its phase (index into phases) and
 * times; at most GT_PHASE_SPANS of them, the earliest. */
#define GT_PHASE_SPANS 5000
struct gt_phase_span {
    size_t phase;
    uint64_t start_ns, end_ns;
};

/* Steps (docs/report.md, Steps): ranges named like a training step, or
 * given by --step. What one step spent more time on than the median step:
 * GPU idle of one cause (`cause` < GT_CAUSES), host time in syncs
 * (GT_STEP_SYNCS) or in copy calls (GT_STEP_COPIES). */
#define GT_STEP_SYNCS GT_CAUSES
#define GT_STEP_COPIES (GT_CAUSES + 1)
#define GT_STEP_WHATS (GT_CAUSES + 2)
#define GT_STEP_SLOWEST 5
struct gt_step_over {
    int what;                       /* a cause, GT_STEP_SYNCS or GT_STEP_COPIES */
    uint64_t ns, median_ns;         /* the step's time in it, the median over steps */
    int has_site;
    struct gt_site site;            /* where most of the step's time in it was */
};

struct gt_step_row {
    int64_t number, tid;
    char name[256];
    uint64_t start_ns, offset_ns, dur_ns, gpu_busy_ns, gpu_idle_ns;
    uint64_t idle_by_cause[GT_CAUSES];
    uint64_t syncs, sync_ns, copies, copy_ns, copy_bytes;
    struct gt_step_over over[GT_STEP_WHATS];  /* most time over the median first */
    int nover;
};

struct gt_steps {
    uint64_t count;                 /* 0: no steps */
    char rule[256];                 /* the --step glob, or "" for the names docs/report.md lists */
    char first_name[256];           /* the first step's name */
    uint64_t p50_ns, p99_ns, max_ns, mean_ns;
    uint64_t median[GT_STEP_WHATS]; /* each figure's median over the steps */
    struct gt_step_row *slowest;    /* the GT_STEP_SLOWEST slowest above the median, slowest first */
    size_t nslowest;
};

struct gt_finding {
    char kind[32];
    uint64_t cost_ns;
    double cost_pct;
    char title[256];
    int has_site;
    struct gt_site site;
    char advice[320];
};

struct gt_summary {
    uint64_t first_ns;              /* the span's start (trace clock) */
    uint64_t origin_ns;             /* where every +TIME counts from, as --from and --to: the
                                     * trace's start (the earliest trace's, for several) */
    uint64_t span_ns;
    int gpu_times;                  /* 1: GPU-side times from CUPTI */
    uint64_t calls, failed_calls, launches, captured_calls, graph_launches, launch_bound;
    double launch_bound_pct;
    uint64_t launch_host_ns;        /* summed over threads */
    uint64_t launch_threads;
    uint64_t launch_host_max_ns;    /* the busiest launching thread's */
    double launch_host_pct;         /* that, of the span */
    uint64_t kernel_ns;             /* GPU time in kernels */
    /* device time: each device that ran work counts its own busy and idle
     * time; busy + idle = device_ns = span x devices (docs/report.md) */
    uint64_t devices, device_ns;
    uint64_t busy_ns, idle_ns;
    double idle_pct;                /* of device_ns */
    uint64_t idle_by_cause[GT_CAUSES];
    uint64_t module_ns;             /* host time in module loading/JIT calls, summed over threads */
    uint64_t module_jit;            /* those that compiled PTX */
    uint64_t sync_ns;               /* summed over threads */
    uint64_t sync_max_ns;           /* the busiest thread's */
    double sync_pct;                /* that, of the span */
    uint64_t h2d_bytes, pageable_h2d_bytes;
    /* mapped (zero-copy) host memory: allocations and registrations with
     * the mapped flag, their bytes (kernels may read it over the bus) */
    uint64_t mapped_host_allocs, mapped_host_bytes;
    /* the tracer's own start-up on the program's thread, inside its first
     * CUDA call before that call's clock started (meta tracer_startup_ns;
     * 0 in traces written before it was recorded): in no other figure */
    uint64_t tracer_startup_ns;
};

/* GPU time by kind of work (docs/report.md, Kernel categories): each
 * kernel's category by the rules (trace/gt_catrules.h), copies and memsets
 * their own; per category its operations and their GPU time, over the
 * report and inside each phase and each listed (slowest) step. */
#define GT_CAT_NAME 32
struct gt_categories {
    size_t n;                       /* categories: gt_category_names' first, then a user's own */
    char (*names)[GT_CAT_NAME];
    uint64_t *count, *gpu_ns;       /* [n] */
    uint64_t total_ns;              /* summed over the categories */
    size_t nphases, nsteps;         /* rows of the tables below: the report's phases, steps.slowest */
    uint64_t *phase_count, *phase_ns; /* [phase * n + category] */
    uint64_t *step_count, *step_ns;   /* [step * n + category] */
};
/* The categories every report names, in this order (docs/report.md). */
#define GT_CATEGORIES 9
extern const char *const gt_category_names[GT_CATEGORIES];

/* Rows per table that --top left out. */
struct gt_more {
    size_t findings, gaps, idle_sites, kernels, launch_kernels, launch_sites, graphs, xfer_kind, xfer_size, h2d, syncs,
        streams, devices, api, errors, phases, graph_nodes, host_stacks;
};

#define GT_MAX_NOTES 4

struct gt_report {
    struct gt_summary summary;
    int partial;                    /* the process did not finish */
    char notes[GT_MAX_NOTES][320];  /* what the first line says */
    int nnotes;
    struct gt_finding *findings;
    size_t nfindings;
    struct gt_gap *gaps;            /* listed gaps, longest first */
    size_t ngaps;
    struct gt_idle_site *idle_sites;
    size_t nidle_sites;
    struct gt_kernel_row *kernels;
    size_t nkernels;
    struct gt_launch_row *launch_kernels, *launch_sites;
    size_t nlaunch_kernels, nlaunch_sites;
    struct gt_xfer_row *xfer_kind, *xfer_size;
    size_t nxfer_kind, nxfer_size;
    struct gt_graph_row *graphs;
    size_t ngraphs;
    struct gt_gnode_row *gnodes;    /* most GPU time first */
    size_t ngnodes;
    struct gt_h2d_row *h2d;
    size_t nh2d;
    struct gt_sync_row *syncs;
    size_t nsyncs;
    struct gt_stream_row *streams;
    size_t nstreams;
    struct gt_device_row *devices;
    size_t ndevices;
    struct gt_api_row *api;
    size_t napi;
    struct gt_error_row *errors;
    size_t nerrors;
    struct gt_phase_row *phases;    /* by first start */
    size_t nphases;
    struct gt_phase_span *phase_spans; /* by start */
    size_t nphase_spans;
    struct gt_steps steps;
    int windowed;                   /* read in a window: its first start, last end, intervals */
    uint64_t win_from, win_to;
    size_t win_intervals;
    int has_samples;                /* the trace has host samples (schema 7, sampling on) */
    uint64_t host_idle_ns;          /* the listed gaps' idle time, summed */
    uint64_t waited_idle_ns;        /* of which gaps whose launching thread waited while others ran */
    struct gt_host_stack_row *host_stacks; /* by idle time */
    size_t nhost_stacks;
    struct gt_busy busy;            /* opts busy_slices > 0 only: each GPU's busy share per slice */
    struct gt_categories cats;
    struct gt_flame_node *flame;    /* preorder; nodes under 1/GT_FLAME_MIN of the root left out */
    size_t nflame, flame_hidden;    /* nodes kept, nodes with time or samples left out */
    char *flame_text;               /* the nodes' names */
    struct gt_more more;
};

/* A kernel the GPU ran, as the report's pass reads it (gt_analyze_opts.on_kernel). */
struct gt_kernel_seen {
    uint32_t kernel;                /* the trace's n-th kernel name: equal names, equal numbers */
    const char *name;               /* valid during the call only */
    int64_t device, stream;         /* CUPTI's device and stream ids (without GPU times: the call's) */
    int64_t tid;                    /* the launching thread; -1: no recorded call */
    uint64_t launch, start, end;    /* the call's start (start when none), the kernel's GPU start and end */
};

struct gt_rec;
struct gt_op_rec;
/* A reader of the rows the report reads, as its pass reads them, so that
 * what else a format draws from them (the HTML timeline's lanes) costs no
 * pass of its own: each call the report reads (in a window, the calls
 * that start in it), with its entry point's name; and each GPU operation
 * not kept in its call's row: when the trace has GPU times, those the
 * report reads (after the calls), else every one that starts in the
 * window (before the calls; the report itself does not read them). */
struct gt_analyze_tap {
    void (*call)(const struct gt_rec *c, const char *api, void *arg);
    void (*op)(const struct gt_op_rec *o, void *arg);
    void *arg;
};

struct gt_analyze_opts {
    /* Each kernel of the report (in its window), in no order: how the
     * ranks' collectives are gathered without reading the trace again
     * (gt_rank_sum.c); NULL: none. */
    void (*on_kernel)(void *arg, const struct gt_kernel_seen *k);
    void *on_kernel_arg;
    uint64_t min_gap_ns;
    size_t top;                     /* rows per table; 0: all */
    const char *step_glob;          /* --step: step ranges' names; NULL: the usual names */
    /* a window (docs/report.md, Windows): the calls that start in it
     * with their GPU work, the GPU work of no recorded call that starts
     * in it, and busy and idle time inside it; NULL: the whole trace.
     * Times are said from win_origin. */
    const struct gt_window *win;
    int64_t win_origin;
    size_t busy_slices;             /* > 0: fill the report's busy with this many slices */
    const struct gt_analyze_tap *tap; /* NULL: none */
    const char *categories;         /* --categories: a user's kernel category rules; NULL: $GPUTRACE_CATEGORIES */
};

/* Fills r from t. Returns 0, or -1 after printing an error. */
int gt_analyze(struct gt_trace *t, const struct gt_analyze_opts *o, struct gt_report *r);
void gt_report_free(struct gt_report *r);
/* Fills r's phases from t's NVTX ranges (none before schema 6): 0, or -1
 * after printing an error (gt_phases.c). */
int gt_phases(struct gt_trace *t, int gpu_times, const struct gt_analyze_opts *o, struct gt_report *r);
/* Fills r's cats from t (gt_categories.c), after its phases and steps: 0,
 * or -1 after printing an error. */
int gt_categories(struct gt_trace *t, int gpu_times, const struct gt_analyze_opts *o, struct gt_report *r);
void gt_categories_free(struct gt_categories *c);
struct gt_sites;
/* Fills r's gnodes (traces without graph_nodes have none): 0, or -1 after
 * printing an error (gt_gnodes.c). nocall: the site index of "(no recorded
 * call)", for work whose launch was not recorded. */
int gt_graph_nodes(struct gt_trace *t, struct gt_sites *sites, uint32_t nocall, struct gt_report *r);
/* Fills each listed gap's host share and r's host stacks from the trace's
 * samples (none before schema 7): 0, or -1 after printing an error
 * (gt_samples.c). Before --top cuts the gaps. */
int gt_host_samples(struct gt_trace *t, struct gt_report *r);
/* Host samples' names as the report gives them ("train.py:45 in __next__
 * (blocked in read)"), looked up once per kind of sample (its state
 * "running", "syscall" or "waiting", system call, Python and native stack
 * ids, 0: none), for the exports. */
struct gt_sample_names {
    struct gt_map of;               /* kind -> index into v + 1 */
    char **v;
    size_t n;
};
/* The name, held by c until gt_sample_names_free; NULL out of memory. */
const char *gt_sample_name(struct gt_sample_names *c, sqlite3 *db, const char *state, const char *syscall,
                           int64_t pystack, int64_t stack);
void gt_sample_names_free(struct gt_sample_names *c);
/* 1 when a host stack's text matches `pattern`: a glob (fnmatch) when it
 * holds * ? or [, else a substring. */
int gt_host_stack_match(const char *pattern, const char *text);
/* The share of the listed gaps' idle time whose host stacks match (all
 * rows: analyze with top 0), and that time in *idle_ns. */
double gt_host_stack_pct(const struct gt_report *r, const char *pattern, uint64_t *idle_ns);

#endif

/* gt_analyze.h: the analyses behind `report` and `audit`, computed from one
 * trace into plain structs (no printing here). */
#ifndef GT_ANALYZE_H
#define GT_ANALYZE_H

#include <stddef.h>
#include <stdint.h>

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

struct gt_launch_row {
    char kernel[256];       /* per-kernel rows; "" in per-site rows */
    struct gt_site site;    /* per-site rows; nframes 0 in per-kernel rows */
    uint64_t count;
    uint64_t api_total_ns, api_mean_ns, api_p50_ns, api_p99_ns;
    uint64_t queue_mean_ns; /* GPU start minus API return; 0 without GPU times */
    uint64_t gpu_total_ns, gpu_mean_ns;
    uint64_t launch_bound;  /* launches whose kernel ran shorter than the launch call took */
};

struct gt_h2d_row {
    struct gt_site site;
    uint64_t bytes, count, host_ns, gpu_ns;
    uint64_t pageable_bytes, pinned_bytes;
    uint64_t blocking, async;       /* counts: calls that blocked the host / async calls */
    uint64_t async_pageable;        /* async calls from pageable memory: silently synchronous */
    double bandwidth_gbps;          /* bytes / GPU time (host time without GPU times) */
    int small_storm;                /* many small copies (>= 100, mean < 64 KiB) */
};

enum gt_gap_cause { GT_GAP_SYNC, GT_GAP_COPY, GT_GAP_LAUNCH, GT_GAP_HOST, GT_GAP_CAUSES };
extern const char *const gt_gap_cause_names[GT_GAP_CAUSES]; /* "sync", "copy", "launch", "host" */

struct gt_gap {
    int device;
    uint64_t start_ns, dur_ns;
    int cause;                      /* enum gt_gap_cause */
    struct gt_site before, after;   /* last call before the gap, first after it */
};

/* Idle time summed over every gap, by the call site that ended the gap
 * (the first call after it: what the GPU was waiting for). */
struct gt_idle_site {
    struct gt_site site;
    uint64_t idle_ns, gaps;
};

struct gt_sync_row {
    struct gt_site site;
    char kind[32];                  /* device, context, stream, event, memcpy_dtoh, memcpy_pageable */
    uint64_t count, blocked_ns;
};

struct gt_summary {
    uint64_t first_ns;              /* when the first call started (trace clock) */
    uint64_t span_ns;               /* first call start to last call end */
    int gpu_times;                  /* 1: GPU-side times from CUPTI */
    uint64_t calls, launches, launch_bound;
    uint64_t launch_host_ns;        /* host time inside launch calls */
    double launch_host_pct, launch_bound_pct;
    uint64_t busy_ns, idle_ns;      /* GPU, all devices merged */
    double idle_pct;
    uint64_t sync_ns;               /* host time blocked in syncs, explicit and implicit */
    double sync_pct;
    uint64_t h2d_bytes, pageable_h2d_bytes;
    uint64_t idle_by_cause[GT_GAP_CAUSES];
};

#define GT_MAX_DEVICES 16

/* One device's own busy and idle time over the traced span. */
struct gt_device_idle {
    int device;
    uint64_t busy_ns, idle_ns;
    double idle_pct;
};

struct gt_report {
    struct gt_summary summary;
    struct gt_device_idle devices[GT_MAX_DEVICES];
    size_t ndevices;
    struct gt_launch_row *kernels, *launch_sites;
    size_t nkernels, nlaunch_sites;
    struct gt_h2d_row *h2d;
    size_t nh2d;
    struct gt_gap *gaps;            /* gaps >= min_gap_ns, longest first */
    size_t ngaps;
    struct gt_sync_row *syncs;
    size_t nsyncs;
    struct gt_idle_site *idle_sites; /* most idle time first */
    size_t nidle_sites;
    char advice[4][256];            /* concrete suggestions, "" when none */
};

struct gt_analyze_opts {
    uint64_t min_gap_ns;
    size_t top;                     /* rows per table; 0: all */
};

/* Fills r from t. Returns 0, or -1 after printing an error. */
int gt_analyze(struct gt_trace *t, const struct gt_analyze_opts *o, struct gt_report *r);
void gt_report_free(struct gt_report *r);

#endif

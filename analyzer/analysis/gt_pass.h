/* gt_pass.h: the state of one trace's analysis, shared by the files that
 * fill it (gt_analyze.c reads the trace; gt_tables.c keeps the per-site,
 * per-API and per-kind tables; gt_kstats.c the kernels; gt_findings.c
 * ranks what it all costs). Internal to analysis/. */
#ifndef GT_PASS_H
#define GT_PASS_H

#include <stdint.h>

#include "analysis/gt_analyze.h"
#include "analysis/gt_launch.h"
#include "analysis/gt_ops.h"
#include "analysis/gt_opsort.h"
#include "analysis/gt_site.h"
#include "analysis/gt_spans.h"
#include "analysis/gt_steps.h"
#include "analysis/gt_timeline.h"
#include "base/gt_extsort.h"
#include "base/gt_map.h"
#include "trace/gt_scan.h"

/* Per kernel name: its first launch, and what its operations add up to. */
struct gt_kernel_acc {
    const char *name;
    uint64_t first_start, first_api;   /* the first launch's call start and host time */
    long first_op;                     /* its operation's number in the sort (gt_opsort), -1: none */
    int has_first;
    uint64_t count, graph_count, total, min, max;
};

struct gt_xfer_acc {
    uint64_t count, bytes, total;
};

struct gt_api_acc {
    uint64_t count, total, max, errors;
};

struct gt_thread_acc {
    uint64_t launch_ns, sync_ns;
};

/* The memcpys rows of the copy call being read: one per GPU copy. */
struct gt_copy_rows {
    uint64_t *bytes, *gpu_ns;
    int *mem;
    size_t n, cap;
};

struct gt_pass {
    struct gt_report *r;
    struct gt_trace *t;
    struct gt_scan *scan;
    struct gt_sites *sites;
    const struct gt_analyze_opts *o;
    int gpu_times;
    struct gt_ops ops;                 /* the GPU records table's operations, then one call's */
    struct gt_opsort sorted;           /* every operation, by start, for the sweep */
    uint64_t ncallops;                 /* calls' operations sorted so far */
    struct gt_extsort kdur;            /* (kernel, duration) of every kernel, for the medians */
    /* operations read from the GPU records table, before the calls: the
     * first ntable operations, what is not in gt_op of them, and by link
     * the first of them (index + 1) with a chain to the next */
    size_t ntable;
    uint64_t *table_bytes;
    uint8_t *table_src, *table_dst;
    uint32_t *table_next;
    const char **table_kname;   /* with a tap: each table operation's own kernel name */
    struct gt_map link_first;
    /* kernels by name */
    struct gt_map kernel_of;           /* name pointer -> index + 1 */
    struct gt_kernel_acc *kernels;
    size_t nkernels, capkernels;
    const char *last_kernel_name;      /* the last name looked up, and its index */
    uint32_t last_kernel;
    struct gt_pairs pairs;
    struct gt_xfer_acc xfer[GT_XKINDS][GT_XBANDS + 1];  /* [kind][band], [kind][GT_XBANDS]: all */
    struct gt_map h2d_of, sync_of, graph_of;  /* row index + 1, by site (and kind) */
    size_t h2d_cap, sync_cap, graph_cap;
    struct gt_api_acc *apis;
    size_t napis;
    struct gt_map error_of;            /* api << 32 | result -> count */
    struct gt_map thread_of;           /* tid -> index + 1 */
    struct gt_thread_acc *threads;
    size_t nthreads, capthreads;
    int64_t last_tid;                  /* the last thread looked up, and its index + 1 */
    size_t last_thread;
    struct gt_copy_rows rows;
    uint32_t site_nocall, site_teardown;
    uint64_t t0, t1;
    struct gt_spanlog spans;           /* every call's host times, for the sweep */
    struct gt_stepper *steps;          /* NULL: the trace has no steps */
    int any;
    int failed;
};

/* gt_tables.c */
/* A call's counts: API summary, errors, launches, syncs, threads. */
void gt_tables_call(struct gt_pass *p, const struct gt_rec *c);
void gt_tables_xfer(struct gt_pass *p, int kind, uint64_t bytes, uint64_t ns);
struct gt_thread_acc *gt_thread_of(struct gt_pass *p, int64_t tid);
/* The tables as report rows (sorted), with the summary's sums. */
int gt_tables_rows(struct gt_pass *p);
void gt_tables_free(struct gt_pass *p);
/* The H2D row and the sync rows of a copy call, with its memcpys rows:
 * nrows rows of bytes[i], gpu_ns[i] (0: no GPU record) and mem[i]
 * (enum gt_rec_mem). */
void gt_tables_copy_call(struct gt_pass *p, const struct gt_rec *c, uint32_t site, const uint64_t *bytes,
                         const uint64_t *gpu_ns, const int *mem, size_t nrows);

/* The graph launch row of a site; NULL when out of memory. */
struct gt_graph_row *gt_graph_row_of(struct gt_pass *p, uint32_t site);

/* gt_kstats.c: kernel rows from each kernel's durations, sorted in
 * bounded memory (gt_extsort). */
void gt_kstats_init(struct gt_pass *p);
void gt_kstats_add(struct gt_pass *p, uint32_t kernel, uint64_t dur);
int gt_kstats_rows(struct gt_pass *p);
void gt_kstats_free(struct gt_pass *p);

/* gt_analyze_rows.c: the timeline's rows (devices, streams, idle sites,
 * gaps) and the launch tables into the report; 0, -1 out of memory. */
int gt_rows_timeline(struct gt_pass *p, const struct gt_tl_result *tl);
int gt_rows_launch(struct gt_pass *p);
/* 100 part / whole, 0 when whole is */
double gt_pct_of(uint64_t part, uint64_t whole);
/* The first line's note of the window read; --top's cut of every table. */
void gt_report_window_note(struct gt_report *r, const struct gt_analyze_opts *o);
void gt_report_truncate(struct gt_report *r, size_t top);

/* gt_findings.c: site_cause_idle as gt_tl_result has it */
int gt_findings(struct gt_pass *p, const uint64_t *site_cause_idle, size_t nsites);
void gt_notes(struct gt_pass *p);

#endif

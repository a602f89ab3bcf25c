/* gt_ranks.h: many ranks of one job, one answer (docs/ranks.md defines
 * every figure). Each rank's trace is reduced to a compact summary (what
 * the cross-rank analysis needs: its figures, its collectives, its longest
 * idle gaps), written by `gputrace summarize` where the trace is, or made
 * in memory by `report` from a trace; the summaries are then matched
 * collective by collective to find who waited for whom. No printing here
 * but error lines. */
#ifndef GT_RANKS_H
#define GT_RANKS_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/gt_analyze.h"

#define GT_RANK_SUMMARY_FORMAT 1    /* "format" of a summary file */
#define GT_RANK_GAPS 5              /* longest idle gaps kept per rank */
#define GT_RANK_MAX_COLL 12000      /* collectives kept per rank (the earliest): the summary stays under 1 MiB */
#define GT_RANK_MAX_PATTERNS 32

/* Kernel name patterns of collectives (fnmatch, case-sensitive): NCCL's,
 * RCCL's and oneCCL's device kernels; --collectives replaces them. */
extern const char *const gt_rank_default_patterns[];

struct gt_rank_patterns {
    const char *p[GT_RANK_MAX_PATTERNS];
    int n;
    const char *step_glob;          /* names of the step ranges (--step); NULL: report's usual ones */
};

/* Where a time is in the program: the top-level NVTX range (on the
 * launching thread) that held it, and which of the ranges of that name it
 * was (0-based); range "" when none. */
struct gt_rank_where {
    char range[128];
    int64_t index;                  /* -1: no range */
};

struct gt_rank_coll {
    uint32_t name;                  /* index into the rank's names */
    uint32_t stream;                /* the rank's n-th stream to run a collective, by first one */
    uint32_t ordinal;               /* its place on that stream */
    uint64_t launch_ns, start_ns, end_ns;   /* trace clock */
    struct gt_rank_where where;
    int64_t step;                   /* the NVTX step that held its launch (docs/report.md, Steps); -1: none */
};

struct gt_rank_gap {
    uint64_t start_ns, dur_ns;      /* trace clock */
    int cause;                      /* enum gt_cause */
    char after[840], before[840];   /* site texts; "" when none */
    char after_api[64];
    struct gt_rank_where where;
};

/* One rank's summary. */
struct gt_rank_sum {
    char path[1024];                /* the trace it came from */
    char rank[64];                  /* meta.rank, else "pid N" */
    int has_rank;                   /* 1: from meta.rank */
    char host[256];
    long long pid;
    int complete;                   /* meta.complete: 0, the process died (crashed) */
    int gpu_times;
    int64_t start_ns, start_unix_ns;    /* meta: the trace clock at start, and wall time then */
    uint64_t first_ns;              /* the span's start (trace clock) */
    struct gt_summary s;            /* report's summary figures */
    uint64_t coll_ns;               /* GPU time in collectives */
    size_t ncoll_all;               /* collectives in the trace (ncoll: those kept) */
    struct gt_rank_gap gaps[GT_RANK_GAPS];
    size_t ngaps;
    char **names;                   /* distinct collective kernel names */
    size_t nnames;
    struct gt_rank_coll *coll;      /* by stream, then ordinal */
    size_t ncoll;
};

/* From a trace: report's analysis plus its collectives. 0, or -1 after an
 * error line. */
int gt_rank_sum_from_trace(struct gt_trace *t, const struct gt_rank_patterns *pat, struct gt_rank_sum *out);

/* The collectives, gathered while report's pass reads the kernels (so the
 * trace is read once): a collector in gt_analyze_opts.on_kernel_arg with
 * gt_rank_on_kernel as on_kernel. */
struct gt_rank_collector;
struct gt_rank_collector *gt_rank_collector_new(const struct gt_rank_patterns *pat);
void gt_rank_on_kernel(void *collector, const struct gt_kernel_seen *k);
void gt_rank_collector_free(struct gt_rank_collector *c);
/* The summary from report's analysis of t, already made with collector c
 * (its listed gaps, its collectives). */
int gt_rank_sum_from_report(struct gt_trace *t, const struct gt_rank_patterns *pat, const struct gt_report *r,
                            struct gt_rank_collector *c, struct gt_rank_sum *out);
/* Does name match p (the default patterns when p is NULL or empty)? */
int gt_rank_name_is_collective(const struct gt_rank_patterns *p, const char *name);
/* Parses "a*,b*" into p (pointing into s, which it modifies): 0, or -1. */
int gt_rank_patterns_parse(char *s, struct gt_rank_patterns *p);
/* From a summary file (gputrace summarize): 0, or -1 after an error line. */
int gt_rank_sum_load(const char *path, struct gt_rank_sum *out);
void gt_rank_sum_free(struct gt_rank_sum *s);
int gt_rank_is_summary_path(const char *path);

/* ---- across ranks ---- */

/* Per-rank figures, in this order in rows and outlier flags. */
enum gt_rank_fig {
    GT_RF_SPAN, GT_RF_BUSY, GT_RF_IDLE, GT_RF_LAUNCH_HOST, GT_RF_H2D, GT_RF_PAGEABLE_PCT, GT_RF_SYNC,
    GT_RF_COLL, GT_RF_COLL_WAIT, GT_RF_COLL_DATA, GT_RF_COMPUTE, GT_RF_CAUSED_WAIT, GT_RFIGS
};
/* "span_ns", "gpu_busy_ns"... (the JSON keys) */
extern const char *const gt_rank_fig_names[GT_RFIGS];

struct gt_rank_row {
    const struct gt_rank_sum *sum;
    int64_t offset_ns;              /* added to its trace clock to get the job's clock */
    double fig[GT_RFIGS];
    int outlier[GT_RFIGS];          /* +1 above the median by the rule, -1 below, 0 */
    uint64_t last_count;            /* collectives it arrived last at (beyond the noise floor) */
    uint64_t worst_late_ns;         /* its largest lateness */
    size_t worst_coll;              /* that collective (index into gt_ranks.colls); SIZE_MAX: none */
    int straggler;
};

/* One collective matched across ranks (docs/ranks.md, Matching): by
 * (stream, step, place in the step) when every rank has steps, else by
 * (stream, ordinal). ordinal is then the match's place among the job's
 * collectives on that stream, by earliest arrival. */
struct gt_rank_match {
    uint32_t stream, ordinal;
    int64_t step;                   /* matched by step: the step; -1: outside steps, or matched by order */
    uint32_t in_step;               /* matched by step: its place among the stream's collectives of that step */
    char name[256];
    size_t nranks;                  /* ranks that ran it */
    uint64_t earliest_ns, latest_ns, median_ns; /* arrivals (GPU starts), the job's clock */
    size_t last;                    /* the rank that arrived last (index into rows) */
    uint64_t late_ns;               /* latest - median arrival: by how much it was last */
    uint64_t wait_ns;               /* the others' wait for it: sum of latest - arrival */
    struct gt_rank_where where;     /* the last rank's range at that collective */
};

struct gt_ranks {
    struct gt_rank_row *rows;
    size_t nrows;
    struct gt_rank_match *colls;
    size_t ncolls;
    int one_host;                   /* 1: every trace from one host, times on its CLOCK_MONOTONIC */
    int by_step;                    /* 1: collectives matched by NVTX step, 0: by order */
    double median_span_ns;
    double floor_ns;                /* noise floor: GT_RANK_FLOOR_PCT of the median span */
    size_t worst;                   /* the worst straggler (index into rows); nrows when none */
    size_t nstragglers, ncrashed;
    double straggler_wait_pct;      /* the worst rank's caused wait per other rank, % of the median span */
    double skew_pct;                /* (max - median) / median of compute time, % */
    /* The heat map: per row, per bucket of collective ordinals (heat_per
     * ordinals a bucket, at most GT_RANK_HEAT_COLS buckets), the most the
     * rank arrived after the median rank (0 when not after). */
    double *heat;                   /* nrows x heat_cols */
    size_t heat_cols, heat_per;
};
#define GT_RANK_HEAT_COLS 100

/* The rule (docs/ranks.md, Outliers): |x - median| > max(3 MAD, 10% of
 * |median|, floor), the floor 1% of the median span for times, 1 MiB for
 * bytes, 5 points for percentages. A straggler: caused wait per other
 * rank an outlier above the median and at least GT_RANK_STRAGGLER_PCT of
 * the median span. */
#define GT_RANK_FLOOR_PCT 1.0
#define GT_RANK_STRAGGLER_PCT 10.0

int gt_ranks_build(struct gt_ranks *g, const struct gt_rank_sum *v, size_t n);
void gt_ranks_free(struct gt_ranks *g);

#endif

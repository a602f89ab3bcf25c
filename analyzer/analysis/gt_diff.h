/* gt_diff.h: two sets of traces (BASE and NEW) compared figure by figure,
 * like with like: a kernel by its GPU time, its launches and its mean per
 * launch; a site by its calls and its time (or bytes) per call; the GPU's
 * idle time as a share of the span; totals and counts per run, or per step
 * when every trace has steps; the span as a figure of its own. Sites are
 * matched by their text without addresses (docs/diff.md defines every
 * figure and the noise rule). No printing here but error lines. */
#ifndef GT_DIFF_H
#define GT_DIFF_H

#include <stddef.h>
#include <stdint.h>

#define GT_DIFF_MAX_TRACES 64

enum gt_diff_cat { GT_DC_SUMMARY, GT_DC_KERNEL, GT_DC_LAUNCH, GT_DC_H2D, GT_DC_SYNC, GT_DC_CATEGORY, GT_DCATS };
/* "summary", "kernel", "launch_site", "h2d_site", "sync_site", "category" (a kind of work) */
extern const char *const gt_diff_cat_names[GT_DCATS];

/* What a row's figure is, and so what it is divided by. */
enum gt_diff_measure {
    GT_DM_TOTAL,    /* ns or bytes per run (per step when every trace has steps) */
    GT_DM_COUNT,    /* calls or launches per run (per step) */
    GT_DM_PER_CALL, /* ns or bytes per call: the side's sum over its calls */
    GT_DM_SHARE,    /* ns over the time from the GPU's first work to its last (a fraction) */
    GT_DM_ONCE,     /* ns a run, whatever the steps (span, start-up, teardown) */
    GT_DMEASURES
};
/* "total", "count", "per_call", "share", "once" */
extern const char *const gt_diff_measure_names[GT_DMEASURES];

enum gt_diff_status { GT_DS_SAME, GT_DS_CHANGED, GT_DS_NEW, GT_DS_VANISHED };
extern const char *const gt_diff_status_names[4];

struct gt_diff_row {
    int cat;                        /* enum gt_diff_cat */
    int measure;                    /* enum gt_diff_measure */
    char name[840];                 /* figure, kernel name, or site text without +0x offsets */
    int bytes;                      /* 1: the value is bytes; 0: ns */
    int worse_up;                   /* 1: an increase is a regression (audit --baseline) */
    double val[2][GT_DIFF_MAX_TRACES]; /* per side (0 base, 1 new), per trace: ns or bytes summed */
    double cnt[2][GT_DIFF_MAX_TRACES]; /* calls or launches behind val */
    double rate[2][GT_DIFF_MAX_TRACES]; /* the compared figure of each trace (see measure) */
    uint64_t count[2];              /* calls/launches at it, summed over the side's traces */
    double raw[2];                  /* the value itself (ns or bytes), mean per trace */
    double mean[2], spread[2];      /* the side's figure (PER_CALL: pooled over its calls) and its
                                     * largest minus smallest per-trace figure */
    double change_pct;              /* (new - base) / base * 100; 0 when base is 0 */
    int status;                     /* enum gt_diff_status */
};

struct gt_diff {
    int ntraces[2];
    int per_step;                   /* every trace has steps: totals and counts per step, else per run */
    double span_ns[2];              /* mean span per side */
    double step_ns[2];              /* mean step time per side (per_step) */
    uint64_t steps[2];              /* steps, summed over the side's traces */
    double span_ns_of[2][GT_DIFF_MAX_TRACES];
    double window_ns_of[2][GT_DIFF_MAX_TRACES]; /* the span less start-up and teardown idle */
    uint64_t steps_of[2][GT_DIFF_MAX_TRACES];
    uint64_t busy_ns[2], kernel_ns[2], launches[2], calls[2], failed[2]; /* summed over the side's traces */
    int incomplete[2];              /* traces of the side whose process did not finish */
    struct gt_diff_row *rows;
    size_t nrows;
};

/* Relative and absolute floors of the noise rule (docs/diff.md). */
#define GT_DIFF_REL 0.10
#define GT_DIFF_FLOOR_SPAN 0.01        /* of the base's mean span (per step: of its mean step) */
#define GT_DIFF_FLOOR_BYTES_PER_S 65536.0
#define GT_DIFF_FLOOR_ONCE_NS 10e6    /* once-a-run figures */
#define GT_DIFF_SPREAD_FACTOR 3.0

/* Reads and compares the traces; 0, or -1 after printing an error. */
int gt_diff_build(struct gt_diff *d, char **base, int nbase, char **newp, int nnew);
void gt_diff_free(struct gt_diff *d);
/* "f (m+0x1a) < g" -> "f (m) < g" */
void gt_diff_strip(const char *in, char *out, size_t len);

#endif

/* gt_diff.h: two sets of traces (BASE and NEW) compared figure by figure,
 * each figure normalised per second of span, sites matched by their text
 * without addresses (docs/diff.md defines every figure and the noise
 * rule). No printing here but error lines. */
#ifndef GT_DIFF_H
#define GT_DIFF_H

#include <stddef.h>
#include <stdint.h>

#define GT_DIFF_MAX_TRACES 64

enum gt_diff_cat { GT_DC_SUMMARY, GT_DC_KERNEL, GT_DC_LAUNCH, GT_DC_H2D, GT_DC_SYNC, GT_DCATS };
/* "summary", "kernel", "launch_site", "h2d_site", "sync_site" */
extern const char *const gt_diff_cat_names[GT_DCATS];

enum gt_diff_status { GT_DS_SAME, GT_DS_CHANGED, GT_DS_NEW, GT_DS_VANISHED };
extern const char *const gt_diff_status_names[4];

struct gt_diff_row {
    int cat;                        /* enum gt_diff_cat */
    char name[840];                 /* figure, kernel name, or site text without +0x offsets */
    int bytes;                      /* 1: bytes per second; 0: ns per second */
    int worse_up;                   /* 1: an increase is a regression (audit --baseline) */
    int once;                       /* 1: a cost paid once a run (start-up, teardown): compared
                                     * per trace, not per second of span */
    double rate[2][GT_DIFF_MAX_TRACES]; /* per side (0 base, 1 new), per trace: value per step, or per s
                                         * of span (the raw value until gt_diff_build divides it) */
    uint64_t count[2];              /* calls/launches at it, summed over the side's traces */
    double raw[2];                  /* the value itself (ns or bytes), mean over the side's traces */
    double mean[2], spread[2];      /* per-second mean and max - min over the side's traces */
    double change_pct;              /* (new - base) / base * 100; 0 when base is 0 */
    int status;                     /* enum gt_diff_status */
};

struct gt_diff {
    int ntraces[2];
    int per_step;                   /* every trace has steps: figures per step, else per s of span */
    double span_ns[2];              /* mean span per side */
    double step_ns[2];              /* mean step time per side (per_step) */
    uint64_t steps[2];              /* steps, summed over the side's traces */
    double span_s_of[2][GT_DIFF_MAX_TRACES];
    uint64_t steps_of[2][GT_DIFF_MAX_TRACES];
    uint64_t busy_ns[2], calls[2], failed[2];
    int incomplete[2];              /* traces of the side whose process did not finish */
    struct gt_diff_row *rows;
    size_t nrows;
};

/* Relative and absolute floors of the noise rule (docs/diff.md). */
#define GT_DIFF_REL 0.10
#define GT_DIFF_FLOOR_NS_PER_S 10e6   /* 1% of the span */
#define GT_DIFF_FLOOR_BYTES_PER_S 65536.0
#define GT_DIFF_FLOOR_ONCE_NS 10e6    /* once-a-run figures */
#define GT_DIFF_SPREAD_FACTOR 3.0

/* Reads and compares the traces; 0, or -1 after printing an error. */
int gt_diff_build(struct gt_diff *d, char **base, int nbase, char **newp, int nnew);
void gt_diff_free(struct gt_diff *d);
/* "f (m+0x1a) < g" -> "f (m) < g" */
void gt_diff_strip(const char *in, char *out, size_t len);

#endif

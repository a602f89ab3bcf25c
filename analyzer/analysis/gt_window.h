/* gt_window.h: the window `report`, `audit` and `export` read with
 * --from, --to and --range (docs/report.md, Windows): intervals of the
 * trace's clock, resolved on each trace from times counted from a start,
 * step numbers (step:N, by the rule of Steps) and NVTX range names. */
#ifndef GT_WINDOW_H
#define GT_WINDOW_H

#include <stdint.h>

#include "trace/gt_trace.h"

struct gt_window_spec {
    const char *from, *to;   /* a duration from the start (1.5s, 200ms) or step:N; NULL: none */
    const char *range;       /* a glob of range names; NULL: none */
    const char *step_glob;   /* --step: which ranges are steps; NULL: the usual names */
};

/* A resolved window: n sorted, disjoint, non-empty intervals [a[i],
 * b[i]); a[0] 0: no start; b[n-1] UINT64_MAX: no end. */
struct gt_window {
    size_t n;
    uint64_t *a, *b;
    uint64_t *cum;           /* the intervals' lengths before interval i */
};

/* The length of [x, y) inside w. */
uint64_t gt_window_len(const struct gt_window *w, uint64_t x, uint64_t y);
/* 1 when x lies inside w. */
int gt_window_has(const struct gt_window *w, uint64_t x);
/* 1 when [x, y) lies inside one interval of w (x inside it). */
int gt_window_inside(const struct gt_window *w, uint64_t x, uint64_t y);
/* The first time at or after x inside w; UINT64_MAX: none. */
uint64_t gt_window_next(const struct gt_window *w, uint64_t x);
void gt_window_free(struct gt_window *w);
/* n intervals (pairs [a, b) in iv, which it sorts) merged into out. 0;
 * -1 when out of memory. */
int gt_window_set(struct gt_window *out, uint64_t *iv, size_t n);

/* 1 when the spec asks for a window at all. */
int gt_window_on(const struct gt_window_spec *w);
/* Checks the values' form: 0, or -1 after a usage error for `cmd`. */
int gt_window_check(const struct gt_window_spec *w, const char *cmd);
/* The window on t, times counted from origin_ns: [from, to), or with
 * --range the union of the ranges it names inside [from, to]. 0; -1 after
 * an error that names the trace (no such step, no range of that name, an
 * empty window). */
int gt_window_resolve(struct gt_trace *t, const struct gt_window_spec *w, int64_t origin_ns, struct gt_window *out);

/* The earliest meta.start_ns of the traces (0: none): where a window's
 * times count from, and every +TIME a report says (without a window,
 * read quietly: an unreadable trace is said once, when it is read). */
int64_t gt_window_origin(char *const *paths, int n, const struct gt_window_spec *w);

#endif

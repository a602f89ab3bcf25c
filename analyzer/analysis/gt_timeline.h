/* gt_timeline.h: one sweep over the GPU operations in start order, with
 * the calls' host times in start order beside it: busy time per device,
 * per stream and for the GPU as a whole; every gap, its cause, the calls
 * before and after it; compute/copy overlap; launch-bound kernels.
 * docs/report.md defines each.
 *
 * Memory does not grow with the calls or the gaps: a gap's cause needs the
 * time calls of each category spent inside it, which is F(end) - F(start)
 * for F(x), the host time of each category before x. F is evaluated as
 * the sweep passes each gap's ends, from the calls that have started by
 * then; only calls still running are kept (a heap by their end). */
#ifndef GT_TIMELINE_H
#define GT_TIMELINE_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/gt_analyze.h"
#include "analysis/gt_ops.h"
#include "analysis/gt_opsort.h"
#include "analysis/gt_window.h"

/* A gap the report lists (at least min_gap_ns, on a device). */
struct gt_tl_gap {
    int64_t device;
    uint64_t start, dur;
    int cause;
    uint32_t before_site, after_site;  /* UINT32_MAX: none */
    uint16_t before_api, after_api;
    /* a gap with a call cause: the site whose calls of that category spent
     * the most of it, its longest such call's entry point; UINT32_MAX */
    uint32_t spent_site;
    uint16_t spent_api;
};

struct gt_tl_device {
    int64_t device;
    uint64_t busy_ns, idle_by_cause[GT_CAUSES];
    uint64_t compute_ns, copy_ns, overlap_ns;
};

struct gt_tl_result {
    /* device time (docs/report.md): summed over the devices' timelines, so
     * busy plus idle is the span times ndevtime (1 when no device ran work) */
    uint64_t busy_ns, idle_by_cause[GT_CAUSES];
    size_t ndevtime;
    struct gt_tl_device *devices;                 /* by device id */
    size_t ndevices;
    uint64_t *slot_busy, *slot_ops;               /* by gt_ops slot */
    /* device idle time by each gap's site (docs/report.md:
     * the calls that spent it, or the call that ended it; the tear-down
     * gap under `teardown_site`), indexed by site */
    uint64_t *site_idle, *site_gaps;
    uint64_t *site_cause_idle;                    /* [site * GT_CAUSES + cause] */
    size_t nsites;
    struct gt_tl_gap *gaps;
    size_t ngaps;
};

typedef void (*gt_tl_bound_fn)(const struct gt_op *op, void *arg);

struct gt_sweep;

/* The operations from src (reading begun: gt_opsort_begin), their slots
 * and long durations in ops; span [t0, t1]; site indices below nsites;
 * teardown_site: the site the tear-down gap counts under. */
struct gt_sweep *gt_sweep_new(const struct gt_ops *ops, struct gt_opsort *src, uint64_t t0, uint64_t t1,
                              uint64_t min_gap_ns, size_t nsites, uint32_t teardown_site, gt_tl_bound_fn bound,
                              void *arg);
/* A window's report (docs/report.md, Windows): busy and idle time count
 * inside w only (a gap's cause is still its whole length's), and the gap
 * before the first operation (after the last) gets its cause as the gaps
 * between operations do when the window has a start (an end), rather
 * than start-up (tear-down). */
void gt_sweep_window(struct gt_sweep *s, const struct gt_window *w);
/* fn(start, length, cause, the gap's site, arg) for each gap of the
 * whole GPU's timeline, in time order (trace times). */
typedef void (*gt_tl_gap_fn)(uint64_t start, uint64_t len, int cause, uint32_t site, void *arg);
void gt_sweep_on_gap(struct gt_sweep *s, gt_tl_gap_fn fn, void *arg);
/* fn(device, start, end, arg) for each busy run of each device (its
 * operations merged where they touch or overlap), in trace times, each
 * once, when the run ends (the HTML overview's busy share per slice). */
typedef void (*gt_tl_run_fn)(int64_t device, uint64_t start, uint64_t end, void *arg);
void gt_sweep_on_run(struct gt_sweep *s, gt_tl_run_fn fn, void *arg);
/* Each call, in start order (gt_spanlog_replay): site is its site's
 * index (UINT32_MAX: none), api its entry point. */
void gt_sweep_call(int cat, uint64_t start, uint64_t end, uint32_t site, uint32_t api, void *sweep);
/* After the last call: the operations left, the tear-down gaps. 0, or -1
 * when out of memory (at any point of the sweep). */
int gt_sweep_finish(struct gt_sweep *s, struct gt_tl_result *out);
void gt_sweep_free(struct gt_sweep *s);
void gt_tl_result_free(struct gt_tl_result *r);

/* The cause a call category counts for (enum gt_rec_cat -> enum gt_cause). */
int gt_cause_of_category(int cat);

#endif

/* gt_steps.h: the report's steps section (docs/report.md, Steps), filled
 * beside the report's passes: the step ranges are read first (their
 * lengths say which steps are slow before anything else is read), then
 * each call and each gap of the whole GPU's timeline is added to the step
 * it falls in. Internal to analysis/. */
#ifndef GT_STEPS_H
#define GT_STEPS_H

#include <stdint.h>

#include "analysis/gt_analyze.h"
#include "analysis/gt_site.h"
#include "analysis/gt_window.h"
#include "trace/gt_scan.h"

struct gt_stepper;

/* The step ranges of t (glob: --step, or NULL); with win ([from, to) of
 * a windowed report), only the steps inside it, numbered as without.
 * *out is NULL when the trace has none. 0, or -1 after printing an
 * error. */
int gt_steps_open(struct gt_trace *t, const char *glob, struct gt_sites *sites, const struct gt_window *win,
                  struct gt_stepper **out);
/* A call, as the report's second pass reads it. */
void gt_steps_call(struct gt_stepper *s, const struct gt_rec *c);
/* A gap of the whole GPU's timeline (gt_sweep_on_gap). */
void gt_steps_gap(uint64_t start, uint64_t len, int cause, uint32_t site, void *stepper);
/* The section, into r->steps; the span [t0, t1], any_ops: the GPU ran
 * something. 0, or -1 when out of memory. */
int gt_steps_finish(struct gt_stepper *s, uint64_t t0, uint64_t t1, int any_ops, struct gt_report *r);
void gt_steps_free(struct gt_stepper *s);

/* Step `number`'s [*start, *end) (the first by start of that number): 1;
 * 0 when there is none, with the lowest and highest numbers; -1 when s
 * is NULL (no steps). */
int gt_steps_bounds(const struct gt_stepper *s, int64_t number, uint64_t *start, uint64_t *end, int64_t *lo,
                    int64_t *hi);

/* The number of the step that holds time `at` on thread tid (its steps
 * do not overlap), else on any thread (the first by start: collectives
 * may be launched by a thread other than the one that marks steps, as
 * PyTorch's autograd threads do): 1 with *number; 0 when none holds it. */
int gt_steps_at(const struct gt_stepper *s, int64_t tid, uint64_t at, int64_t *number);

/* 1: `name` is a step's by the rule of docs/report.md (step, train_step,
 * training_step, ProfilerStep, each maybe numbered). */
int gt_step_name(const char *name);

#endif

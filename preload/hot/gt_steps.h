/* gt_steps.h: training steps seen through NVTX on the program's threads,
 * for automatic windows (GPUTRACE_TRIGGER=step-time>Kx): a step that takes
 * over K times the median of the steps before it asks for a window, at
 * most once per cooldown. Watched in standby and while a window is open,
 * so the median is always the recent one. */
#ifndef GT_STEPS_H
#define GT_STEPS_H

#include <stdatomic.h>
#include <stdint.h>

/* Nonzero while a rule is set: the NVTX callbacks' one branch. */
extern _Atomic int gt_steps_on;

/* The rule, the step name rule (gt_is_step_name's glob, "" built in), and
 * what to call when a window is due: handed down by the session, so this
 * layer never calls up. `fire` runs on the program's thread, once per
 * cooldown at most, with why the window opens; it must not block. */
void gt_steps_configure(double factor, uint64_t cooldown_ns, const char *glob, void (*fire)(const char *why));
void gt_steps_off(void);

/* From the NVTX callbacks: a range pushed or started (its ASCII name, or
 * NULL when it has none: wide and registered names are not matched),
 * popped or ended. Push/pop nest per thread. */
void gt_steps_push(const char *name);
void gt_steps_pop(void);
void gt_steps_start(uint64_t id, const char *name);
void gt_steps_end(uint64_t id);

/* A window by steps (`gputrace trigger --steps N`): `bound(0, t)` at the
 * start of the next step, `bound(1, t)` at the end of the Nth step from
 * there, on the program's thread (it must not block). Handed down by the
 * session. gt_steps_disarm ends the wait early; it returns the steps
 * recorded whole. */
void gt_steps_arm(uint64_t nsteps, void (*bound)(int end, uint64_t t_ns));
uint64_t gt_steps_disarm(void);

/* Steps seen (tests and meta). */
uint64_t gt_steps_seen(void);

#endif

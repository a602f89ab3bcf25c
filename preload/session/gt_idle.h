/* gt_idle.h: the automatic window on an idle GPU (GPUTRACE_TRIGGER=idle>P%)
 * in standby: a thread of the tracer's own asks NVML once a second how busy
 * the process's GPUs were, and asks for a window (through `fire`, the
 * control channel's) when one that has been seen busy sat idle more than
 * P% of the last second. */
#ifndef GT_IDLE_H
#define GT_IDLE_H

#include <stddef.h>
#include <stdint.h>

/* Starts the watcher; pct from 1 to 99. `fire` (gt_control_fire) keeps
 * GPUTRACE_TRIGGER_COOLDOWN for every rule. Returns -1 with the reason in
 * err. */
int gt_idle_start(int pct, void (*fire)(const char *why), char *err, size_t err_len);
/* At exit: the watcher calls the driver and NVML no more (their own
 * destructors run next). */
void gt_idle_stop(void);
/* In a fork child: the parent's watcher did not come across; the child's
 * session starts its own. */
void gt_idle_after_fork_child(void);

#endif

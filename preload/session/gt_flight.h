/* gt_flight.h: the flight recorder (GPUTRACE_FLIGHT, standby only). Between
 * windows the hooks record into the rings as in a window, but no writer
 * drains them: a full ring writes over its oldest events, so they hold the
 * last part of the run. A window (any trigger) starts with what they hold,
 * then records on. A thread of its own (`gt-flight`) watches for a hang
 * (GPUTRACE_TRIGGER=hang>D) and writes the rings' history when the process
 * gets a fatal signal. */
#ifndef GT_FLIGHT_H
#define GT_FLIGHT_H

#include <stddef.h>
#include <stdint.h>

#include "base/gt_config.h"

/* At the session's start, in standby with GPUTRACE_FLIGHT (or a record
 * run with GPUTRACE_MAX_SIZE=...:last, `keep_last`): sizes the rings,
 * turns overwriting on, starts the thread, installs the fatal-signal
 * handlers. The caller then sets GT_STATE_FLIGHT. 0, or -1 with why. */
int gt_flight_start(const struct gt_config *cfg, int keep_last, char *err, size_t err_len);
/* Whether the flight recorder runs in this process. */
int gt_flight_on(void);
/* When what opens the next window fired (a rule, a request, a signal):
 * the first note since the last window stands. */
void gt_flight_note_trigger(uint64_t t_ns);
/* Opening a window, state still FLIGHT: the instant from which the rings
 * hold every call (the window's start), and the meta keys that say what
 * the window holds; `now` the opening's time. */
uint64_t gt_flight_window_start(uint64_t now);
void gt_flight_window_meta(uint64_t since, uint64_t now);
/* Right before the writer starts draining: rings stop writing over. */
void gt_flight_handoff(void);
/* Closing a window: the calls threads are inside now go in with result
 * -1 and `end` as their end (how many); then, once the writer has
 * stopped, recording into memory resumes (the caller sets FLIGHT). */
int gt_flight_push_inflight(uint64_t end);
void gt_flight_resume(void);
/* In a fork child: the thread and the handlers are the parent's; the
 * child's session starts its own. */
void gt_flight_after_fork_child(void);

#endif

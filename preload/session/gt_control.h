/* gt_control.h: the control channel of a standby process (GPUTRACE_MODE=
 * standby): a Unix socket in a directory private to the user, served by a
 * thread of the tracer's own that sleeps in accept() until `gputrace
 * trigger` asks for a recording window. Nothing reaches the program's
 * threads: no signal, no polling. */
#ifndef GT_CONTROL_H
#define GT_CONTROL_H

#include <stddef.h>
#include <stdint.h>

/* Creates the socket (DIR/PID.sock, DIR as docs/standby.md says) and its
 * thread. Returns 0, or -1 with the reason in err (a directory another
 * user could enter, a path too long, no thread). */
int gt_control_start(char *err, size_t err_len);
/* Removes this process's socket (exit, exec); the thread ends with the
 * process or the image. */
void gt_control_stop(void);
/* After a failed exec: the old channel's thread is let go (its socket
 * shut down) and a new channel opened. As gt_control_start. */
int gt_control_restart(char *err, size_t err_len);
/* In a fork child: the socket and the thread are the parent's. */
void gt_control_after_fork_child(void);
/* From a program thread (the step watcher, hot/gt_steps.h): asks the
 * control thread for an automatic window, `why` its reason (copied). One
 * eventfd write; never blocks. */
void gt_control_fire(const char *why);
/* From a program thread: a window by steps has recorded its steps. */
void gt_control_steps_done(void);
/* `gputrace record`'s window (GPUTRACE_RECORD_WINDOW), for the control
 * thread: window `open_n`, opened already, is closed `dur_ns` from now;
 * or (open_n 0) a window is opened at `at_wall_ns` (CLOCK_REALTIME) and
 * closed `dur_ns` later. dur_ns 0: left open to the end. */
void gt_control_plan_window(uint64_t at_wall_ns, uint64_t dur_ns, int open_n);

#endif

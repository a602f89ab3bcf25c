/* gt_session.h: the session's life: its start (hot/gt_call.h's starter),
 * its end at exit, _exit, exec and fork. Runs on whichever program thread
 * reaches it, under the session lock, or in a fork handler. */
#ifndef GT_SESSION_H
#define GT_SESSION_H

/* Before _exit: finishes this process's trace through the writer thread,
 * waiting a bounded time. Does nothing in a vfork child (it shares the
 * parent's memory, and the trace is the parent's) or without a session.
 * Returns 0 when it did nothing, 1 when the trace was finished, 2 when the
 * writer did not answer in time. */
int gt_finish_at_exit(void);
/* Before exec: the same. After an exec that failed and returned: the trace
 * is finished, so the rest of the process goes untraced, said once. */
int gt_finish_before_exec(void);
void gt_exec_returned(int finished);

/* In a fork child (the fork handler): forgets the parent's trace; a child
 * that calls CUDA starts its own. */
void gt_session_after_fork_child(void);
/* Names the shim as NVTX's tool when the environment names none
 * (gt_nvtx_env.c); run by the constructor. */
void gt_nvtx_env_claim(void);

/* Standby (GPUTRACE_MODE=standby), from the control thread: opens the next
 * window's trace and records into it; `why` goes to meta.window_trigger.
 * Returns the window's number (1, 2, ...) with its file in `path`, or -1
 * with the reason in err. */
int gt_session_window_open(const char *why, char *path, size_t path_len, char *err, size_t err_len);
/* A window by steps (`gputrace trigger --steps N`): open now, recording
 * from the start of the next step to the end of the Nth; the control
 * channel is told when they are over (gt_control_steps_done). Returns as
 * gt_session_window_open. */
int gt_session_window_open_steps(uint64_t nsteps, char *path, size_t path_len, char *err, size_t err_len);
/* Before closing a window by steps: stops counting; the steps recorded
 * whole. */
uint64_t gt_session_window_steps_end(void);
/* How long an automatic window stays open (GPUTRACE_TRIGGER_DURATION). */
uint64_t gt_session_trigger_duration_ns(void);
/* At most one automatic window per this long, whichever rule asks (GPUTRACE_TRIGGER_COOLDOWN). */
uint64_t gt_session_trigger_cooldown_ns(void);
/* Ends the open window: its trace is finished and closed, CUPTI stops
 * instrumenting and its buffers are freed; calls pass through again. */
void gt_session_window_close(void);
/* The flight recorder (gt_flight.h), from its thread: a crash's window,
 * opened and closed at once (the rings' history, no CUPTI), or the open
 * window closed now; and the hang watcher's look (-1: not recording into
 * memory now, or busy): events so far, calls in flight. */
void gt_session_window_dump(const char *why);
int gt_session_flight_look(uint64_t *events, int *inflight);

#endif

/* gt_base.h: what every layer of the shim shares and nothing depends
 * below: the clock, the one-line warning, the session's state word and the
 * thread's "inside the tracer" flag. Safe on any thread, in any state. */
#ifndef GT_BASE_H
#define GT_BASE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#define GT_EXPORT __attribute__((visibility("default")))
#define GT_TLS __thread __attribute__((tls_model("initial-exec")))

/* STANDBY (GPUTRACE_MODE=standby, no window open) sorts after DISABLED:
 * a hook passes through on the same one branch. FLIGHT (standby with
 * GPUTRACE_FLIGHT, no window open) sorts before it: calls are recorded
 * into the rings, which keep the newest (session/gt_flight.c). */
enum gt_state { GT_STATE_IDLE, GT_STATE_ACTIVE, GT_STATE_FLIGHT, GT_STATE_DISABLED, GT_STATE_FINISHED,
                GT_STATE_STANDBY };

/* Whether calls made in this state go to the rings. */
static inline int gt_state_records(int st)
{
    return st == GT_STATE_ACTIVE || st == GT_STATE_FLIGHT;
}

/* Set while this thread is inside the tracer (a hook, or the tracer's own
 * threads): calls made then go straight to CUDA and are not recorded. */
extern GT_TLS int gt_tls_busy;
/* enum gt_state; written by the session (session/), read everywhere. */
extern _Atomic int gt_state;

static inline uint64_t gt_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* One line on stderr, prefixed "gputrace: ", written with write(2) so the
 * program's stdio buffers stay the program's. */
void gt_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Starts a thread of the tracer's own with every signal blocked, so the
 * program's signals stay the program's threads'; detached if asked (t may
 * then be NULL). Returns pthread_create's result. */
int gt_thread_spawn(pthread_t *t, int detached, void *(*fn)(void *), void *arg);

#endif

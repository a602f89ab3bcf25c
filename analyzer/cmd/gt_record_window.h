/* gt_record_window.h: `gputrace record --delay/--duration` (docs/cli.md):
 * the command runs in standby, and record opens one recording window in
 * it through its control channel, as `gputrace trigger` does. */
#ifndef GT_RECORD_WINDOW_H
#define GT_RECORD_WINDOW_H

#include <stdint.h>
#include <sys/types.h>

/* Waits for child `pid` to end (its wait status in *status), opening a
 * window in it delay_ns after start_wall_ns (CLOCK_REALTIME) for
 * duration_ns (0: until it exits), once its channel exists (at its first
 * CUDA call). Returns 0, or -1 when waitpid failed. */
int gt_record_window_wait(pid_t pid, uint64_t delay_ns, uint64_t duration_ns, uint64_t start_wall_ns,
                          int *status);

#endif

/* gt_writer.h: the background thread that moves events from the rings into
 * the SQLite trace, and the trace file's life. */
#ifndef GT_WRITER_H
#define GT_WRITER_H

#include <stddef.h>
#include "base/gt_config.h"

/* Creates the trace at `path` (never through a symlink, mode 0600) with the
 * schema and the process facts; at a name beside it, written back into
 * `path`, when that one is taken (gt_writer_claim.c). Returns 0, or -1 with
 * a reason in err. */
int gt_writer_open(char *path, size_t path_len, const struct gt_config *cfg, char *err, size_t err_len);
/* Records whether GPU times are captured: mode 'cupti' (detail: the library)
 * or 'none' (detail: why not). Before gt_writer_start. */
void gt_writer_set_gpu_timing(const char *mode, const char *detail);
/* One more fact in the trace's meta (a window's trigger). Before
 * gt_writer_start. */
void gt_writer_set_meta(const char *key, const char *value);
/* A standby window's trace: its number, and when it opened (calls that
 * started earlier are left out). Before gt_writer_start. */
void gt_writer_set_window(long window, uint64_t since_ns);
/* The window's exact bounds, from the session (0: unchanged; the first
 * end given stands): from when calls were first recorded, to when they
 * stopped being. In meta at the
 * finish; calls that started outside them are left out. */
void gt_writer_window_bounds(uint64_t since_ns, uint64_t until_ns);
/* Before a window's end: gives the GPU records of the window's last calls
 * up to max_ms to arrive (CUPTI flushed, the writer woken), so they are
 * not cut off when CUPTI stops. */
void gt_writer_settle(int max_ms);
/* 1 when the file at `path` is a trace this very process wrote before an
 * exec replaced its program (same pid, same start time). */
int gt_writer_is_earlier_image(const char *path);
/* Starts the writer thread. Returns 0 or -1. */
int gt_writer_start(void);
/* Asks the writer to drain now (a ring is filling up). */
void gt_writer_wake(void);
/* Drains everything, finalizes and closes the trace; `complete` says the
 * process is ending normally. Safe to call once. */
void gt_writer_stop(int complete);
/* From a signal handler (async-signal-safe): asks the writer thread to
 * finish the trace now; gt_writer_wait_finished waits for it (0: done).
 * GT_FINISH_EXIT for a process ending in _exit, not by a signal. */
#define GT_FINISH_EXIT (-1)
void gt_writer_finish_on_signal(int sig);
int gt_writer_wait_finished(int seconds);
/* After gt_writer_wait_finished returned 0: reaps the writer thread, which
 * has finished the trace and ended (a process that goes on after that). */
void gt_writer_join_finished(void);
/* Around fork(): the writer finishes what it is writing and holds still
 * (prepare), and resumes (release, in the parent and in the child). */
void gt_writer_fork_prepare(void);
void gt_writer_fork_release(void);
/* The tracer's start-up, timed on the program's thread that made the first
 * CUDA call (before that call's own start): meta tracer_startup_ns. */
void gt_writer_note_startup(uint64_t ns);
/* In a fork child: forgets the parent's trace without touching it. */
void gt_writer_after_fork_child(void);

#endif

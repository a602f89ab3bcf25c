/* gt_crange.h: capture ranges (GPUTRACE_CAPTURE_RANGE, nsys's
 * --capture-range): the program itself opens and closes standby windows,
 * with cudaProfilerStart/Stop (cuProfilerStart/Stop) or with the NVTX
 * ranges a name matches. Runs on the program's thread that starts or ends
 * the range, so the window holds exactly the calls made inside it; the
 * window itself is opened and closed by the session, through the two
 * pointers handed down here (this layer never calls up). */
#ifndef GT_CRANGE_H
#define GT_CRANGE_H

#include <stdatomic.h>
#include <stdint.h>

#include "base/gt_config.h"

/* Nonzero while NVTX ranges are watched: the NVTX callbacks' one branch. */
extern _Atomic int gt_crange_nvtx_on;

/* The rule (gt_config's), and the session's window: `open(why)` returns
 * 0 when a window opened (-1: none, e.g. one opened by `gputrace trigger`
 * is recording), `close()` finishes it; both on the calling thread. */
void gt_crange_configure(const struct gt_capture_range *rule, int (*open)(const char *why), void (*close)(void));
/* In a fork child: the parent's ranges are not the child's. */
void gt_crange_reset(void);

/* From the profiler API's hooks: start after a successful real call,
 * stop before the real call. */
void gt_crange_profiler(int start);

/* From the NVTX callbacks, inside the thread's guard: a push or start
 * before its event is recorded (so the range itself is in the window), a
 * pop or end after. `name` is the range's message (NULL: none that can be
 * matched), `name_len` its length; `domain` the domain's interned id (0:
 * the default domain). */
void gt_crange_push(uint32_t domain, const char *name, size_t name_len);
void gt_crange_pop(uint32_t domain);
void gt_crange_start(uint64_t id, uint32_t domain, const char *name, size_t name_len);
void gt_crange_end(uint64_t id);

#endif

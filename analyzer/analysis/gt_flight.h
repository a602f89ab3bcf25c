/* gt_flight.h: what a flight recorder's window or a bounded trace says
 * about itself (meta keys the shim writes: flight_start_ns, trigger_ns,
 * window_trigger, max_size_mode; calls still running at the window's end
 * have result -1), as lines for the report's notes and `info`. */
#ifndef GT_FLIGHT_H
#define GT_FLIGHT_H

#include "trace/gt_trace.h"

#define GT_FLIGHT_LINE 320
/* Up to `max` lines into `out`; how many. */
int gt_flight_lines(struct gt_trace *t, char out[][GT_FLIGHT_LINE], int max);

#endif

/* gt_export_perfetto.h: a trace as Perfetto's native protobuf trace
 * (TracePacket / TrackEvent), the format ui.perfetto.dev opens fastest and
 * at the largest sizes. */
#ifndef GT_EXPORT_PERFETTO_H
#define GT_EXPORT_PERFETTO_H

#include "output/gt_export_chrome.h"
#include "trace/gt_trace.h"

/* Writes one trace's tracks, slices and flows to x->out as packets of a
 * perfetto.protos.Trace (concatenated traces are one trace). `seq` (from
 * 1) numbers the trace among those exported together: each gets its own
 * packet sequence, so its interned strings are its own. Honours x's
 * window and event limit. 0, or -1 after an error message. */
int gt_export_perfetto_trace(struct gt_trace *t, struct gt_export *x, uint32_t seq);

#endif

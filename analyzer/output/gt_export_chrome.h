/* gt_export_chrome.h: a trace as Chrome trace event JSON, the timeline
 * format ui.perfetto.dev and chrome://tracing open. */
#ifndef GT_EXPORT_CHROME_H
#define GT_EXPORT_CHROME_H

#include <stdint.h>
#include <stdio.h>

#include "trace/gt_trace.h"

struct gt_export {
    FILE *out;
    int first;          /* no event written yet */
    int64_t origin_ns;  /* time zero */
    uint64_t min_gap_ns;
    uint64_t events;
};

/* Writes one trace's tracks and events; the caller writes the document's
 * opening and closing. 0, or -1 after an error message. */
int gt_export_chrome_trace(struct gt_trace *t, struct gt_export *x);

#endif

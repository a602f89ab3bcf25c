/* gt_export_chrome.h: a trace as Chrome trace event JSON, the timeline
 * format ui.perfetto.dev and chrome://tracing open. */
#ifndef GT_EXPORT_CHROME_H
#define GT_EXPORT_CHROME_H

#include <stdint.h>
#include <stdio.h>

#include "analysis/gt_window.h"
#include "trace/gt_trace.h"

struct gt_export {
    FILE *out;
    int first;          /* no event written yet */
    int64_t origin_ns;  /* time zero */
    uint64_t min_gap_ns;
    uint64_t events;
    /* The window, in ns from origin_ns: events starting in [from_ns, to_ns). */
    uint64_t from_ns, to_ns;
    /* With --range or step:N, the window's intervals (trace time), inside
     * [from_ns, to_ns): several ranges are their union, not the span from
     * the first to the last. NULL: [from_ns, to_ns) alone. */
    const struct gt_window *win;
    uint64_t max_events; /* 0: no limit */
    int cut;             /* max_events was reached: events were left out */
    uint64_t cut_at_ns;  /* then: the start (from origin_ns) of the first one left out */
    int write_errno;     /* the errno of the first write that failed; 0: none */
};

/* Whether an event starting at `ns` (trace time) is in the window. */
int gt_export_in_window(const struct gt_export *x, int64_t ns);

/* Writes one trace's tracks and events; the caller writes the document's
 * opening and closing. 0, or -1 after an error message. */
int gt_export_chrome_trace(struct gt_trace *t, struct gt_export *x);

#endif

/* gt_report_total.c: the summary over several processes, as the text and
 * JSON reports print it. */
#include "output/gt_report_out.h"

struct gt_summary gt_report_items_total(const struct gt_report_item *v, size_t n)
{
    struct gt_summary t = {0};
    t.gpu_times = 1;
    for (size_t i = 0; i < n; i++) {
        const struct gt_summary *s = &v[i].r.summary;
        t.span_ns += s->span_ns;
        t.gpu_times &= s->gpu_times;
        t.calls += s->calls;
        t.launches += s->launches;
        t.launch_bound += s->launch_bound;
        t.launch_host_ns += s->launch_host_ns;
        t.busy_ns += s->busy_ns;
        t.idle_ns += s->idle_ns;
        t.sync_ns += s->sync_ns;
        t.h2d_bytes += s->h2d_bytes;
        t.pageable_h2d_bytes += s->pageable_h2d_bytes;
        for (int c = 0; c < GT_GAP_CAUSES; c++)
            t.idle_by_cause[c] += s->idle_by_cause[c];
    }
    double span = (double)t.span_ns;
    t.launch_host_pct = span > 0 ? 100.0 * (double)t.launch_host_ns / span : 0;
    t.idle_pct = span > 0 ? 100.0 * (double)t.idle_ns / span : 0;
    t.sync_pct = span > 0 ? 100.0 * (double)t.sync_ns / span : 0;
    t.launch_bound_pct = t.launches ? 100.0 * (double)t.launch_bound / (double)t.launches : 0;
    return t;
}


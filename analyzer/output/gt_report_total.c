/* gt_report_total.c: the summary over several processes: sums, with the
 * shares of sums recomputed from them and the busiest-thread shares the
 * largest of the processes' (docs/report.md). */
#include "output/gt_report_out.h"

static double gt_pct(uint64_t part, uint64_t whole)
{
    return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

struct gt_summary gt_report_items_total(const struct gt_report_item *v, size_t n)
{
    struct gt_summary t = {0};
    t.gpu_times = n > 0;
    for (size_t i = 0; i < n; i++) {
        const struct gt_summary *s = &v[i].r.summary;
        t.span_ns += s->span_ns;
        t.gpu_times &= s->gpu_times;
        t.calls += s->calls;
        t.failed_calls += s->failed_calls;
        t.launches += s->launches;
        t.captured_calls += s->captured_calls;
        t.graph_launches += s->graph_launches;
        t.launch_bound += s->launch_bound;
        t.launch_host_ns += s->launch_host_ns;
        t.launch_threads += s->launch_threads;
        if (s->launch_host_pct > t.launch_host_pct)
            t.launch_host_pct = s->launch_host_pct;
        t.kernel_ns += s->kernel_ns;
        t.devices += s->devices;
        t.device_ns += s->device_ns;
        t.busy_ns += s->busy_ns;
        t.idle_ns += s->idle_ns;
        t.sync_ns += s->sync_ns;
        t.module_ns += s->module_ns;
        t.module_jit += s->module_jit;
        if (s->sync_pct > t.sync_pct)
            t.sync_pct = s->sync_pct;
        t.h2d_bytes += s->h2d_bytes;
        t.pageable_h2d_bytes += s->pageable_h2d_bytes;
        t.mapped_host_allocs += s->mapped_host_allocs;
        t.mapped_host_bytes += s->mapped_host_bytes;
        t.tracer_startup_ns += s->tracer_startup_ns;
        for (int c = 0; c < GT_CAUSES; c++)
            t.idle_by_cause[c] += s->idle_by_cause[c];
    }
    t.idle_pct = gt_pct(t.idle_ns, t.device_ns);
    t.launch_bound_pct = gt_pct(t.launch_bound, t.launches);
    return t;
}

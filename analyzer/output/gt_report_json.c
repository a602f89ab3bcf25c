/* gt_report_json.c: the report as one JSON document (docs/report.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/gt_analyze.h"
#include "analysis/gt_site.h"
#include "base/gt_fmt.h"
#include "output/gt_report_out.h"

static void gt_json_summary(FILE *out, const struct gt_summary *s)
{
    fprintf(out,
            "{\"span_ns\":%llu,\"gpu_times\":%s,\"calls\":%llu,\"launches\":%llu,\"launch_bound\":%llu,"
            "\"launch_host_ns\":%llu,\"launch_host_pct\":%.3f,\"launch_bound_pct\":%.3f,\"busy_ns\":%llu,"
            "\"idle_ns\":%llu,\"idle_pct\":%.3f,\"sync_ns\":%llu,\"sync_pct\":%.3f,\"h2d_bytes\":%llu,"
            "\"pageable_h2d_bytes\":%llu,\"idle_by_cause_ns\":{\"sync\":%llu,\"copy\":%llu,\"launch\":%llu,"
            "\"host\":%llu}}",
            (unsigned long long)s->span_ns, s->gpu_times ? "true" : "false", (unsigned long long)s->calls,
            (unsigned long long)s->launches, (unsigned long long)s->launch_bound,
            (unsigned long long)s->launch_host_ns, s->launch_host_pct, s->launch_bound_pct,
            (unsigned long long)s->busy_ns, (unsigned long long)s->idle_ns, s->idle_pct,
            (unsigned long long)s->sync_ns, s->sync_pct, (unsigned long long)s->h2d_bytes,
            (unsigned long long)s->pageable_h2d_bytes, (unsigned long long)s->idle_by_cause[0],
            (unsigned long long)s->idle_by_cause[1], (unsigned long long)s->idle_by_cause[2],
            (unsigned long long)s->idle_by_cause[3]);
}

static void gt_json_launch_row(FILE *out, const struct gt_launch_row *k, int by_site, long long pid)
{
    fprintf(out, "{\"pid\":%lld,", pid);
    if (by_site) {
        fputs("\"site\":", out);
        gt_site_put_json(out, &k->site);
    } else {
        fputs("\"kernel\":", out);
        gt_put_json_string(out, k->kernel);
    }
    fprintf(out,
            ",\"count\":%llu,\"api_total_ns\":%llu,\"api_mean_ns\":%llu,\"api_p50_ns\":%llu,\"api_p99_ns\":%llu,"
            "\"queue_mean_ns\":%llu,\"gpu_total_ns\":%llu,\"gpu_mean_ns\":%llu,\"launch_bound\":%llu}",
            (unsigned long long)k->count, (unsigned long long)k->api_total_ns, (unsigned long long)k->api_mean_ns,
            (unsigned long long)k->api_p50_ns, (unsigned long long)k->api_p99_ns,
            (unsigned long long)k->queue_mean_ns, (unsigned long long)k->gpu_total_ns,
            (unsigned long long)k->gpu_mean_ns, (unsigned long long)k->launch_bound);
}

static void gt_json_tables(FILE *out, const struct gt_report_item *v, size_t n)
{
    fputs(",\"launch_overhead\":{\"kernels\":[", out);
    int first = 1;
    for (size_t t = 0; t < n; t++)
        for (size_t i = 0; i < v[t].r.nkernels; i++, first = 0) {
            if (!first)
                fputc(',', out);
            gt_json_launch_row(out, &v[t].r.kernels[i], 0, v[t].pid);
        }
    fputs("],\"sites\":[", out);
    first = 1;
    for (size_t t = 0; t < n; t++)
        for (size_t i = 0; i < v[t].r.nlaunch_sites; i++, first = 0) {
            if (!first)
                fputc(',', out);
            gt_json_launch_row(out, &v[t].r.launch_sites[i], 1, v[t].pid);
        }
    fputs("]},\"h2d_hotspots\":[", out);
    first = 1;
    for (size_t t = 0; t < n; t++)
        for (size_t i = 0; i < v[t].r.nh2d; i++, first = 0) {
            const struct gt_h2d_row *h = &v[t].r.h2d[i];
            fprintf(out, "%s{\"pid\":%lld,\"site\":", first ? "" : ",", v[t].pid);
            gt_site_put_json(out, &h->site);
            fprintf(out,
                    ",\"bytes\":%llu,\"count\":%llu,\"host_ns\":%llu,\"gpu_ns\":%llu,\"pageable_bytes\":%llu,"
                    "\"pinned_bytes\":%llu,\"blocking\":%llu,\"async\":%llu,\"async_pageable\":%llu,"
                    "\"bandwidth_gbps\":%.3f,\"small_copy_storm\":%s}",
                    (unsigned long long)h->bytes, (unsigned long long)h->count, (unsigned long long)h->host_ns,
                    (unsigned long long)h->gpu_ns, (unsigned long long)h->pageable_bytes,
                    (unsigned long long)h->pinned_bytes, (unsigned long long)h->blocking,
                    (unsigned long long)h->async, (unsigned long long)h->async_pageable, h->bandwidth_gbps,
                    h->small_storm ? "true" : "false");
        }
    fputs("],\"idle_gaps\":[", out);
    first = 1;
    for (size_t t = 0; t < n; t++)
        for (size_t i = 0; i < v[t].r.ngaps; i++, first = 0) {
            const struct gt_gap *g = &v[t].r.gaps[i];
            fprintf(out, "%s{\"pid\":%lld,\"device\":%d,\"start_ns\":%llu,\"dur_ns\":%llu,\"cause\":\"%s\",\"before\":",
                    first ? "" : ",", v[t].pid, g->device, (unsigned long long)g->start_ns,
                    (unsigned long long)g->dur_ns, gt_gap_cause_names[g->cause]);
            gt_site_put_json(out, &g->before);
            fputs(",\"after\":", out);
            gt_site_put_json(out, &g->after);
            fputc('}', out);
        }
    fputs("],\"idle_by_site\":[", out);
    first = 1;
    for (size_t t = 0; t < n; t++)
        for (size_t i = 0; i < v[t].r.nidle_sites; i++, first = 0) {
            const struct gt_idle_site *x = &v[t].r.idle_sites[i];
            fprintf(out, "%s{\"pid\":%lld,\"idle_ns\":%llu,\"gaps\":%llu,\"site\":", first ? "" : ",", v[t].pid,
                    (unsigned long long)x->idle_ns, (unsigned long long)x->gaps);
            gt_site_put_json(out, &x->site);
            fputc('}', out);
        }
    fputs("],\"syncs\":[", out);
    first = 1;
    for (size_t t = 0; t < n; t++)
        for (size_t i = 0; i < v[t].r.nsyncs; i++, first = 0) {
            const struct gt_sync_row *s = &v[t].r.syncs[i];
            fprintf(out, "%s{\"pid\":%lld,\"kind\":\"%s\",\"count\":%llu,\"dur_ns\":%llu,\"site\":",
                    first ? "" : ",", v[t].pid, s->kind, (unsigned long long)s->count,
                    (unsigned long long)s->blocked_ns);
            gt_site_put_json(out, &s->site);
            fputc('}', out);
        }
    fputs("]", out);
}

void gt_report_json(FILE *out, const struct gt_report_item *v, size_t n)
{
    struct gt_summary total = gt_report_items_total(v, n);
    fputs("{\"summary\":", out);
    gt_json_summary(out, &total);
    gt_json_tables(out, v, n);
    fputs(",\"advice\":[", out);
    int first = 1;
    for (size_t t = 0; t < n; t++)
        for (int i = 0; i < 4 && v[t].r.advice[i][0]; i++, first = 0) {
            if (!first)
                fputc(',', out);
            gt_put_json_string(out, v[t].r.advice[i]);
        }
    fputs("],\"processes\":[", out);
    for (size_t t = 0; t < n; t++) {
        fprintf(out, "%s{\"trace\":", t ? "," : "");
        gt_put_json_string(out, v[t].path);
        fprintf(out, ",\"pid\":%lld,\"summary\":", v[t].pid);
        gt_json_summary(out, &v[t].r.summary);
        fputs(",\"devices\":[", out);
        for (size_t i = 0; i < v[t].r.ndevices; i++) {
            const struct gt_device_idle *d = &v[t].r.devices[i];
            fprintf(out, "%s{\"device\":%d,\"busy_ns\":%llu,\"idle_ns\":%llu,\"idle_pct\":%.3f}", i ? "," : "",
                    d->device, (unsigned long long)d->busy_ns, (unsigned long long)d->idle_ns, d->idle_pct);
        }
        fputs("]}", out);
    }
    fputs("]}\n", out);
}


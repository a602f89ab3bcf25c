/* gt_report_text.c: the report for a terminal, 80 columns wide. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/gt_analyze.h"
#include "analysis/gt_site.h"
#include "base/gt_fmt.h"
#include "output/gt_report_out.h"

static char gt_b1[64], gt_b2[64], gt_b3[64], gt_b4[64], gt_b5[64];
#define DUR(x, b) gt_fmt_duration((int64_t)(x), b, sizeof(b))
#define BYTES(x, b) gt_fmt_bytes((int64_t)(x), b, sizeof(b))

static void gt_text_site(FILE *out, const char *indent, const struct gt_site *s)
{
    if (!s->nframes) {
        fprintf(out, "%s(no stack)\n", indent);
        return;
    }
    for (int i = 0; i < s->nframes; i++) {
        fputs(indent, out);
        fputs(i ? "< " : "at ", out);
        gt_put_text(out, s->frames[i], 78 - (int)strlen(indent) - 3);
        fputc('\n', out);
    }
}

static void gt_text_summary(FILE *out, const struct gt_summary *s)
{
    fprintf(out, "span %s, %llu calls, GPU times: %s\n", DUR(s->span_ns, gt_b1), (unsigned long long)s->calls,
            s->gpu_times ? "from CUPTI" : "NOT recorded (host-side times stand in)");
    fprintf(out, "  launches        %10llu  host time launching %s (%.1f%% of span)\n",
            (unsigned long long)s->launches, DUR(s->launch_host_ns, gt_b1), s->launch_host_pct);
    if (s->gpu_times)
        fprintf(out, "  launch-bound    %10llu  (%.1f%% of launches)\n", (unsigned long long)s->launch_bound,
                s->launch_bound_pct);
    fprintf(out, "  GPU idle        %10s  (%.1f%% of span)\n", DUR(s->idle_ns, gt_b1), s->idle_pct);
    fprintf(out, "    by cause: sync %s, copy %s, launch %s, host %s\n", DUR(s->idle_by_cause[0], gt_b1),
            DUR(s->idle_by_cause[1], gt_b2), DUR(s->idle_by_cause[2], gt_b3), DUR(s->idle_by_cause[3], gt_b4));
    fprintf(out, "  host in syncs   %10s  (%.1f%% of span)\n", DUR(s->sync_ns, gt_b1), s->sync_pct);
    fprintf(out, "  H2D bytes       %10s  pageable %s\n", BYTES(s->h2d_bytes, gt_b1), BYTES(s->pageable_h2d_bytes, gt_b2));
}

static void gt_text_launch(FILE *out, const struct gt_report *r, int gpu)
{
    fprintf(out, "\nLaunch overhead by kernel (host time in the launch call)\n");
    if (!r->nkernels) {
        fprintf(out, "  no kernel launches\n");
        return;
    }
    fprintf(out, "  %8s %9s %9s %9s %9s %9s %7s\n", "count", "mean", "p50", "p99", "queue", "gpu mean", "bound");
    for (size_t i = 0; i < r->nkernels; i++) {
        const struct gt_launch_row *k = &r->kernels[i];
        fputs("  ", out);
        gt_put_text(out, k->kernel, 76);
        fprintf(out, "\n  %8llu %9s %9s %9s %9s %9s %6.0f%%\n", (unsigned long long)k->count,
                DUR(k->api_mean_ns, gt_b1), DUR(k->api_p50_ns, gt_b2), DUR(k->api_p99_ns, gt_b3),
                gpu ? DUR(k->queue_mean_ns, gt_b4) : "-", gpu ? DUR(k->gpu_mean_ns, gt_b5) : "-",
                gpu ? 100.0 * (double)k->launch_bound / (double)k->count : 0.0);
    }
    fprintf(out, "\nLaunch sites\n");
    for (size_t i = 0; i < r->nlaunch_sites; i++) {
        const struct gt_launch_row *k = &r->launch_sites[i];
        fprintf(out, "  %llu launches, %s in launch calls (mean %s)%s\n", (unsigned long long)k->count,
                DUR(k->api_total_ns, gt_b1), DUR(k->api_mean_ns, gt_b2),
                gpu && k->launch_bound ? ", some launch-bound" : "");
        gt_text_site(out, "    ", &k->site);
    }
}

static void gt_text_h2d(FILE *out, const struct gt_report *r)
{
    fprintf(out, "\nH2D hotspots by call site (by host time)\n");
    if (!r->nh2d) {
        fprintf(out, "  no host-to-device copies\n");
        return;
    }
    for (size_t i = 0; i < r->nh2d; i++) {
        const struct gt_h2d_row *h = &r->h2d[i];
        fprintf(out, "  %s in %llu copies, host %s, GPU %s, %.2f GB/s\n", BYTES(h->bytes, gt_b1),
                (unsigned long long)h->count, DUR(h->host_ns, gt_b2), h->gpu_ns ? DUR(h->gpu_ns, gt_b3) : "-",
                h->bandwidth_gbps);
        fprintf(out, "    pageable %s, pinned %s; %llu blocking, %llu async\n", BYTES(h->pageable_bytes, gt_b1),
                BYTES(h->pinned_bytes, gt_b2), (unsigned long long)h->blocking, (unsigned long long)h->async);
        if (h->async_pageable)
            fprintf(out, "    ! %llu async copies from pageable memory: they block anyway\n",
                    (unsigned long long)h->async_pageable);
        if (h->small_storm)
            fprintf(out, "    ! storm of small copies: batch them into fewer, larger ones\n");
        if (h->blocking)
            fprintf(out, "    ! copies here block the host\n");
        gt_text_site(out, "    ", &h->site);
    }
}

static void gt_text_gaps(FILE *out, const struct gt_report *r, const struct gt_analyze_opts *o)
{
    fprintf(out, "\nGPU idle gaps of %s or more (longest first)\n", DUR(o->min_gap_ns, gt_b1));
    if (!r->ngaps) {
        fprintf(out, "  none\n");
        return;
    }
    for (size_t i = 0; i < r->ngaps; i++) {
        const struct gt_gap *g = &r->gaps[i];
        fprintf(out, "  %s idle on device %d at +%s: host %s\n", DUR(g->dur_ns, gt_b1), g->device,
                DUR(g->start_ns - r->summary.first_ns, gt_b2),
                g->cause == GT_GAP_SYNC     ? "blocked in a sync"
                : g->cause == GT_GAP_COPY   ? "inside a copy"
                : g->cause == GT_GAP_LAUNCH ? "busy launching"
                                            : "outside CUDA");
        fprintf(out, "    before:\n");
        gt_text_site(out, "      ", &g->before);
        fprintf(out, "    after:\n");
        gt_text_site(out, "      ", &g->after);
    }
}

static void gt_text_idle_sites(FILE *out, const struct gt_report *r)
{
    if (!r->nidle_sites)
        return;
    fprintf(out, "\nGPU idle time by the call that ended it (all gaps)\n");
    for (size_t i = 0; i < r->nidle_sites; i++) {
        const struct gt_idle_site *x = &r->idle_sites[i];
        fprintf(out, "  %s idle over %llu gaps, ended by\n", DUR(x->idle_ns, gt_b1), (unsigned long long)x->gaps);
        gt_text_site(out, "    ", &x->site);
    }
}

static void gt_text_syncs(FILE *out, const struct gt_report *r)
{
    fprintf(out, "\nSyncs by call site (host time blocked)\n");
    if (!r->nsyncs) {
        fprintf(out, "  none\n");
        return;
    }
    for (size_t i = 0; i < r->nsyncs; i++) {
        const struct gt_sync_row *s = &r->syncs[i];
        fprintf(out, "  %-16s %6llu calls, %s blocked\n", s->kind, (unsigned long long)s->count,
                DUR(s->blocked_ns, gt_b1));
        gt_text_site(out, "    ", &s->site);
    }
}

static void gt_text_one(FILE *out, const char *path, const struct gt_report *r, const struct gt_analyze_opts *o)
{
    fprintf(out, "== %s\n", path);
    gt_text_summary(out, &r->summary);
    for (size_t i = 0; i < r->ndevices; i++)
        fprintf(out, "    device %-3d  busy %s, idle %.1f%% of span\n", r->devices[i].device,
                DUR(r->devices[i].busy_ns, gt_b1), r->devices[i].idle_pct);
    gt_text_launch(out, r, r->summary.gpu_times);
    gt_text_h2d(out, r);
    gt_text_gaps(out, r, o);
    gt_text_idle_sites(out, r);
    gt_text_syncs(out, r);
    if (r->advice[0][0]) {
        fprintf(out, "\nAdvice\n");
        for (int i = 0; i < 4 && r->advice[i][0]; i++) {
            fputs("  - ", out);
            gt_put_text(out, r->advice[i], 0);
            fputc('\n', out);
        }
    }
}

void gt_report_text(FILE *out, const struct gt_report_item *v, size_t n, const struct gt_analyze_opts *o)
{
    for (size_t i = 0; i < n; i++) {
        if (i)
            fputc('\n', out);
        gt_text_one(out, v[i].path, &v[i].r, o);
    }
    if (n > 1) {
        struct gt_summary total = gt_report_items_total(v, n);
        fprintf(out, "\n== totals over %zu processes\n", n);
        gt_text_summary(out, &total);
    }
}

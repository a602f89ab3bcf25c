/* gt_report_text.c: the report for a terminal, 80 columns wide, in the
 * order docs/report.md gives: notes, summary, findings, phases, gaps, kernels,
 * launches, transfers, H2D, syncs, streams, API, errors. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/gt_analyze.h"
#include "analysis/gt_site.h"
#include "base/gt_fmt.h"
#include "output/gt_report_cats.h"
#include "output/gt_report_out.h"
#include "output/gt_report_samples.h"

static char gt_b1[64], gt_b2[64], gt_b3[64], gt_b4[64], gt_b5[64], gt_b6[64], gt_b7[64];
#define DUR(x, b) gt_fmt_duration((int64_t)(x), b, sizeof(b))
#define BYTES(x, b) gt_fmt_bytes((int64_t)(x), b, sizeof(b))
#define U(x) ((unsigned long long)(x))

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

/* Words of `s` on lines of at most `width` columns after `indent`. */
static void gt_wrap(FILE *out, const char *indent, const char *first, const char *s, int width)
{
    int col = 0;
    fputs(indent, out);
    fputs(first, out);
    col = (int)strlen(first);
    while (*s) {
        const char *e = s;
        while (*e && *e != ' ')
            e++;
        int len = (int)(e - s);
        if (col > (int)strlen(first) && col + 1 + len > width) {
            fputc('\n', out);
            fputs(indent, out);
            fprintf(out, "%*s", (int)strlen(first), "");
            col = (int)strlen(first);
        } else if (col > (int)strlen(first)) {
            fputc(' ', out);
            col++;
        }
        char word[512];
        snprintf(word, sizeof(word), "%.*s", len, s);
        gt_put_text(out, word, 0);
        col += len;
        s = *e ? e + 1 : e;
    }
    fputc('\n', out);
}

static void gt_more(FILE *out, size_t more, const char *what)
{
    if (more)
        fprintf(out, "  ... and %zu more %s (--top 0 shows all)\n", more, more == 1 ? "row" : what);
}

static int gt_cause_order(const void *a, const void *b, void *idle)
{
    const uint64_t *v = idle;
    uint64_t x = v[*(const int *)a], y = v[*(const int *)b];
    return x > y ? -1 : x < y ? 1 : *(const int *)a - *(const int *)b;
}

/* "host 50.30 ms, launch 4.04 ms, ..." largest first, causes with time only. */
static void gt_text_causes(FILE *out, const char *indent, const uint64_t *idle)
{
    int order[GT_CAUSES], n = 0;
    for (int c = 0; c < GT_CAUSES; c++)
        if (idle[c])
            order[n++] = c;
    if (!n)
        return;
    qsort_r(order, (size_t)n, sizeof(order[0]), gt_cause_order, (void *)idle);
    char line[1024];
    size_t off = 0;
    for (int i = 0; i < n && off < sizeof(line); i++)
        off += (size_t)snprintf(line + off, sizeof(line) - off, "%s%s %s", i ? ", " : "", gt_cause_names[order[i]],
                                DUR(idle[order[i]], gt_b1));
    gt_wrap(out, indent, "idle by cause: ", line, 76 - (int)strlen(indent));
}

static void gt_text_summary(FILE *out, const struct gt_summary *s)
{
    fprintf(out, "span %s, %llu calls", DUR(s->span_ns, gt_b1), U(s->calls));
    if (s->failed_calls)
        fprintf(out, " (%llu failed)", U(s->failed_calls));
    fprintf(out, ", GPU times: %s\n", s->gpu_times ? "from CUPTI" : "NOT recorded (host times stand in)");
    if (s->devices > 1) /* device time: each device's own busy and idle, added */
        fprintf(out, "  GPUs busy %s, idle %s (%.1f%% of device time: %llu devices x span)\n",
                DUR(s->busy_ns, gt_b1), DUR(s->idle_ns, gt_b2), s->idle_pct, U(s->devices));
    else
        fprintf(out, "  GPU busy %s, idle %s (%.1f%% of span)\n", DUR(s->busy_ns, gt_b1), DUR(s->idle_ns, gt_b2),
                s->idle_pct);
    gt_text_causes(out, "    ", s->idle_by_cause);
    fprintf(out, "  launches %llu", U(s->launches));
    if (s->gpu_times)
        fprintf(out, " (%llu launch-bound, %.1f%%)", U(s->launch_bound), s->launch_bound_pct);
    if (s->graph_launches)
        fprintf(out, ", graph launches %llu", U(s->graph_launches));
    if (s->captured_calls)
        fprintf(out, ", %llu calls captured into graphs", U(s->captured_calls));
    fputc('\n', out);
    fprintf(out, "  host time launching %s, summed over %llu thread%s (busiest: %.1f%% of span)\n",
            DUR(s->launch_host_ns, gt_b1), U(s->launch_threads), s->launch_threads == 1 ? "" : "s",
            s->launch_host_pct);
    if (s->module_ns)
        fprintf(out, "  host time loading modules %s, summed over threads (%llu compiled PTX)\n",
                DUR(s->module_ns, gt_b1), U(s->module_jit));
    fprintf(out, "  host time in syncs %s, summed over threads (busiest: %.1f%% of span)\n", DUR(s->sync_ns, gt_b1),
            s->sync_pct);
    fprintf(out, "  H2D bytes %s, pageable %s; kernels ran %s on the GPU\n", BYTES(s->h2d_bytes, gt_b1),
            BYTES(s->pageable_h2d_bytes, gt_b2), DUR(s->kernel_ns, gt_b3));
}

static void gt_text_findings(FILE *out, const struct gt_report *r)
{
    fprintf(out, "\nFindings, by the time they cost\n");
    if (!r->nfindings) {
        fprintf(out, "  none costs 1%% of the run or more\n");
        return;
    }
    for (size_t i = 0; i < r->nfindings; i++) {
        const struct gt_finding *f = &r->findings[i];
        char num[32];
        snprintf(num, sizeof(num), "%zu. ", i + 1);
        gt_wrap(out, "  ", num, f->title, 76);
        if (f->has_site)
            gt_text_site(out, "       ", &f->site);
        gt_wrap(out, "     ", "-> ", f->advice, 72);
    }
    gt_more(out, r->more.findings, "findings");
}

static void gt_text_gaps(FILE *out, const struct gt_report *r, const struct gt_analyze_opts *o)
{
    fprintf(out, "\nGPU idle gaps of %s or more, longest first\n", DUR(o->min_gap_ns, gt_b1));
    if (!r->ngaps) {
        fprintf(out, "  none\n");
        return;
    }
    for (size_t i = 0; i < r->ngaps; i++) {
        const struct gt_gap *g = &r->gaps[i];
        fprintf(out, "  %s idle on device %d at +%s: %s\n", DUR(g->dur_ns, gt_b1), g->device,
                DUR(g->offset_ns, gt_b2), gt_cause_text[g->cause]);
        gt_text_gap_host(out, r, g);
        if (g->has_spent) {
            fprintf(out, "    spent in %s\n", g->spent_api[0] ? g->spent_api : "(no recorded call)");
            gt_text_site(out, "      ", &g->spent);
        }
        if (g->has_before) {
            fprintf(out, "    after the work of %s\n", g->before_api[0] ? g->before_api : "(no recorded call)");
            gt_text_site(out, "      ", &g->before);
        }
        if (g->has_after) {
            fprintf(out, "    ended by the work of %s\n", g->after_api[0] ? g->after_api : "(no recorded call)");
            gt_text_site(out, "      ", &g->after);
        }
    }
    gt_more(out, r->more.gaps, "gaps");
}

static void gt_text_idle_sites(FILE *out, const struct gt_report *r)
{
    if (!r->nidle_sites)
        return;
    fprintf(out, "\nGPU idle time by the calls that spent it or ended it (every gap)\n");
    for (size_t i = 0; i < r->nidle_sites; i++) {
        const struct gt_idle_site *x = &r->idle_sites[i];
        fprintf(out, "  %s over %llu gap%s\n", DUR(x->idle_ns, gt_b1), U(x->gaps), x->gaps == 1 ? "" : "s");
        gt_text_site(out, "    ", &x->site);
    }
    gt_more(out, r->more.idle_sites, "sites");
}

static void gt_text_kernels(FILE *out, const struct gt_report *r, int gpu)
{
    fprintf(out, "\nKernels by %s time\n", gpu ? "GPU" : "host (launch call)");
    if (!r->nkernels) {
        fprintf(out, "  no kernels ran\n");
        return;
    }
    for (size_t i = 0; i < r->nkernels; i++) {
        const struct gt_kernel_row *k = &r->kernels[i];
        fputs("  ", out);
        gt_put_text(out, gt_kernel_label(k->name), 76);
        fprintf(out, "\n    %s, %.1f%%, %llu run%s", DUR(k->total_ns, gt_b1), k->share_pct, U(k->count),
                k->count == 1 ? "" : "s");
        if (k->graph_count)
            fprintf(out, " (%llu by graphs)", U(k->graph_count));
        fprintf(out, "; mean %s, median %s\n    min %s, max %s, std dev %s\n", DUR(k->mean_ns, gt_b2),
                DUR(k->median_ns, gt_b3), DUR(k->min_ns, gt_b4), DUR(k->max_ns, gt_b5),
                DUR((uint64_t)(k->stddev_ns + 0.5), gt_b6));
    }
    gt_more(out, r->more.kernels, "kernels");
}

static void gt_text_launch(FILE *out, const struct gt_report *r, int gpu)
{
    fprintf(out, "\nLaunch overhead by kernel (host time in the launch call)\n");
    if (!r->nlaunch_kernels) {
        fprintf(out, "  no kernel launches\n");
        return;
    }
    if (gpu)
        gt_wrap(out, "  ", "", "(launch-bound: the GPU waited for the launch: the kernel's stream had drained by "
                "the time the call returned, and the kernel ran shorter than the call took; a kernel's first "
                "launch never counts)", 76);
    fprintf(out, "  %8s %8s %8s %8s %8s %8s %8s %6s\n", "count", "mean", "p50", "p99", "max", "queue", "gpu mean",
            "bound");
    for (size_t i = 0; i < r->nlaunch_kernels; i++) {
        const struct gt_launch_row *k = &r->launch_kernels[i];
        fputs("  ", out);
        gt_put_text(out, gt_kernel_label(k->kernel), 76);
        fprintf(out, "\n  %8llu %8s %8s %8s %8s %8s %8s %5.1f%%\n", U(k->count), DUR(k->api_mean_ns, gt_b1),
                DUR(k->api_p50_ns, gt_b2), DUR(k->api_p99_ns, gt_b3), DUR(k->api_max_ns, gt_b4),
                gpu ? DUR(k->queue_mean_ns, gt_b5) : "-", gpu ? DUR(k->gpu_mean_ns, gt_b6) : "-",
                gpu && k->count ? 100.0 * (double)k->launch_bound / (double)k->count : 0.0);
        fprintf(out, "  %8s first launch %s\n", "", DUR(k->first_api_ns, gt_b7));
    }
    gt_more(out, r->more.launch_kernels, "kernels");
    fprintf(out, "\nLaunch sites\n");
    for (size_t i = 0; i < r->nlaunch_sites; i++) {
        const struct gt_launch_row *k = &r->launch_sites[i];
        fprintf(out, "  %llu launch%s, %s in launch calls (mean %s)", U(k->count), k->count == 1 ? "" : "es",
                DUR(k->api_total_ns, gt_b1), DUR(k->api_mean_ns, gt_b2));
        if (gpu && k->launch_bound)
            fprintf(out, ", %llu launch-bound", U(k->launch_bound));
        fputc('\n', out);
        gt_text_site(out, "    ", &k->site);
    }
    gt_more(out, r->more.launch_sites, "sites");
}

static void gt_text_graphs(FILE *out, const struct gt_report *r)
{
    if (!r->ngraphs)
        return;
    fprintf(out, "\nGraph launches by call site (what they ran)\n");
    for (size_t i = 0; i < r->ngraphs; i++) {
        const struct gt_graph_row *g = &r->graphs[i];
        fprintf(out, "  %llu launch%s, %s in the calls; ran %llu operations (%llu kernels), GPU %s\n", U(g->count),
                g->count == 1 ? "" : "es", DUR(g->api_total_ns, gt_b1), U(g->ops), U(g->kernels),
                DUR(g->gpu_ns, gt_b2));
        gt_text_site(out, "    ", &g->site);
    }
    gt_more(out, r->more.graphs, "sites");
}

/* Graph-run work by node: where the node was made, where it was launched. */
static void gt_text_gnodes(FILE *out, const struct gt_report *r)
{
    if (!r->ngnodes)
        return;
    fprintf(out, "\nGraph nodes: what CUDA Graphs ran, by where each node was created\n");
    for (size_t i = 0; i < r->ngnodes; i++) {
        const struct gt_gnode_row *g = &r->gnodes[i];
        fputs("  ", out);
        if (g->kernel[0])
            gt_put_text(out, g->kernel, 76);
        else
            fprintf(out, "%s", g->kind);
        if (!g->runs) { /* a host, empty or memory node, or one of a graph never launched */
            fprintf(out, "\n    %llu %s node%s, no GPU work\n", U(g->nodes), g->kind, g->nodes == 1 ? "" : "s");
            fputs("    graph node created\n", out);
            gt_text_site(out, "      ", &g->created);
            continue;
        }
        fprintf(out, "\n    %llu run%s of %llu %s node%s, GPU %s\n", U(g->runs), g->runs == 1 ? "" : "s", U(g->nodes),
                g->kind, g->nodes == 1 ? "" : "s", DUR(g->gpu_ns, gt_b1));
        fputs("    graph node created\n", out);
        gt_text_site(out, "      ", &g->created);
        fputs("    launched\n", out);
        gt_text_site(out, "      ", &g->launched);
    }
    gt_more(out, r->more.graph_nodes, "rows");
}

static void gt_text_xfers(FILE *out, const struct gt_report *r, int gpu)
{
    fprintf(out, "\nTransfers by kind and size (%s time)\n", gpu ? "GPU" : "host");
    if (!r->nxfer_kind) {
        fprintf(out, "  no copies or memsets\n");
        return;
    }
    for (size_t i = 0; i < r->nxfer_kind; i++) {
        const struct gt_xfer_row *x = &r->xfer_kind[i];
        fprintf(out, "  %-7s %8llu, %10s, %10s, %8.2f GB/s\n", gt_xfer_kind_names[x->kind], U(x->count),
                BYTES(x->bytes, gt_b1), DUR(x->total_ns, gt_b2), x->bandwidth_gbps);
        for (size_t j = 0; j < r->nxfer_size; j++) {
            const struct gt_xfer_row *y = &r->xfer_size[j];
            if (y->kind == x->kind)
                fprintf(out, "    %-11s %8llu, %10s, %10s, %8.2f GB/s\n", gt_xfer_band_names[y->band],
                        U(y->count), BYTES(y->bytes, gt_b1), DUR(y->total_ns, gt_b2), y->bandwidth_gbps);
        }
    }
    gt_more(out, r->more.xfer_kind + r->more.xfer_size, "rows");
}

static void gt_text_h2d(FILE *out, const struct gt_report *r)
{
    fprintf(out, "\nH2D hotspots by call site (by host time)\n");
    const struct gt_summary *s = &r->summary;
    if (s->mapped_host_allocs) {
        /* What the figures below cannot hold, said where they are read. */
        fprintf(out, "  mapped (zero-copy) host memory: %s in %llu allocation%s; kernels read it\n",
                BYTES(s->mapped_host_bytes, gt_b1), U(s->mapped_host_allocs), s->mapped_host_allocs == 1 ? "" : "s");
        fprintf(out, "  over the bus as they run, and CUPTI's kernel records do not say which\n"
                     "  kernels or how many bytes: those reads are in no figure here\n");
    }
    if (!r->nh2d) {
        fprintf(out, "  no host-to-device copy calls\n");
        return;
    }
    for (size_t i = 0; i < r->nh2d; i++) {
        const struct gt_h2d_row *h = &r->h2d[i];
        fprintf(out, "  %s in %llu cop%s, host %s, GPU %s, %.2f GB/s\n", BYTES(h->bytes, gt_b1), U(h->count),
                h->count == 1 ? "y" : "ies", DUR(h->host_ns, gt_b2), h->gpu_ns ? DUR(h->gpu_ns, gt_b3) : "-",
                h->bandwidth_gbps);
        if (h->mapped_bytes)
            fprintf(out, "    pageable %s, pinned %s, mapped %s; %llu blocking, %llu async\n",
                    BYTES(h->pageable_bytes, gt_b1), BYTES(h->pinned_bytes, gt_b2), BYTES(h->mapped_bytes, gt_b3),
                    U(h->blocking), U(h->async));
        else
            fprintf(out, "    pageable %s, pinned %s; %llu blocking, %llu async\n", BYTES(h->pageable_bytes, gt_b1),
                    BYTES(h->pinned_bytes, gt_b2), U(h->blocking), U(h->async));
        if (h->async_pageable)
            fprintf(out, "    ! %llu async copies from pageable memory: they block anyway\n", U(h->async_pageable));
        if (h->small_storm)
            fprintf(out, "    ! storm of small copies: batch them into fewer, larger ones\n");
        gt_text_site(out, "    ", &h->site);
    }
    gt_more(out, r->more.h2d, "sites");
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
        fprintf(out, "  %-16s %6llu call%s, %s blocked\n", s->kind, U(s->count), s->count == 1 ? "" : "s",
                DUR(s->blocked_ns, gt_b1));
        gt_text_site(out, "    ", &s->site);
    }
    gt_more(out, r->more.syncs, "rows");
}

static void gt_text_devices(FILE *out, const struct gt_report *r)
{
    if (!r->nstreams && !r->ndevices)
        return;
    fprintf(out, "\nStreams and devices\n");
    for (size_t i = 0; i < r->nstreams; i++) {
        const struct gt_stream_row *s = &r->streams[i];
        fprintf(out, "  device %lld stream %-6lld %8llu ops, busy %s (%.1f%% of span)\n", (long long)s->device,
                (long long)s->stream, U(s->ops), DUR(s->busy_ns, gt_b1), s->busy_pct);
    }
    gt_more(out, r->more.streams, "streams");
    for (size_t i = 0; i < r->ndevices; i++) {
        const struct gt_device_row *d = &r->devices[i];
        fprintf(out, "  device %lld: busy %s, idle %.1f%% of span\n", (long long)d->device, DUR(d->busy_ns, gt_b1),
                d->idle_pct);
        fprintf(out, "    compute %s, copies %s, both at once %s (%.1f%% of copy time)\n",
                DUR(d->compute_ns, gt_b1), DUR(d->copy_ns, gt_b2), DUR(d->overlap_ns, gt_b3), d->overlap_pct);
        gt_text_causes(out, "    ", d->idle_by_cause);
    }
}

static void gt_text_api(FILE *out, const struct gt_report *r)
{
    fprintf(out, "\nCUDA API summary (host time)\n");
    fprintf(out, "  %-26s %8s %10s %10s %10s %7s\n", "function", "calls", "total", "mean", "max", "errors");
    for (size_t i = 0; i < r->napi; i++) {
        const struct gt_api_row *a = &r->api[i];
        fputs("  ", out);
        char name[64];
        snprintf(name, sizeof(name), "%-26s", a->name);
        gt_put_text(out, name, 26);
        fprintf(out, " %8llu %10s %10s %10s %7llu\n", U(a->count), DUR(a->total_ns, gt_b1), DUR(a->mean_ns, gt_b2),
                DUR(a->max_ns, gt_b3), U(a->errors));
    }
    gt_more(out, r->more.api, "functions");
    if (r->summary.tracer_startup_ns)
        fprintf(out, "  and the tracer's own start-up: %s on the thread of\n"
                     "  the first CUDA call, before that call's time started (in no figure above)\n",
                DUR(r->summary.tracer_startup_ns, gt_b1));
}

/* Only when the trace has top-level NVTX ranges. */
static void gt_text_phases(FILE *out, const struct gt_report *r)
{
    if (!r->nphases)
        return;
    fprintf(out, "\nBy phase (top-level NVTX ranges, by name)\n");
    for (size_t i = 0; i < r->nphases; i++) {
        const struct gt_phase_row *p = &r->phases[i];
        char name[300];
        snprintf(name, sizeof(name), "%-24s", p->name);
        fputs("  ", out);
        gt_put_text(out, name, 24);
        fprintf(out, " %llu range%s, wall %s: GPU busy %s, idle %.1f%%\n", U(p->ranges), p->ranges == 1 ? "" : "s",
                DUR(p->wall_ns, gt_b1), DUR(p->gpu_busy_ns, gt_b2), p->gpu_idle_pct);
        fprintf(out, "    launches %llu (host %s), H2D %s, syncs %llu (%s)\n", U(p->launches),
                DUR(p->launch_host_ns, gt_b1), BYTES(p->h2d_bytes, gt_b2), U(p->syncs), DUR(p->sync_ns, gt_b3));
        if (i < r->cats.nphases)
            gt_cats_text_line(out, "    ", &r->cats, &r->cats.phase_ns[i * r->cats.n],
                              &r->cats.phase_count[i * r->cats.n]);
    }
    gt_more(out, r->more.phases, "phases");
}

/* What a step's figure is, as the text says it. */
static const char *gt_step_what_text(int what)
{
    if (what < GT_CAUSES)
        return gt_cause_text[what];
    return what == GT_STEP_SYNCS ? "host time in syncs" : "host time in copy calls";
}

/* Only when the trace has step ranges. */
static void gt_text_steps(FILE *out, const struct gt_report *r)
{
    const struct gt_steps *st = &r->steps;
    if (!st->count)
        return;
    /* names come from the program: printed as gt_put_text makes them safe */
    fputs(st->rule[0] ? "\nSteps (NVTX ranges named " : "\nSteps (NVTX ranges named like ", out);
    gt_put_text(out, st->rule[0] ? st->rule : st->first_name, 40);
    fprintf(out, ": %llu)\n", U(st->count));
    fprintf(out, "  step time p50 %s, p99 %s, max %s (mean %s)\n", DUR(st->p50_ns, gt_b1), DUR(st->p99_ns, gt_b2),
            DUR(st->max_ns, gt_b3), DUR(st->mean_ns, gt_b4));
    if (!st->nslowest)
        return;
    fprintf(out, "  slowest steps, and what each spent more time on than the median step:\n");
    for (size_t i = 0; i < st->nslowest; i++) {
        const struct gt_step_row *x = &st->slowest[i];
        char name[300];
        snprintf(name, sizeof(name), "%s", x->name);
        fprintf(out, "  step %lld (", (long long)x->number);
        gt_put_text(out, name, 40);
        fprintf(out, ") at +%s, thread %lld: %s", DUR(x->offset_ns, gt_b1), (long long)x->tid, DUR(x->dur_ns, gt_b2));
        if (st->p50_ns)
            fprintf(out, ", %.1fx the median", (double)x->dur_ns / (double)st->p50_ns);
        fprintf(out, "\n    GPU busy %s, idle %s; syncs %llu (%s); copies %llu (%s, %s)\n", DUR(x->gpu_busy_ns, gt_b1),
                DUR(x->gpu_idle_ns, gt_b2), U(x->syncs), DUR(x->sync_ns, gt_b3), U(x->copies), DUR(x->copy_ns, gt_b4),
                BYTES(x->copy_bytes, gt_b5));
        if (i < r->cats.nsteps)
            gt_cats_text_line(out, "    ", &r->cats, &r->cats.step_ns[i * r->cats.n], &r->cats.step_count[i * r->cats.n]);
        for (int k = 0; k < x->nover; k++) {
            const struct gt_step_over *o = &x->over[k];
            fprintf(out, "    +%s %s%s (%s, median step %s)\n", DUR(o->ns - o->median_ns, gt_b1),
                    o->what < GT_CAUSES ? "GPU idle, " : "", gt_step_what_text(o->what), DUR(o->ns, gt_b2),
                    DUR(o->median_ns, gt_b3));
            if (o->has_site)
                gt_text_site(out, "      ", &o->site);
        }
    }
}

static void gt_text_errors(FILE *out, const struct gt_report *r)
{
    if (!r->nerrors)
        return;
    fprintf(out, "\nErrors\n");
    for (size_t i = 0; i < r->nerrors; i++) {
        const struct gt_error_row *e = &r->errors[i];
        char line[160];
        snprintf(line, sizeof(line), "%8llu  %s: %s", U(e->count), e->api, e->error);
        fputs("  ", out);
        gt_put_text(out, line, 76);
        fputc('\n', out);
    }
    gt_more(out, r->more.errors, "rows");
}

static void gt_text_one(FILE *out, const struct gt_report_item *v, const struct gt_analyze_opts *o)
{
    const struct gt_report *r = &v->r;
    fputs("== ", out);
    gt_put_text(out, v->path, 60);
    fprintf(out, " (pid %lld)\n", v->pid);
    for (int i = 0; i < r->nnotes; i++)
        gt_wrap(out, "", "! ", r->notes[i], 78);
    gt_text_summary(out, &r->summary);
    gt_text_findings(out, r);
    gt_text_phases(out, r);
    gt_text_steps(out, r);
    gt_text_gaps(out, r, o);
    gt_text_idle_sites(out, r);
    gt_text_host_stacks(out, r);
    int gpu = r->summary.gpu_times;
    gt_cats_text(out, &r->cats, gpu);
    gt_text_kernels(out, r, gpu);
    gt_text_launch(out, r, gpu);
    gt_text_graphs(out, r);
    gt_text_gnodes(out, r);
    gt_text_xfers(out, r, gpu);
    gt_text_h2d(out, r);
    gt_text_syncs(out, r);
    gt_text_devices(out, r);
    gt_text_api(out, r);
    gt_text_errors(out, r);
}

void gt_report_text(FILE *out, const struct gt_report_item *v, size_t n, const struct gt_analyze_opts *o)
{
    for (size_t i = 0; i < n; i++) {
        if (i)
            fputc('\n', out);
        gt_text_one(out, &v[i], o);
    }
    if (n > 1) {
        struct gt_summary total = gt_report_items_total(v, n);
        fprintf(out, "\n== totals over %zu processes\n", n);
        gt_text_summary(out, &total);
    }
}

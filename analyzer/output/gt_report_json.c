/* gt_report_json.c: the report as one JSON document (docs/report.md,
 * "JSON": every key is documented there, and tests/oracle.py checks every
 * value). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/gt_analyze.h"
#include "analysis/gt_site.h"
#include "base/gt_fmt.h"
#include "output/gt_rank_out.h"
#include "output/gt_report_cats.h"
#include "output/gt_report_out.h"
#include "output/gt_report_samples.h"

#define U(x) ((unsigned long long)(x))

static void gt_json_causes(FILE *out, const uint64_t *idle)
{
    fputc('{', out);
    for (int c = 0; c < GT_CAUSES; c++)
        fprintf(out, "%s\"%s\":%llu", c ? "," : "", gt_cause_names[c], U(idle[c]));
    fputc('}', out);
}

static void gt_json_summary(FILE *out, const struct gt_summary *s)
{
    fprintf(out,
            "{\"span_ns\":%llu,\"gpu_times\":%s,\"calls\":%llu,\"failed_calls\":%llu,\"launches\":%llu,"
            "\"captured_calls\":%llu,\"graph_launches\":%llu,\"launch_bound\":%llu,\"launch_bound_pct\":%.6f,"
            "\"launch_host_ns\":%llu,\"launch_threads\":%llu,\"launch_host_pct\":%.6f,\"kernel_ns\":%llu,"
            "\"devices\":%llu,\"device_ns\":%llu,\"busy_ns\":%llu,\"idle_ns\":%llu,\"idle_pct\":%.6f,"
            "\"idle_by_cause_ns\":",
            U(s->span_ns), s->gpu_times ? "true" : "false", U(s->calls), U(s->failed_calls), U(s->launches),
            U(s->captured_calls), U(s->graph_launches), U(s->launch_bound), s->launch_bound_pct,
            U(s->launch_host_ns), U(s->launch_threads), s->launch_host_pct, U(s->kernel_ns), U(s->devices),
            U(s->device_ns), U(s->busy_ns), U(s->idle_ns), s->idle_pct);
    gt_json_causes(out, s->idle_by_cause);
    fprintf(out, ",\"sync_ns\":%llu,\"sync_pct\":%.6f,\"h2d_bytes\":%llu,\"pageable_h2d_bytes\":%llu,"
                 "\"mapped_host_allocs\":%llu,\"mapped_host_bytes\":%llu,\"tracer_startup_ns\":%llu,\"module_ns\":%llu,"
                 "\"module_jit\":%llu}",
            U(s->sync_ns), s->sync_pct, U(s->h2d_bytes), U(s->pageable_h2d_bytes), U(s->mapped_host_allocs),
            U(s->mapped_host_bytes), U(s->tracer_startup_ns), U(s->module_ns), U(s->module_jit));
}

/* Opens a row of an array: the separator, then {"pid":N */
static void gt_row(FILE *out, int *first, long long pid)
{
    fprintf(out, "%s{\"pid\":%lld", *first ? "" : ",", pid);
    *first = 0;
}

static void gt_json_launch_row(FILE *out, const struct gt_launch_row *k, int by_site)
{
    if (by_site) {
        fputs(",\"site\":", out);
        gt_site_put_json(out, &k->site);
    } else {
        fputs(",\"kernel\":", out);
        gt_put_json_string(out, k->kernel);
    }
    fprintf(out,
            ",\"count\":%llu,\"api_total_ns\":%llu,\"api_mean_ns\":%llu,\"api_p50_ns\":%llu,\"api_p99_ns\":%llu,"
            "\"api_max_ns\":%llu,\"queue_mean_ns\":%llu,\"gpu_total_ns\":%llu,\"gpu_mean_ns\":%llu,"
            "\"launch_bound\":%llu",
            U(k->count), U(k->api_total_ns), U(k->api_mean_ns), U(k->api_p50_ns), U(k->api_p99_ns),
            U(k->api_max_ns), U(k->queue_mean_ns), U(k->gpu_total_ns), U(k->gpu_mean_ns), U(k->launch_bound));
    if (!by_site)
        fprintf(out, ",\"first_api_ns\":%llu", U(k->first_api_ns));
    fputc('}', out);
}

/* A finding ranked among every process's: by cost, then trace order. */
struct gt_ranked {
    const struct gt_finding *f;
    long long pid;
    size_t order;
};

static int gt_ranked_cmp(const void *a, const void *b)
{
    const struct gt_ranked *x = a, *y = b;
    if (x->f->cost_ns != y->f->cost_ns)
        return x->f->cost_ns > y->f->cost_ns ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

static void gt_json_findings(FILE *out, const struct gt_report_item *v, size_t n)
{
    size_t total = 0;
    for (size_t t = 0; t < n; t++)
        total += v[t].r.nfindings;
    struct gt_ranked *all = calloc(total + 1, sizeof(*all));
    size_t k = 0;
    for (size_t t = 0; all && t < n; t++)
        for (size_t i = 0; i < v[t].r.nfindings; i++, k++)
            all[k] = (struct gt_ranked){&v[t].r.findings[i], v[t].pid, k};
    if (all && k > 1)
        qsort(all, k, sizeof(*all), gt_ranked_cmp);
    fputs(",\"findings\":[", out);
    for (size_t i = 0; all && i < k; i++) {
        const struct gt_finding *f = all[i].f;
        fprintf(out, "%s{\"pid\":%lld,\"kind\":\"%s\",\"cost_ns\":%llu,\"cost_pct\":%.6f,\"title\":", i ? "," : "",
                all[i].pid, f->kind, U(f->cost_ns), f->cost_pct);
        gt_put_json_string(out, f->title);
        fputs(",\"site\":", out);
        if (f->has_site)
            gt_site_put_json(out, &f->site);
        else
            fputs("null", out);
        fputs(",\"advice\":", out);
        gt_put_json_string(out, f->advice);
        fputc('}', out);
    }
    fputs("],\"advice\":[", out);
    for (size_t i = 0; all && i < k; i++) {
        if (i)
            fputc(',', out);
        gt_put_json_string(out, all[i].f->advice);
    }
    fputc(']', out);
    free(all);
}

static void gt_json_site_or_null(FILE *out, int has, const struct gt_site *s)
{
    if (has)
        gt_site_put_json(out, s);
    else
        fputs("null", out);
}

static const char *gt_step_what_name(int what)
{
    return what < GT_CAUSES ? gt_cause_names[what] : what == GT_STEP_SYNCS ? "syncs" : "copies";
}

/* One process's steps: a row when it has any (docs/report.md, Steps). */
static void gt_json_steps(FILE *out, int *first, long long pid, const struct gt_steps *st,
                          const struct gt_categories *c)
{
    if (!st->count)
        return;
    gt_row(out, first, pid);
    fputs(",\"rule\":", out);
    if (st->rule[0])
        gt_put_json_string(out, st->rule);
    else
        fputs("null", out);
    fprintf(out, ",\"count\":%llu,\"p50_ns\":%llu,\"p99_ns\":%llu,\"max_ns\":%llu,\"mean_ns\":%llu,\"median\":{",
            U(st->count), U(st->p50_ns), U(st->p99_ns), U(st->max_ns), U(st->mean_ns));
    for (int w = 0; w < GT_STEP_WHATS; w++)
        fprintf(out, "%s\"%s\":%llu", w ? "," : "", gt_step_what_name(w), U(st->median[w]));
    fputs("},\"slowest\":[", out);
    for (size_t i = 0; i < st->nslowest; i++) {
        const struct gt_step_row *x = &st->slowest[i];
        fprintf(out, "%s{\"number\":%lld,\"name\":", i ? "," : "", (long long)x->number);
        gt_put_json_string(out, x->name);
        fprintf(out, ",\"tid\":%lld,\"start_ns\":%llu,\"offset_ns\":%llu,\"dur_ns\":%llu,\"gpu_busy_ns\":%llu,"
                     "\"gpu_idle_ns\":%llu,\"idle_by_cause_ns\":",
                (long long)x->tid, U(x->start_ns), U(x->offset_ns), U(x->dur_ns), U(x->gpu_busy_ns),
                U(x->gpu_idle_ns));
        gt_json_causes(out, x->idle_by_cause);
        fprintf(out, ",\"syncs\":%llu,\"sync_ns\":%llu,\"copies\":%llu,\"copy_ns\":%llu,\"copy_bytes\":%llu,"
                     "\"over_median\":[",
                U(x->syncs), U(x->sync_ns), U(x->copies), U(x->copy_ns), U(x->copy_bytes));
        for (int k = 0; k < x->nover; k++) {
            const struct gt_step_over *o = &x->over[k];
            fprintf(out, "%s{\"what\":\"%s\",\"ns\":%llu,\"median_ns\":%llu,\"over_ns\":%llu,\"site\":", k ? "," : "",
                    gt_step_what_name(o->what), U(o->ns), U(o->median_ns), U(o->ns - o->median_ns));
            gt_json_site_or_null(out, o->has_site, &o->site);
            fputc('}', out);
        }
        fputs("],\"categories\":", out);
        if (i < c->nsteps)
            gt_cats_json(out, c, &c->step_ns[i * c->n], &c->step_count[i * c->n]);
        else
            fputs("[]", out);
        fputc('}', out);
    }
    fputs("]}", out);
}

static void gt_json_tables(FILE *out, const struct gt_report_item *v, size_t n)
{
    int first = 1;
    fputs(",\"idle_gaps\":[", out);
    for (size_t t = 0; t < n; t++)
        for (size_t i = 0; i < v[t].r.ngaps; i++) {
            const struct gt_gap *g = &v[t].r.gaps[i];
            gt_row(out, &first, v[t].pid);
            fprintf(out, ",\"device\":%d,\"start_ns\":%llu,\"offset_ns\":%llu,\"dur_ns\":%llu,\"cause\":\"%s\","
                         "\"before\":", g->device, U(g->start_ns), U(g->offset_ns), U(g->dur_ns),
                    gt_cause_names[g->cause]);
            gt_json_site_or_null(out, g->has_before, &g->before);
            fputs(",\"before_api\":", out);
            gt_put_json_string(out, g->has_before && g->before_api[0] ? g->before_api : NULL);
            fputs(",\"after\":", out);
            gt_json_site_or_null(out, g->has_after, &g->after);
            fputs(",\"after_api\":", out);
            gt_put_json_string(out, g->has_after && g->after_api[0] ? g->after_api : NULL);
            fputs(",\"spent\":", out);
            gt_json_site_or_null(out, g->has_spent, &g->spent);
            fputs(",\"spent_api\":", out);
            gt_put_json_string(out, g->has_spent && g->spent_api[0] ? g->spent_api : NULL);
            gt_json_gap_host(out, &v[t].r, g);
            fputc('}', out);
        }
    fputs("],\"idle_by_site\":[", out);
    first = 1;
    for (size_t t = 0; t < n; t++)
        for (size_t i = 0; i < v[t].r.nidle_sites; i++) {
            const struct gt_idle_site *x = &v[t].r.idle_sites[i];
            gt_row(out, &first, v[t].pid);
            fputs(",\"site\":", out);
            gt_site_put_json(out, &x->site);
            fprintf(out, ",\"idle_ns\":%llu,\"gaps\":%llu}", U(x->idle_ns), U(x->gaps));
        }
    fputs("],\"categories\":[", out);
    first = 1;
    for (size_t t = 0; t < n; t++) {
        char lead[48];
        snprintf(lead, sizeof(lead), "\"pid\":%lld,", v[t].pid);
        gt_cats_json_items(out, &first, lead, &v[t].r.cats, v[t].r.cats.gpu_ns, v[t].r.cats.count);
    }
    fputs("],\"kernels\":[", out);
    first = 1;
    for (size_t t = 0; t < n; t++)
        for (size_t i = 0; i < v[t].r.nkernels; i++) {
            const struct gt_kernel_row *k = &v[t].r.kernels[i];
            gt_row(out, &first, v[t].pid);
            fputs(",\"name\":", out);
            gt_put_json_string(out, k->name);
            fprintf(out, ",\"count\":%llu,\"graph_count\":%llu,\"total_ns\":%llu,\"mean_ns\":%llu,\"median_ns\":%llu,"
                         "\"min_ns\":%llu,\"max_ns\":%llu,\"stddev_ns\":%.3f,\"share_pct\":%.6f}",
                    U(k->count), U(k->graph_count), U(k->total_ns), U(k->mean_ns), U(k->median_ns), U(k->min_ns),
                    U(k->max_ns), k->stddev_ns, k->share_pct);
        }
    fputs("],\"launch_overhead\":{\"kernels\":[", out);
    first = 1;
    for (size_t t = 0; t < n; t++)
        for (size_t i = 0; i < v[t].r.nlaunch_kernels; i++) {
            gt_row(out, &first, v[t].pid);
            gt_json_launch_row(out, &v[t].r.launch_kernels[i], 0);
        }
    fputs("],\"sites\":[", out);
    first = 1;
    for (size_t t = 0; t < n; t++)
        for (size_t i = 0; i < v[t].r.nlaunch_sites; i++) {
            gt_row(out, &first, v[t].pid);
            gt_json_launch_row(out, &v[t].r.launch_sites[i], 1);
        }
    fputs("]},\"graph_launches\":[", out);
    first = 1;
    for (size_t t = 0; t < n; t++)
        for (size_t i = 0; i < v[t].r.ngraphs; i++) {
            const struct gt_graph_row *g = &v[t].r.graphs[i];
            gt_row(out, &first, v[t].pid);
            fputs(",\"site\":", out);
            gt_site_put_json(out, &g->site);
            fprintf(out, ",\"count\":%llu,\"api_total_ns\":%llu,\"ops\":%llu,\"kernels\":%llu,\"gpu_ns\":%llu}",
                    U(g->count), U(g->api_total_ns), U(g->ops), U(g->kernels), U(g->gpu_ns));
        }
    fputs("],\"graph_nodes\":[", out);
    first = 1;
    for (size_t t = 0; t < n; t++)
        for (size_t i = 0; i < v[t].r.ngnodes; i++) {
            const struct gt_gnode_row *g = &v[t].r.gnodes[i];
            gt_row(out, &first, v[t].pid);
            fprintf(out, ",\"kind\":\"%s\",\"kernel\":", g->kind);
            if (g->kernel[0])
                gt_put_json_string(out, g->kernel);
            else
                fputs("null", out);
            fputs(",\"created_at\":", out);
            gt_site_put_json(out, &g->created);
            fputs(",\"launched_at\":", out);
            gt_site_put_json(out, &g->launched);
            fprintf(out, ",\"nodes\":%llu,\"runs\":%llu,\"gpu_ns\":%llu}", U(g->nodes), U(g->runs), U(g->gpu_ns));
        }
    fputs("],\"transfers\":{\"by_kind\":[", out);
    first = 1;
    for (size_t t = 0; t < n; t++)
        for (size_t i = 0; i < v[t].r.nxfer_kind; i++) {
            const struct gt_xfer_row *x = &v[t].r.xfer_kind[i];
            gt_row(out, &first, v[t].pid);
            fprintf(out, ",\"kind\":\"%s\",\"count\":%llu,\"bytes\":%llu,\"total_ns\":%llu,\"bandwidth_gbps\":%.6f}",
                    gt_xfer_kind_names[x->kind], U(x->count), U(x->bytes), U(x->total_ns), x->bandwidth_gbps);
        }
    fputs("],\"by_size\":[", out);
    first = 1;
    for (size_t t = 0; t < n; t++)
        for (size_t i = 0; i < v[t].r.nxfer_size; i++) {
            const struct gt_xfer_row *x = &v[t].r.xfer_size[i];
            gt_row(out, &first, v[t].pid);
            fprintf(out, ",\"kind\":\"%s\",\"band\":\"%s\",\"count\":%llu,\"bytes\":%llu,\"total_ns\":%llu,"
                         "\"bandwidth_gbps\":%.6f}",
                    gt_xfer_kind_names[x->kind], gt_xfer_band_names[x->band], U(x->count), U(x->bytes),
                    U(x->total_ns), x->bandwidth_gbps);
        }
    fputs("]},\"h2d_hotspots\":[", out);
    first = 1;
    for (size_t t = 0; t < n; t++)
        for (size_t i = 0; i < v[t].r.nh2d; i++) {
            const struct gt_h2d_row *h = &v[t].r.h2d[i];
            gt_row(out, &first, v[t].pid);
            fputs(",\"site\":", out);
            gt_site_put_json(out, &h->site);
            fprintf(out,
                    ",\"bytes\":%llu,\"count\":%llu,\"host_ns\":%llu,\"gpu_ns\":%llu,\"pageable_bytes\":%llu,"
                    "\"pinned_bytes\":%llu,\"pageable_calls\":%llu,\"pageable_host_ns\":%llu,\"blocking\":%llu,"
                    "\"async\":%llu,\"async_pageable\":%llu,\"bandwidth_gbps\":%.6f,\"small_copy_storm\":%s,"
                    "\"mapped_bytes\":%llu}",
                    U(h->bytes), U(h->count), U(h->host_ns), U(h->gpu_ns), U(h->pageable_bytes), U(h->pinned_bytes),
                    U(h->pageable_calls), U(h->pageable_host_ns), U(h->blocking), U(h->async),
                    U(h->async_pageable), h->bandwidth_gbps, h->small_storm ? "true" : "false", U(h->mapped_bytes));
        }
    fputs("],\"syncs\":[", out);
    first = 1;
    for (size_t t = 0; t < n; t++)
        for (size_t i = 0; i < v[t].r.nsyncs; i++) {
            const struct gt_sync_row *s = &v[t].r.syncs[i];
            gt_row(out, &first, v[t].pid);
            fprintf(out, ",\"kind\":\"%s\",\"count\":%llu,\"dur_ns\":%llu,\"site\":", s->kind, U(s->count),
                    U(s->blocked_ns));
            gt_site_put_json(out, &s->site);
            fputc('}', out);
        }
    fputs("],\"streams\":[", out);
    first = 1;
    for (size_t t = 0; t < n; t++)
        for (size_t i = 0; i < v[t].r.nstreams; i++) {
            const struct gt_stream_row *s = &v[t].r.streams[i];
            gt_row(out, &first, v[t].pid);
            fprintf(out, ",\"device\":%lld,\"stream\":%lld,\"ops\":%llu,\"busy_ns\":%llu,\"busy_pct\":%.6f}",
                    (long long)s->device, (long long)s->stream, U(s->ops), U(s->busy_ns), s->busy_pct);
        }
    fputs("],\"devices\":[", out);
    first = 1;
    for (size_t t = 0; t < n; t++)
        for (size_t i = 0; i < v[t].r.ndevices; i++) {
            const struct gt_device_row *d = &v[t].r.devices[i];
            gt_row(out, &first, v[t].pid);
            fprintf(out, ",\"device\":%lld,\"busy_ns\":%llu,\"idle_ns\":%llu,\"idle_pct\":%.6f,\"idle_by_cause_ns\":",
                    (long long)d->device, U(d->busy_ns), U(d->idle_ns), d->idle_pct);
            gt_json_causes(out, d->idle_by_cause);
            fprintf(out, ",\"compute_ns\":%llu,\"copy_ns\":%llu,\"overlap_ns\":%llu,\"overlap_pct\":%.6f}",
                    U(d->compute_ns), U(d->copy_ns), U(d->overlap_ns), d->overlap_pct);
        }
    fputs("],\"api\":[", out);
    first = 1;
    for (size_t t = 0; t < n; t++)
        for (size_t i = 0; i < v[t].r.napi; i++) {
            const struct gt_api_row *a = &v[t].r.api[i];
            gt_row(out, &first, v[t].pid);
            fputs(",\"name\":", out);
            gt_put_json_string(out, a->name);
            fprintf(out, ",\"count\":%llu,\"total_ns\":%llu,\"mean_ns\":%llu,\"max_ns\":%llu,\"errors\":%llu}",
                    U(a->count), U(a->total_ns), U(a->mean_ns), U(a->max_ns), U(a->errors));
        }
    fputs("],\"phases\":[", out);
    first = 1;
    for (size_t t = 0; t < n; t++)
        for (size_t i = 0; i < v[t].r.nphases; i++) {
            const struct gt_phase_row *p = &v[t].r.phases[i];
            gt_row(out, &first, v[t].pid);
            fputs(",\"name\":", out);
            gt_put_json_string(out, p->name);
            fprintf(out, ",\"ranges\":%llu,\"wall_ns\":%llu,\"gpu_busy_ns\":%llu,\"gpu_idle_ns\":%llu,"
                         "\"gpu_idle_pct\":%.6f,\"launches\":%llu,\"launch_host_ns\":%llu,\"h2d_bytes\":%llu,"
                         "\"syncs\":%llu,\"sync_ns\":%llu,\"categories\":",
                    U(p->ranges), U(p->wall_ns), U(p->gpu_busy_ns), U(p->gpu_idle_ns), p->gpu_idle_pct,
                    U(p->launches), U(p->launch_host_ns), U(p->h2d_bytes), U(p->syncs), U(p->sync_ns));
            const struct gt_categories *c = &v[t].r.cats;
            if (i < c->nphases)
                gt_cats_json(out, c, &c->phase_ns[i * c->n], &c->phase_count[i * c->n]);
            else
                fputs("[]", out);
            fputc('}', out);
        }
    fputs("],\"steps\":[", out);
    first = 1;
    for (size_t t = 0; t < n; t++)
        gt_json_steps(out, &first, v[t].pid, &v[t].r.steps, &v[t].r.cats);
    fputs("],\"errors\":[", out);
    first = 1;
    for (size_t t = 0; t < n; t++)
        for (size_t i = 0; i < v[t].r.nerrors; i++) {
            const struct gt_error_row *e = &v[t].r.errors[i];
            gt_row(out, &first, v[t].pid);
            fputs(",\"name\":", out);
            gt_put_json_string(out, e->api);
            fputs(",\"error\":", out);
            gt_put_json_string(out, e->error);
            fprintf(out, ",\"count\":%llu}", U(e->count));
        }
    fputc(']', out);
}

static void gt_json_truncated(FILE *out, const struct gt_report_item *v, size_t n)
{
    struct gt_more m = {0};
    for (size_t t = 0; t < n; t++) {
        const struct gt_more *x = &v[t].r.more;
        m.findings += x->findings;
        m.gaps += x->gaps;
        m.idle_sites += x->idle_sites;
        m.kernels += x->kernels;
        m.launch_kernels += x->launch_kernels;
        m.launch_sites += x->launch_sites;
        m.graphs += x->graphs;
        m.xfer_kind += x->xfer_kind;
        m.xfer_size += x->xfer_size;
        m.h2d += x->h2d;
        m.syncs += x->syncs;
        m.streams += x->streams;
        m.api += x->api;
        m.errors += x->errors;
        m.phases += x->phases;
        m.graph_nodes += x->graph_nodes;
        m.host_stacks += x->host_stacks;
    }
    fprintf(out,
            ",\"truncated\":{\"findings\":%zu,\"idle_gaps\":%zu,\"idle_by_site\":%zu,\"kernels\":%zu,"
            "\"launch_overhead.kernels\":%zu,\"launch_overhead.sites\":%zu,\"graph_launches\":%zu,\"transfers.by_kind\":%zu,"
            "\"transfers.by_size\":%zu,\"h2d_hotspots\":%zu,\"syncs\":%zu,\"streams\":%zu,\"api\":%zu,"
            "\"errors\":%zu,\"phases\":%zu,\"graph_nodes\":%zu,\"idle_by_host_stack\":%zu}",
            m.findings, m.gaps, m.idle_sites, m.kernels, m.launch_kernels, m.launch_sites, m.graphs, m.xfer_kind,
            m.xfer_size, m.h2d, m.syncs, m.streams, m.api, m.errors, m.phases, m.graph_nodes, m.host_stacks);
}

void gt_report_json(FILE *out, const struct gt_report_item *v, size_t n)
{
    gt_report_json_ranks(out, v, n, NULL, 0);
}

void gt_report_json_ranks(FILE *out, const struct gt_report_item *v, size_t n, const struct gt_ranks *g, size_t top)
{
    fputs("{\"report_version\":2,\"traces\":[", out);
    for (size_t t = 0; t < n; t++) {
        fprintf(out, "%s{\"trace\":", t ? "," : "");
        gt_put_json_string(out, v[t].path);
        fprintf(out, ",\"pid\":%lld,\"host\":", v[t].pid);
        gt_put_json_string(out, v[t].host);
        fprintf(out, ",\"schema_version\":%d,\"partial\":%s,\"notes\":[", v[t].schema_version,
                v[t].r.partial ? "true" : "false");
        for (int i = 0; i < v[t].r.nnotes; i++) {
            if (i)
                fputc(',', out);
            gt_put_json_string(out, v[t].r.notes[i]);
        }
        fputs("],\"window\":", out);
        if (v[t].r.windowed)
            fprintf(out, "{\"from_ns\":%llu,\"to_ns\":%llu,\"intervals\":%zu}", U(v[t].r.win_from),
                    U(v[t].r.win_to > INT64_MAX ? INT64_MAX : v[t].r.win_to), v[t].r.win_intervals);
        else
            fputs("null", out);
        fputc('}', out);
    }
    struct gt_summary total = gt_report_items_total(v, n);
    fputs("],\"summary\":", out);
    gt_json_summary(out, &total);
    gt_json_findings(out, v, n);
    gt_json_tables(out, v, n);
    gt_json_host_stacks(out, v, n);
    gt_json_truncated(out, v, n);
    fputs(",\"processes\":[", out);
    for (size_t t = 0; t < n; t++) {
        fprintf(out, "%s{\"trace\":", t ? "," : "");
        gt_put_json_string(out, v[t].path);
        fprintf(out, ",\"pid\":%lld,\"summary\":", v[t].pid);
        gt_json_summary(out, &v[t].r.summary);
        fputc('}', out);
    }
    fputc(']', out);
    if (g) {
        fputs(",\"ranks\":", out);
        gt_ranks_json(out, g, top);
    }
    fputs("}\n", out);
}

/* gt_analyze_rows.c: a report's tables as rows, from what the passes of
 * gt_analyze.c summed (the timeline's devices, streams, gaps and idle
 * sites; launch overhead), its first line's window note, --top's cut, and
 * the report's names of causes and its freeing. Called by gt_analyze.c
 * only, calls nothing of it back. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/gt_pass.h"
#include "base/gt_fmt.h"

const char *const gt_cause_names[GT_CAUSES] = {
    "sync", "copy", "memset", "launch", "graph_launch", "alloc", "free", "event", "stream", "module", "other_cuda",
    "host", "startup", "teardown",
};

const char *const gt_cause_text[GT_CAUSES] = {
    "host blocked in a sync", "host inside a copy call", "host inside a memset call", "host busy launching",
    "host launching graphs", "host inside allocations", "host inside frees", "host inside event calls",
    "host inside stream calls", "host loading modules / JIT", "host inside other CUDA calls", "host outside CUDA",
    "start-up, before the first GPU work", "tear-down, after the last GPU work",
};

double gt_pct_of(uint64_t part, uint64_t whole)
{
    return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static const char *gt_api_text(struct gt_pass *p, uint16_t api)
{
    return api == GT_OP_NO_API ? "" : gt_scan_api_name(p->scan, api);
}

static int gt_gap_by_dur(const void *a, const void *b)
{
    const struct gt_gap *x = a, *y = b;
    if (x->dur_ns != y->dur_ns)
        return x->dur_ns > y->dur_ns ? -1 : 1;
    return x->start_ns < y->start_ns ? -1 : x->start_ns > y->start_ns;
}

static int gt_idle_by_time(const void *a, const void *b)
{
    const struct gt_idle_site *x = a, *y = b;
    if (x->idle_ns != y->idle_ns)
        return x->idle_ns > y->idle_ns ? -1 : 1;
    return strcmp(x->site.text, y->site.text);
}

static int gt_stream_cmp(const void *a, const void *b)
{
    const struct gt_stream_row *x = a, *y = b;
    if (x->device != y->device)
        return x->device < y->device ? -1 : 1;
    return x->stream < y->stream ? -1 : x->stream > y->stream;
}

int gt_rows_timeline(struct gt_pass *p, const struct gt_tl_result *tl)
{
    struct gt_report *r = p->r;
    struct gt_summary *s = &r->summary;
    uint64_t span = s->span_ns;
    s->devices = tl->ndevtime;
    s->device_ns = span * tl->ndevtime;
    s->busy_ns = tl->busy_ns;
    s->idle_ns = s->device_ns - (tl->busy_ns < s->device_ns ? tl->busy_ns : s->device_ns);
    s->idle_pct = gt_pct_of(s->idle_ns, s->device_ns);
    memcpy(s->idle_by_cause, tl->idle_by_cause, sizeof(s->idle_by_cause));

    if (tl->ndevices && !(r->devices = calloc(tl->ndevices, sizeof(*r->devices))))
        return -1;
    for (size_t i = 0; i < tl->ndevices; i++) {
        struct gt_device_row *d = &r->devices[r->ndevices++];
        const struct gt_tl_device *x = &tl->devices[i];
        d->device = x->device;
        d->busy_ns = x->busy_ns;
        d->idle_ns = span - (x->busy_ns < span ? x->busy_ns : span);
        d->idle_pct = gt_pct_of(d->idle_ns, span);
        memcpy(d->idle_by_cause, x->idle_by_cause, sizeof(d->idle_by_cause));
        d->compute_ns = x->compute_ns;
        d->copy_ns = x->copy_ns;
        d->overlap_ns = x->overlap_ns;
        d->overlap_pct = gt_pct_of(x->overlap_ns, x->copy_ns);
    }

    if (p->ops.nslots && !(r->streams = calloc(p->ops.nslots, sizeof(*r->streams))))
        return -1;
    for (size_t i = 0; i < p->ops.nslots; i++) {
        if (!tl->slot_ops[i])
            continue;
        struct gt_stream_row *x = &r->streams[r->nstreams++];
        x->device = p->ops.slot_device[i];
        x->stream = p->ops.slot_stream[i];
        x->ops = tl->slot_ops[i];
        x->busy_ns = tl->slot_busy[i];
        x->busy_pct = gt_pct_of(x->busy_ns, span);
    }
    if (r->nstreams > 1)
        qsort(r->streams, r->nstreams, sizeof(*r->streams), gt_stream_cmp);

    size_t n = 0;
    for (size_t i = 0; i < tl->nsites; i++)
        n += tl->site_gaps[i] > 0;
    if (n && !(r->idle_sites = calloc(n, sizeof(*r->idle_sites))))
        return -1;
    for (size_t i = 0; i < tl->nsites; i++) {
        if (!tl->site_gaps[i])
            continue;
        struct gt_idle_site *x = &r->idle_sites[r->nidle_sites++];
        x->site = *gt_site_by_index(p->sites, (uint32_t)i);
        x->idle_ns = tl->site_idle[i];
        x->gaps = tl->site_gaps[i];
    }
    if (r->nidle_sites > 1)
        qsort(r->idle_sites, r->nidle_sites, sizeof(*r->idle_sites), gt_idle_by_time);

    if (tl->ngaps && !(r->gaps = calloc(tl->ngaps, sizeof(*r->gaps))))
        return -1;
    for (size_t i = 0; i < tl->ngaps; i++) {
        const struct gt_tl_gap *g = &tl->gaps[i];
        struct gt_gap *out = &r->gaps[r->ngaps++];
        out->device = (int)g->device;
        out->start_ns = g->start;
        out->offset_ns = g->start > s->origin_ns ? g->start - s->origin_ns : 0;
        out->dur_ns = g->dur;
        out->cause = g->cause;
        out->has_before = g->before_site != UINT32_MAX;
        out->has_after = g->after_site != UINT32_MAX;
        if (out->has_before)
            out->before = *gt_site_by_index(p->sites, g->before_site);
        if (out->has_after)
            out->after = *gt_site_by_index(p->sites, g->after_site);
        snprintf(out->before_api, sizeof(out->before_api), "%s", gt_api_text(p, g->before_api));
        snprintf(out->after_api, sizeof(out->after_api), "%s", gt_api_text(p, g->after_api));
        out->has_spent = g->spent_site != UINT32_MAX;
        if (out->has_spent)
            out->spent = *gt_site_by_index(p->sites, g->spent_site);
        snprintf(out->spent_api, sizeof(out->spent_api), "%s", gt_api_text(p, g->spent_api));
    }
    if (r->ngaps > 1)
        qsort(r->gaps, r->ngaps, sizeof(*r->gaps), gt_gap_by_dur);
    return 0;
}

int gt_rows_launch(struct gt_pass *p)
{
    struct gt_report *r = p->r;
    const char **names = malloc((p->nkernels + 1) * sizeof(*names));
    uint64_t *first = malloc((p->nkernels + 1) * sizeof(*first));
    int rc = -1;
    if (names && first) {
        for (size_t i = 0; i < p->nkernels; i++) {
            names[i] = p->kernels[i].name;
            first[i] = p->kernels[i].first_api;
        }
        long nk = gt_launch_rows(&p->pairs, p->sites, names, first, 0, &r->launch_kernels);
        long ns = nk < 0 ? -1 : gt_launch_rows(&p->pairs, p->sites, names, first, 1, &r->launch_sites);
        if (nk >= 0 && ns >= 0) {
            r->nlaunch_kernels = (size_t)nk;
            r->nlaunch_sites = (size_t)ns;
            rc = 0;
        }
    }
    free(names);
    free(first);
    return rc;
}

/* The first line says which window the report read. */
void gt_report_window_note(struct gt_report *r, const struct gt_analyze_opts *o)
{
    char a[32], b[32], n[48] = "";
    const struct gt_window *w = o->win;
    r->windowed = 1;
    r->win_intervals = w->n;
    r->win_from = w->n ? w->a[0] : 0;
    r->win_to = w->n ? w->b[w->n - 1] : 0;
    uint64_t origin = o->win_origin > 0 ? (uint64_t)o->win_origin : 0;
    gt_fmt_duration((int64_t)(r->win_from > origin ? r->win_from - origin : 0), a, sizeof(a));
    if (r->win_to == UINT64_MAX)
        snprintf(b, sizeof(b), "the end");
    else
        gt_fmt_duration((int64_t)(r->win_to > origin ? r->win_to - origin : 0), b, sizeof(b));
    if (w->n > 1)
        snprintf(n, sizeof(n), " (in %zu ranges)", w->n);
    if (r->nnotes < GT_MAX_NOTES)
        snprintf(r->notes[r->nnotes++], sizeof(r->notes[0]),
                 "window: from %s to %s after the trace's start%s: the calls made in it, their GPU work, busy and "
                 "idle time inside it", a, b, n);
}

/* Keeps the first `top` rows of each table, counting what it leaves out. */
#define GT_KEEP(n, more) do { if (top && (n) > top) { (more) = (n) - top; (n) = top; } } while (0)

void gt_report_truncate(struct gt_report *r, size_t top)
{
    struct gt_more *m = &r->more;
    GT_KEEP(r->nfindings, m->findings);
    GT_KEEP(r->ngaps, m->gaps);
    GT_KEEP(r->nidle_sites, m->idle_sites);
    GT_KEEP(r->nkernels, m->kernels);
    GT_KEEP(r->nlaunch_kernels, m->launch_kernels);
    GT_KEEP(r->nlaunch_sites, m->launch_sites);
    GT_KEEP(r->ngraphs, m->graphs);
    GT_KEEP(r->ngnodes, m->graph_nodes);
    GT_KEEP(r->nxfer_kind, m->xfer_kind);
    GT_KEEP(r->nxfer_size, m->xfer_size);
    GT_KEEP(r->nh2d, m->h2d);
    GT_KEEP(r->nsyncs, m->syncs);
    GT_KEEP(r->nstreams, m->streams);
    GT_KEEP(r->napi, m->api);
    GT_KEEP(r->nerrors, m->errors);
    GT_KEEP(r->nphases, m->phases);
    GT_KEEP(r->nhost_stacks, m->host_stacks);
}

void gt_report_free(struct gt_report *r)
{
    free(r->findings);
    free(r->gaps);
    free(r->idle_sites);
    free(r->kernels);
    free(r->launch_kernels);
    free(r->launch_sites);
    free(r->xfer_kind);
    free(r->xfer_size);
    free(r->graphs);
    free(r->gnodes);
    free(r->h2d);
    free(r->syncs);
    free(r->streams);
    free(r->devices);
    free(r->api);
    free(r->errors);
    free(r->phases);
    free(r->phase_spans);
    free(r->steps.slowest);
    free(r->host_stacks);
    gt_busy_free(&r->busy);
    gt_categories_free(&r->cats);
    free(r->flame);
    free(r->flame_text);
    memset(r, 0, sizeof(*r));
}

/* gt_findings.c: what cost the run the most time, ranked by that time,
 * each with where and what to do (docs/report.md, "Findings"); and the
 * first line's notes: a trace cut short, calls that mostly failed. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/gt_flight.h"
#include "analysis/gt_pass.h"
#include "base/gt_fmt.h"

static const char *const gt_idle_advice[GT_CAUSE_HOST + 1] = {
    [GT_CAUSE_SYNC] = "Take syncs off the step's critical path: no .item(), .cpu() or cudaDeviceSynchronize in "
                      "the loop; wait on an event for just the work you need.",
    [GT_CAUSE_COPY] = "Make the copy asynchronous: copy from pinned memory (pin_memory=True, cudaHostAlloc) with "
                      "cudaMemcpyAsync, on a side stream, so the GPU keeps working.",
    [GT_CAUSE_MEMSET] = "Use cudaMemsetAsync on the work's own stream, or clear buffers once outside the loop.",
    [GT_CAUSE_LAUNCH] = "The GPU waits for launches: capture the loop in a CUDA Graph "
                        "(torch.compile(mode=\"reduce-overhead\"), cudaGraphLaunch) or fuse small kernels.",
    [GT_CAUSE_GRAPH] = "Graph launches themselves keep the GPU waiting: launch fewer, larger graphs.",
    [GT_CAUSE_ALLOC] = "Allocate once, up front, or from a pool (cudaMallocAsync, a caching allocator): "
                       "cudaMalloc and cudaMallocHost can synchronize the device.",
    [GT_CAUSE_FREE] = "Free once, at the end, or through a pool (cudaFreeAsync, a caching allocator): cudaFree "
                      "synchronizes the device.",
    [GT_CAUSE_EVENT] = "Create events once, outside the loop; record and query them without waiting.",
    [GT_CAUSE_STREAM] = "Create streams once, outside the loop.",
    [GT_CAUSE_MODULE] = "Load and compile modules once, before the work starts: ship cubins for the GPU's "
                        "architecture rather than PTX the driver must JIT, keep the JIT cache "
                        "(CUDA_CACHE_PATH) warm, warm up kernels before timing.",
    [GT_CAUSE_OTHER] = "Move the other CUDA calls the host makes between GPU work (queries, attribute "
                       "settings) out of the loop.",
    [GT_CAUSE_HOST] = "Overlap the host's work with the GPU's: load and preprocess data in DataLoader workers or "
                      "another thread, prefetch the next batch, keep logging and checkpoints off the step.",
};

struct gt_flist {
    struct gt_finding *v;
    size_t n, cap;
};

/* `span`: what the cost is a share of: the run's span, or device time for
 * GPU idle (the span times the devices, docs/report.md). */
static struct gt_finding *gt_add_of(struct gt_pass *p, struct gt_flist *l, const char *kind, uint64_t cost,
                                    uint64_t span)
{
    /* under 1% of the run is not worth anyone's time */
    if (!cost || cost * 100 < span)
        return NULL;
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 8;
        struct gt_finding *v = realloc(l->v, cap * sizeof(*v));
        if (!v) {
            p->failed = 1;
            return NULL;
        }
        l->v = v;
        l->cap = cap;
    }
    struct gt_finding *f = &l->v[l->n++];
    memset(f, 0, sizeof(*f));
    snprintf(f->kind, sizeof(f->kind), "%s", kind);
    f->cost_ns = cost;
    f->cost_pct = span ? 100.0 * (double)cost / (double)span : 0;
    return f;
}

static struct gt_finding *gt_add(struct gt_pass *p, struct gt_flist *l, const char *kind, uint64_t cost)
{
    return gt_add_of(p, l, kind, cost, p->r->summary.span_ns);
}

static void gt_set_site(struct gt_finding *f, const struct gt_site *site)
{
    if (!site)
        return;
    f->has_site = 1;
    f->site = *site;
}

static int gt_by_cost(const void *a, const void *b)
{
    const struct gt_finding *x = a, *y = b;
    if (x->cost_ns != y->cost_ns)
        return x->cost_ns > y->cost_ns ? -1 : 1;
    return strcmp(x->kind, y->kind);
}

static int gt_is_explicit_sync(const char *kind)
{
    return strncmp(kind, "memcpy_", 7) != 0;
}

int gt_findings(struct gt_pass *p, const uint64_t *site_cause_idle, size_t nsites)
{
    struct gt_report *r = p->r;
    const struct gt_summary *s = &r->summary;
    struct gt_flist l = {0};
    char d1[32], b1[32];

    for (int c = 0; c <= GT_CAUSE_HOST; c++) {
        char kind[32];
        snprintf(kind, sizeof(kind), "idle_%s", gt_cause_names[c]);
        struct gt_finding *f = gt_add_of(p, &l, kind, s->idle_by_cause[c], s->device_ns);
        if (!f)
            continue;
        gt_fmt_duration((int64_t)f->cost_ns, d1, sizeof(d1));
        if (s->devices > 1)
            snprintf(f->title, sizeof(f->title), "the GPUs sat idle %s of device time (%.1f%% of %llu devices x "
                     "the run), %s", d1, f->cost_pct, (unsigned long long)s->devices, gt_cause_text[c]);
        else
            snprintf(f->title, sizeof(f->title), "the GPU sat idle %s (%.1f%% of the run), %s", d1, f->cost_pct,
                     gt_cause_text[c]);
        if (c == GT_CAUSE_LAUNCH && s->launches) {
            size_t len = strlen(f->title);
            snprintf(f->title + len, sizeof(f->title) - len, "; %llu of %llu launches were launch-bound%s",
                     (unsigned long long)s->launch_bound, (unsigned long long)s->launches,
                     /* the GPU waited in launch calls, yet none counts: say
                      * which launches the rule leaves out (docs/report.md) */
                     s->launch_bound ? ""
                                     : " (the wait was in a kernel's first launch, which loads its code, or in a "
                                       "launch its kernel outlasted: neither counts)");
        }
        snprintf(f->advice, sizeof(f->advice), "%s", gt_idle_advice[c]);
        /* where: the call that ended most of this cause's idle time */
        uint64_t best = 0;
        size_t at = nsites;
        for (size_t i = 0; site_cause_idle && i < nsites; i++) {
            uint64_t v = site_cause_idle[i * GT_CAUSES + (size_t)c];
            if (v > best) {
                best = v;
                at = i;
            }
        }
        if (at < nsites)
            gt_set_site(f, gt_site_by_index(p->sites, (uint32_t)at));
    }

    uint64_t sync = 0, dtoh = 0;
    const struct gt_sync_row *top_sync = NULL, *top_dtoh = NULL;
    for (size_t i = 0; i < r->nsyncs; i++) {
        const struct gt_sync_row *y = &r->syncs[i];
        if (gt_is_explicit_sync(y->kind)) {
            sync += y->blocked_ns;
            if (!top_sync || y->blocked_ns > top_sync->blocked_ns)
                top_sync = y;
        } else if (!strcmp(y->kind, "memcpy_dtoh")) {
            dtoh += y->blocked_ns;
            if (!top_dtoh || y->blocked_ns > top_dtoh->blocked_ns)
                top_dtoh = y;
        }
    }
    struct gt_finding *f = gt_add(p, &l, "blocked_sync", sync);
    if (f) {
        snprintf(f->title, sizeof(f->title), "the host blocked %s in syncs",
                 gt_fmt_duration((int64_t)sync, d1, sizeof(d1)));
        snprintf(f->advice, sizeof(f->advice), "Sync less: wait on an event for the work you need rather than the "
                                               "whole device, and keep .item()/.cpu() out of the loop.");
        gt_set_site(f, top_sync ? &top_sync->site : NULL);
    }
    if ((f = gt_add(p, &l, "blocked_dtoh", dtoh))) {
        snprintf(f->title, sizeof(f->title), "the host blocked %s in synchronous device-to-host copies",
                 gt_fmt_duration((int64_t)dtoh, d1, sizeof(d1)));
        snprintf(f->advice, sizeof(f->advice), "Copy device-to-host with cudaMemcpyAsync into pinned memory and "
                                               "wait only when the data is needed (no .item()/.cpu() per step).");
        gt_set_site(f, top_dtoh ? &top_dtoh->site : NULL);
    }

    uint64_t pageable_ns = 0, pageable_bytes = 0, storm_ns = 0;
    const struct gt_h2d_row *top_pageable = NULL, *top_storm = NULL;
    for (size_t i = 0; i < r->nh2d; i++) {
        const struct gt_h2d_row *h = &r->h2d[i];
        pageable_ns += h->pageable_host_ns;
        pageable_bytes += h->pageable_bytes;
        if (h->pageable_calls && (!top_pageable || h->pageable_host_ns > top_pageable->pageable_host_ns))
            top_pageable = h;
        if (h->small_storm) {
            storm_ns += h->host_ns;
            if (!top_storm || h->host_ns > top_storm->host_ns)
                top_storm = h;
        }
    }
    if ((f = gt_add(p, &l, "pageable_h2d", pageable_ns))) {
        snprintf(f->title, sizeof(f->title), "%s of host-to-device copies came from pageable memory (%s of host "
                 "time in those copies)", gt_fmt_bytes((int64_t)pageable_bytes, b1, sizeof(b1)),
                 gt_fmt_duration((int64_t)pageable_ns, d1, sizeof(d1)));
        snprintf(f->advice, sizeof(f->advice), "Pin the source memory (pin_memory=True, cudaHostAlloc or "
                                               "cudaHostRegister) so the copies run at full speed and can be "
                                               "asynchronous.");
        gt_set_site(f, top_pageable ? &top_pageable->site : NULL);
    }
    if ((f = gt_add(p, &l, "small_copies", storm_ns))) {
        snprintf(f->title, sizeof(f->title), "storms of small host-to-device copies took %s of host time",
                 gt_fmt_duration((int64_t)storm_ns, d1, sizeof(d1)));
        snprintf(f->advice, sizeof(f->advice), "Batch small copies into fewer, larger ones (one staging buffer, "
                                               "cudaMemcpyBatchAsync).");
        gt_set_site(f, top_storm ? &top_storm->site : NULL);
    }
    if (l.n > 1)
        qsort(l.v, l.n, sizeof(*l.v), gt_by_cost);
    r->findings = l.v;
    r->nfindings = l.n;
    return p->failed ? -1 : 0;
}

/* Errors that mean the program never reached a working GPU. */
static int gt_no_gpu_error(const char *e)
{
    static const char *const names[] = {
        "cudaErrorNoDevice", "cudaErrorInsufficientDriver", "cudaErrorInitializationError",
        "cudaErrorStubLibrary", "cudaErrorSystemDriverMismatch", "cudaErrorCompatNotSupportedOnDevice",
        "cudaErrorCallRequiresNewerDriver", "cudaErrorDevicesUnavailable", "CUDA_ERROR_NO_DEVICE",
        "CUDA_ERROR_NOT_INITIALIZED", "CUDA_ERROR_STUB_LIBRARY", "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
        "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE", "CUDA_ERROR_DEVICE_UNAVAILABLE",
        "CUDA_ERROR_INVALID_DEVICE", "cudaErrorInvalidDevice",
    };
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (!strcmp(e, names[i]))
            return 1;
    return 0;
}

static void gt_note(struct gt_report *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void gt_note(struct gt_report *r, const char *fmt, ...)
{
    if (r->nnotes >= GT_MAX_NOTES)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->notes[r->nnotes++], sizeof(r->notes[0]), fmt, ap);
    va_end(ap);
}

void gt_notes(struct gt_pass *p)
{
    struct gt_report *r = p->r;
    const struct gt_summary *s = &r->summary;
    char *stopped = r->partial ? gt_trace_stop_reason(p->t) : NULL;
    if (stopped)
        gt_note(r, "partial trace: recording stopped early, %s; what was committed before is reported (the "
                   "process ran on untraced)", stopped);
    else if (r->partial)
        gt_note(r, "partial trace: the process did not finish (killed or crashed); what it had committed is "
                   "reported");
    free(stopped);
    if (p->t->wal_skipped)
        gt_note(r, "its write-ahead log could not be read: data not yet in the main file is missing");
    char flight[3][GT_FLIGHT_LINE];
    for (int i = 0, n = gt_flight_lines(p->t, flight, 3); i < n; i++)
        gt_note(r, "%s", flight[i]);
    if (!s->calls)
        gt_note(r, "the trace holds no CUDA calls");
    if (s->failed_calls * 2 > s->calls && r->nerrors) {
        const struct gt_error_row *e = &r->errors[0];
        gt_note(r, "most CUDA calls failed (%llu of %llu; commonest: %s from %s): %s",
                (unsigned long long)s->failed_calls, (unsigned long long)s->calls, e->error, e->api,
                gt_no_gpu_error(e->error)
                    ? "the process found no usable GPU: check which libcuda.so.1 it loads (a toolkit stubs "
                      "directory on LD_LIBRARY_PATH, a driver older than the runtime) and nvidia-smi"
                    : "the figures below describe only the calls that succeeded");
    }
}

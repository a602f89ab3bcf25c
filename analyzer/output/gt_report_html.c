/* gt_report_html.c: `gputrace report --format html`: one self-contained
 * file (inline CSS, SVG and script, nothing fetched) with an overview of
 * each GPU's busy time (each slice as tall as the GPU was busy in it,
 * drawn without script), every listed gap marked and linked to its row,
 * the interactive timeline of streams and threads
 * (gt_report_html_timeline.c), bar charts of the top launch and H2D
 * sites, and the report's tables. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/gt_fmt.h"
#include "output/gt_report_cats.h"
#include "output/gt_report_html.h"
#include "output/gt_report_samples.h"
#include "output/gt_report_html_timeline.h"

#define GT_TL_W 1000.0   /* timeline width in SVG units */
#define GT_TL_ROW 44.0   /* one device's row */
#define GT_TL_LEFT 70.0  /* room for the row label */

/* ---- HTML ---- */

static void gt_site_html(FILE *out, const struct gt_site *s)
{
    if (!s->nframes) {
        fputs("<span class=dim>(no stack)</span>", out);
        return;
    }
    for (int i = 0; i < s->nframes; i++) {
        fputs(i ? "<br><span class=dim>&lt;</span> " : "", out);
        fputs("<code>", out);
        gt_put_html(out, s->frames[i]);
        fputs("</code>", out);
    }
}

static void gt_html_head(FILE *out, const char *title, int timeline)
{
    fputs("<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8>\n<title>", out);
    gt_put_html(out, title);
    fputs("</title>\n<style>\n"
          "body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;max-width:1100px;color:#1d2430;padding:0 16px}\n"
          "h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #d5dae2}\n"
          "h3{font-size:15px;margin:18px 0 6px}.dim{color:#6b7685}code{font-size:12.5px}\n"
          "table{border-collapse:collapse;width:100%;margin:6px 0 12px}th,td{text-align:left;padding:4px 8px;"
          "border-bottom:1px solid #e6e9ee;vertical-align:top}th{background:#f3f5f8;font-weight:600}"
          "td.n,th.n{text-align:right;white-space:nowrap}\n"
          "tr:target{background:#fde8e6}.cards{display:flex;flex-wrap:wrap;gap:10px;margin:10px 0}"
          ".card{background:#f3f5f8;border-radius:6px;padding:8px 12px;min-width:130px}"
          ".card b{display:block;font-size:18px}.warn{color:#b3261e}\n"
          "svg text{font:11px system-ui,sans-serif;fill:#1d2430}a.gap rect{fill:#d9534f;fill-opacity:.55}"
          "a.gap:hover rect{fill-opacity:.9}.legend span{display:inline-block;width:12px;height:12px;"
          "margin:0 4px 0 12px;vertical-align:-2px}\n"
          "</style>\n",
          out);
    if (timeline)
        gt_tl_assets(out);
    fputs("</head><body>\n", out);
}

void gt_html_begin(FILE *out, const char *title)
{
    gt_html_head(out, title, 1);
}

void gt_html_begin_static(FILE *out, const char *title)
{
    gt_html_head(out, title, 0);
}

void gt_html_end(FILE *out)
{
    fputs("<p class=dim>Written by gputrace report. Times are host CLOCK_MONOTONIC; GPU times come from CUPTI "
          "where the trace has them.</p>\n</body></html>\n",
          out);
}

static void gt_timeline(FILE *out, const struct gt_report *r, const struct gt_busy *b, int section)
{
    char d1[32];
    int rows = b->ndev ? b->ndev : 1;
    int prow = r->nphase_spans && b->span ? 1 : 0; /* the NVTX phases' row, under the GPUs */
    double h = GT_TL_ROW * (rows + prow) + 26;
    double w = GT_TL_LEFT + GT_TL_W;
    fprintf(out, "<svg class=timeline viewBox=\"0 0 %.0f %.0f\" width=\"100%%\" role=img>\n", w + 10, h);
    double bw = GT_TL_W / (double)(b->nb ? b->nb : 1);
    for (int d = 0; d < b->ndev; d++) {
        double y = GT_TL_ROW * d + 4;
        fprintf(out, "<text x=4 y=%.1f>GPU %d</text>\n", y + GT_TL_ROW / 2, b->dev[d]);
        fprintf(out, "<rect x=%.1f y=%.1f width=%.1f height=%.1f fill=\"#e9ecf1\"/>\n", GT_TL_LEFT, y, GT_TL_W,
                GT_TL_ROW - 10);
        /* Each slice as tall as the GPU was busy in it: an idle slice is
         * empty, a half-busy one half full. Equal neighbours share a rect. */
        double full = GT_TL_ROW - 10;
        size_t i = 0;
        while (i < b->nb) {
            float f = b->frac[d][i] > 1 ? 1 : b->frac[d][i];
            size_t j = i + 1;
            while (j < b->nb && (b->frac[d][j] > 1 ? 1 : b->frac[d][j]) == f)
                j++;
            if (f > 0)
                fprintf(out, "<rect x=%.2f y=%.2f width=%.2f height=%.2f fill=\"#2e9e4f\"/>\n",
                        GT_TL_LEFT + bw * (double)i, y + full * (1 - f), bw * (double)(j - i), full * f);
            i = j;
        }
        for (size_t g = 0; g < r->ngaps; g++) {
            const struct gt_gap *gp = &r->gaps[g];
            if (gp->device != b->dev[d] || !b->span)
                continue;
            double x0 = GT_TL_LEFT + GT_TL_W * (double)(gp->start_ns - b->t0) / (double)b->span;
            double gw = GT_TL_W * (double)gp->dur_ns / (double)b->span;
            /* rows past --top have no row to jump to; the gap is drawn all the same */
            fprintf(out, "<a class=gap href=\"#gap-%d-%zu\"><rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\"/><title>",
                    section, g, x0, y - 2, gw < 1.5 ? 1.5 : gw, GT_TL_ROW - 6);
            fprintf(out, "idle %s (%s)", gt_fmt_duration((int64_t)gp->dur_ns, d1, sizeof(d1)),
                    gt_cause_text[gp->cause]);
            fputs("</title></a>\n", out);
        }
    }
    if (prow) {
        static const char *const colors[] = {"#4c78a8", "#f58518", "#54a24b", "#b279a2", "#e45756", "#72b7b2",
                                             "#eeca3b", "#9d755d"};
        double y = GT_TL_ROW * rows + 4;
        fprintf(out, "<text x=4 y=%.1f>phases</text>\n", y + GT_TL_ROW / 2);
        for (size_t i = 0; i < r->nphase_spans; i++) {
            const struct gt_phase_span *sp = &r->phase_spans[i];
            if (sp->phase >= r->nphases)
                continue;
            /* clipped to the span the axis shows */
            uint64_t a = sp->start_ns < b->t0 ? b->t0 : sp->start_ns;
            uint64_t e = sp->end_ns > b->t0 + b->span ? b->t0 + b->span : sp->end_ns;
            if (e <= a)
                continue;
            double x0 = GT_TL_LEFT + GT_TL_W * (double)(a - b->t0) / (double)b->span;
            double pw = GT_TL_W * (double)(e - a) / (double)b->span;
            fprintf(out, "<rect x=%.2f y=%.1f width=%.2f height=%.1f fill=\"%s\"><title>", x0, y,
                    pw < 1 ? 1 : pw, GT_TL_ROW - 10, colors[sp->phase % 8]);
            gt_put_html(out, r->phases[sp->phase].name);
            fprintf(out, " %s</title></rect>\n",
                    gt_fmt_duration((int64_t)(sp->end_ns - sp->start_ns), d1, sizeof(d1)));
        }
    }
    /* The time axis: five ticks. */
    double ay = GT_TL_ROW * (rows + prow) + 4;
    for (int k = 0; k <= 4; k++) {
        double x = GT_TL_LEFT + GT_TL_W * k / 4.0;
        fprintf(out, "<line x1=%.1f x2=%.1f y1=%.1f y2=%.1f stroke=\"#9aa3b0\"/>", x, x, ay - 6, ay);
        fprintf(out, "<text x=%.1f y=%.1f text-anchor=%s>+%s</text>\n", x, ay + 12,
                k == 0 ? "start" : k == 4 ? "end" : "middle",
                gt_fmt_duration((int64_t)(b->span * (uint64_t)k / 4), d1, sizeof(d1)));
    }
    fputs("</svg>\n<div class=\"legend dim\"><span style=\"background:#2e9e4f\"></span>busy"
          "<span style=\"background:#e9ecf1\"></span>idle<span style=\"background:#d9534f\"></span>"
          "idle gap (click for its row)",
          out);
    if (prow)
        fputs("; phases: top-level NVTX ranges, a color per name (hover for name and length)", out);
    fputs("</div>\n", out);
}

/* prefix + s into dst, cut to fit with "..." at the end. */
static void gt_clip(char *dst, size_t cap, const char *prefix, const char *s)
{
    size_t p = strlen(prefix), n = strlen(s);
    memcpy(dst, prefix, p);
    if (p + n < cap) {
        memcpy(dst + p, s, n + 1);
        return;
    }
    memcpy(dst + p, s, cap - p - 4);
    memcpy(dst + cap - 4, "...", 4);
}

/* Horizontal bars: label, value, and the text shown at the bar's end. */
struct gt_bar {
    const struct gt_site *site;
    const char *label;
    double value;
    char shown[48];
};

static void gt_bars(FILE *out, const struct gt_bar *bars, size_t n, const char *color)
{
    if (!n) {
        fputs("<p class=dim>none</p>\n", out);
        return;
    }
    double max = 0;
    for (size_t i = 0; i < n; i++)
        if (bars[i].value > max)
            max = bars[i].value;
    double rowh = 38, lw = 400, bwid = 360;
    fprintf(out, "<svg class=bars viewBox=\"0 0 1000 %.0f\" width=\"100%%\" role=img>\n", rowh * (double)n + 4);
    for (size_t i = 0; i < n; i++) {
        double y = rowh * (double)i + 4;
        double bw = max > 0 ? bwid * bars[i].value / max : 0;
        fprintf(out, "<text x=0 y=%.1f>", y + 13);
        const char *l = bars[i].site && bars[i].site->nframes ? bars[i].site->frames[0] : bars[i].label;
        char cut[72];
        gt_clip(cut, sizeof(cut), "", l ? l : "?");
        gt_put_html(out, cut);
        fputs("</text>", out);
        if (bars[i].site && bars[i].site->nframes > 1) {
            gt_clip(cut, sizeof(cut), "< ", bars[i].site->frames[1]);
            fprintf(out, "<text x=0 y=%.1f class=dim style=\"fill:#6b7685\">", y + 27);
            gt_put_html(out, cut);
            fputs("</text>", out);
        }
        fprintf(out, "<rect x=%.1f y=%.1f width=%.1f height=22 fill=\"%s\"/>", lw, y + 3, bw < 1 ? 1 : bw, color);
        fprintf(out, "<text x=%.1f y=%.1f>", lw + (bw < 1 ? 1 : bw) + 6, y + 18);
        gt_put_html(out, bars[i].shown);
        fputs("</text>\n", out);
    }
    fputs("</svg>\n", out);
}

static void gt_card(FILE *out, const char *label, const char *value, int warn)
{
    fprintf(out, "<div class=card>%s<b%s>", label, warn ? " class=warn" : "");
    gt_put_html(out, value);
    fputs("</b></div>", out);
}

static size_t gt_top(size_t n, const struct gt_analyze_opts *o)
{
    return o->top && n > o->top ? o->top : n;
}

static void gt_html_causes(FILE *out, const uint64_t *idle)
{
    char d1[32];
    int any = 0;
    fputs("<p class=dim>Idle by cause:", out);
    for (int c = 0; c < GT_CAUSES; c++) {
        if (!idle[c])
            continue;
        fprintf(out, "%s %s %s", any ? "," : "", gt_cause_names[c],
                gt_fmt_duration((int64_t)idle[c], d1, sizeof(d1)));
        any = 1;
    }
    fputs(any ? ".</p>\n" : " none.</p>\n", out);
}

static void gt_html_findings(FILE *out, const struct gt_report *r, const struct gt_analyze_opts *o)
{
    fputs("<h2>Findings, by the time they cost</h2>\n", out);
    if (!r->nfindings) {
        fputs("<p class=dim>none costs 1% of the run or more</p>\n", out);
        return;
    }
    fputs("<ol>", out);
    for (size_t i = 0; i < gt_top(r->nfindings, o); i++) {
        const struct gt_finding *f = &r->findings[i];
        fputs("<li><b>", out);
        gt_put_html(out, f->title);
        fputs("</b>", out);
        if (f->has_site) {
            fputs("<br>", out);
            gt_site_html(out, &f->site);
        }
        fputs("<br>", out);
        gt_put_html(out, f->advice);
        fputs("</li>\n", out);
    }
    fputs("</ol>\n", out);
}

static void gt_html_gaps(FILE *out, const struct gt_report *r, const struct gt_analyze_opts *o, int section)
{
    char d1[32], d2[32];
    fprintf(out, "<h2>GPU idle gaps of %s or more</h2>\n", gt_fmt_duration((int64_t)o->min_gap_ns, d1, sizeof(d1)));
    if (!r->ngaps) {
        fputs("<p class=dim>none</p>\n", out);
        return;
    }
    fputs("<table><tr><th class=n>idle</th><th class=n>at</th><th>GPU</th><th>cause</th><th>after the work of"
          "</th><th>ended by the work of</th></tr>\n",
          out);
    for (size_t i = 0; i < r->ngaps; i++) {
        const struct gt_gap *g = &r->gaps[i];
        fprintf(out, "<tr id=\"gap-%d-%zu\"><td class=n>%s</td><td class=n>+%s</td><td>%d</td><td>", section, i,
                gt_fmt_duration((int64_t)g->dur_ns, d1, sizeof(d1)),
                gt_fmt_duration((int64_t)g->offset_ns, d2, sizeof(d2)), g->device);
        gt_put_html(out, gt_cause_text[g->cause]);
        gt_html_gap_others(out, g);
        if (g->has_spent) {
            fputs("<br>spent in ", out);
            gt_put_html(out, g->spent_api);
            fputs("<br>", out);
            gt_site_html(out, &g->spent);
        }
        fputs("</td><td>", out);
        if (g->has_before) {
            gt_put_html(out, g->before_api);
            fputs("<br>", out);
            gt_site_html(out, &g->before);
        }
        fputs("</td><td>", out);
        if (g->has_after) {
            gt_put_html(out, g->after_api);
            fputs("<br>", out);
            gt_site_html(out, &g->after);
        }
        fputs("</td></tr>\n", out);
    }
    fputs("</table>\n", out);
}

static void gt_html_kernels(FILE *out, const struct gt_report *r, const struct gt_analyze_opts *o)
{
    char d[6][32];
    fputs("<h2>Kernels by GPU time</h2>\n", out);
    if (!r->nkernels) {
        fputs("<p class=dim>no kernels ran</p>\n", out);
        return;
    }
    fputs("<table><tr><th>kernel</th><th class=n>total</th><th class=n>share</th><th class=n>runs</th>"
          "<th class=n>by graphs</th><th class=n>mean</th><th class=n>median</th><th class=n>min</th>"
          "<th class=n>max</th><th class=n>std dev</th></tr>\n",
          out);
    for (size_t i = 0; i < gt_top(r->nkernels, o); i++) {
        const struct gt_kernel_row *k = &r->kernels[i];
        fputs("<tr><td><code>", out);
        gt_put_html(out, gt_kernel_label(k->name));
        fprintf(out, "</code></td><td class=n>%s</td><td class=n>%.1f%%</td><td class=n>%llu</td><td class=n>%llu"
                     "</td><td class=n>%s</td><td class=n>%s</td><td class=n>%s</td><td class=n>%s</td>"
                     "<td class=n>%s</td></tr>\n",
                gt_fmt_duration((int64_t)k->total_ns, d[0], 32), k->share_pct, (unsigned long long)k->count,
                (unsigned long long)k->graph_count, gt_fmt_duration((int64_t)k->mean_ns, d[1], 32),
                gt_fmt_duration((int64_t)k->median_ns, d[2], 32), gt_fmt_duration((int64_t)k->min_ns, d[3], 32),
                gt_fmt_duration((int64_t)k->max_ns, d[4], 32),
                gt_fmt_duration((int64_t)(k->stddev_ns + 0.5), d[5], 32));
    }
    fputs("</table>\n", out);
}

static void gt_html_small_tables(FILE *out, const struct gt_report *r, const struct gt_analyze_opts *o)
{
    char d1[32], d2[32], d3[32];
    fputs("<h2>Transfers by kind and size</h2>\n", out);
    if (!r->nxfer_kind) {
        fputs("<p class=dim>no copies or memsets</p>\n", out);
    } else {
        fputs("<table><tr><th>kind</th><th>size</th><th class=n>count</th><th class=n>bytes</th>"
              "<th class=n>time</th><th class=n>GB/s</th></tr>\n", out);
        for (size_t i = 0; i < r->nxfer_kind; i++) {
            const struct gt_xfer_row *x = &r->xfer_kind[i];
            fprintf(out, "<tr><td><b>%s</b></td><td>all</td><td class=n>%llu</td><td class=n>%s</td><td class=n>%s"
                         "</td><td class=n>%.2f</td></tr>\n",
                    gt_xfer_kind_names[x->kind], (unsigned long long)x->count,
                    gt_fmt_bytes((int64_t)x->bytes, d1, sizeof(d1)), gt_fmt_duration((int64_t)x->total_ns, d2, sizeof(d2)),
                    x->bandwidth_gbps);
            for (size_t j = 0; j < r->nxfer_size; j++) {
                const struct gt_xfer_row *y = &r->xfer_size[j];
                if (y->kind != x->kind)
                    continue;
                fprintf(out, "<tr><td></td><td>%s</td><td class=n>%llu</td><td class=n>%s</td><td class=n>%s</td>"
                             "<td class=n>%.2f</td></tr>\n",
                        gt_xfer_band_names[y->band], (unsigned long long)y->count,
                        gt_fmt_bytes((int64_t)y->bytes, d1, sizeof(d1)),
                        gt_fmt_duration((int64_t)y->total_ns, d2, sizeof(d2)), y->bandwidth_gbps);
            }
        }
        fputs("</table>\n", out);
    }
    fputs("<h2>Streams and devices</h2>\n", out);
    if (r->nstreams) {
        fputs("<table><tr><th>device</th><th>stream</th><th class=n>operations</th><th class=n>busy</th>"
              "<th class=n>of span</th></tr>\n", out);
        for (size_t i = 0; i < gt_top(r->nstreams, o); i++) {
            const struct gt_stream_row *s = &r->streams[i];
            fprintf(out, "<tr><td>%lld</td><td>%lld</td><td class=n>%llu</td><td class=n>%s</td><td class=n>%.1f%%"
                         "</td></tr>\n",
                    (long long)s->device, (long long)s->stream, (unsigned long long)s->ops,
                    gt_fmt_duration((int64_t)s->busy_ns, d1, sizeof(d1)), s->busy_pct);
        }
        fputs("</table>\n", out);
    }
    for (size_t i = 0; i < r->ndevices; i++) {
        const struct gt_device_row *d = &r->devices[i];
        fprintf(out, "<p>Device %lld: busy %s, idle %.1f%% of span; compute %s, copies %s, both at once %s "
                     "(%.1f%% of copy time).</p>\n",
                (long long)d->device, gt_fmt_duration((int64_t)d->busy_ns, d1, sizeof(d1)), d->idle_pct,
                gt_fmt_duration((int64_t)d->compute_ns, d2, sizeof(d2)),
                gt_fmt_duration((int64_t)d->copy_ns, d3, sizeof(d3)),
                gt_fmt_duration((int64_t)d->overlap_ns, d1, sizeof(d1)), d->overlap_pct);
        gt_html_causes(out, d->idle_by_cause);
    }
    if (r->nphases) {
        fputs("<h2>By phase (top-level NVTX ranges)</h2>\n<table><tr><th>phase</th><th class=n>ranges</th>"
              "<th class=n>wall</th><th class=n>GPU busy</th><th class=n>GPU idle</th><th class=n>launches</th>"
              "<th class=n>launch host</th><th class=n>H2D</th><th class=n>syncs</th><th class=n>sync time</th>"
              "</tr>\n",
              out);
        for (size_t i = 0; i < gt_top(r->nphases, o); i++) {
            const struct gt_phase_row *p = &r->phases[i];
            char d4[32], d5[32];
            fputs("<tr><td><code>", out);
            gt_put_html(out, p->name);
            fprintf(out, "</code></td><td class=n>%llu</td><td class=n>%s</td><td class=n>%s</td>"
                         "<td class=n>%.1f%%</td><td class=n>%llu</td><td class=n>%s</td><td class=n>%s</td>"
                         "<td class=n>%llu</td><td class=n>%s</td></tr>\n",
                    (unsigned long long)p->ranges, gt_fmt_duration((int64_t)p->wall_ns, d1, sizeof(d1)),
                    gt_fmt_duration((int64_t)p->gpu_busy_ns, d2, sizeof(d2)), p->gpu_idle_pct,
                    (unsigned long long)p->launches, gt_fmt_duration((int64_t)p->launch_host_ns, d3, sizeof(d3)),
                    gt_fmt_bytes((int64_t)p->h2d_bytes, d4, sizeof(d4)), (unsigned long long)p->syncs,
                    gt_fmt_duration((int64_t)p->sync_ns, d5, sizeof(d5)));
        }
        fputs("</table>\n", out);
    }
    gt_html_steps(out, r);
    fputs("<h2>CUDA API summary</h2>\n<table><tr><th>function</th><th class=n>calls</th><th class=n>total</th>"
          "<th class=n>mean</th><th class=n>max</th><th class=n>errors</th></tr>\n", out);
    for (size_t i = 0; i < gt_top(r->napi, o); i++) {
        const struct gt_api_row *a = &r->api[i];
        fputs("<tr><td><code>", out);
        gt_put_html(out, a->name);
        fprintf(out, "</code></td><td class=n>%llu</td><td class=n>%s</td><td class=n>%s</td><td class=n>%s</td>"
                     "<td class=n>%llu</td></tr>\n",
                (unsigned long long)a->count, gt_fmt_duration((int64_t)a->total_ns, d1, sizeof(d1)),
                gt_fmt_duration((int64_t)a->mean_ns, d2, sizeof(d2)),
                gt_fmt_duration((int64_t)a->max_ns, d3, sizeof(d3)), (unsigned long long)a->errors);
    }
    fputs("</table>\n", out);
    if (r->summary.tracer_startup_ns)
        fprintf(out, "<p>And the tracer's own start-up: %s on the thread of the first CUDA call, before that call's "
                     "time started (in no figure above).</p>\n",
                gt_fmt_duration((int64_t)r->summary.tracer_startup_ns, d1, sizeof(d1)));
    if (r->nerrors) {
        fputs("<h2>Errors</h2>\n<table><tr><th>function</th><th>error</th><th class=n>calls</th></tr>\n", out);
        for (size_t i = 0; i < gt_top(r->nerrors, o); i++) {
            const struct gt_error_row *e = &r->errors[i];
            fputs("<tr><td><code>", out);
            gt_put_html(out, e->api);
            fputs("</code></td><td><code>", out);
            gt_put_html(out, e->error);
            fprintf(out, "</code></td><td class=n>%llu</td></tr>\n", (unsigned long long)e->count);
        }
        fputs("</table>\n", out);
    }
}

void gt_html_trace(FILE *out, const char *path, long long pid, const struct gt_report *r, const struct gt_tl *tl,
                   const struct gt_analyze_opts *o, int section)
{
    char d1[32], d2[32], buf[96];
    const struct gt_summary *s = &r->summary;
    fputs("<h1>gputrace report</h1>\n<p class=dim><code>", out);
    gt_put_html(out, path);
    fprintf(out, "</code>, pid %lld, span %s, %llu calls, GPU times %s</p>\n", pid,
            gt_fmt_duration((int64_t)s->span_ns, d1, sizeof(d1)), (unsigned long long)s->calls,
            s->gpu_times ? "from CUPTI" : "<span class=warn>not recorded (host times stand in)</span>");
    for (int i = 0; i < r->nnotes; i++) {
        fputs("<p class=warn>", out);
        gt_put_html(out, r->notes[i]);
        fputs("</p>\n", out);
    }
    fputs("<div class=cards>", out);
    snprintf(buf, sizeof(buf), "%.1f%%", s->idle_pct);
    gt_card(out, "GPU idle", buf, s->idle_pct >= 50);
    snprintf(buf, sizeof(buf), "%llu of %llu", (unsigned long long)s->launch_bound,
             (unsigned long long)s->launches);
    gt_card(out, "launch-bound", buf, s->launches && s->launch_bound * 2 >= s->launches);
    snprintf(buf, sizeof(buf), "%.1f%%", s->sync_pct);
    gt_card(out, "busiest thread in syncs", buf, s->sync_pct >= 20);
    gt_card(out, "H2D", gt_fmt_bytes((int64_t)s->h2d_bytes, d1, sizeof(d1)), 0);
    gt_card(out, "of it pageable", gt_fmt_bytes((int64_t)s->pageable_h2d_bytes, d2, sizeof(d2)),
            s->pageable_h2d_bytes > 0);
    snprintf(buf, sizeof(buf), "%llu of %llu", (unsigned long long)s->failed_calls, (unsigned long long)s->calls);
    gt_card(out, "failed calls", buf, s->failed_calls * 2 > s->calls);
    fputs("</div>\n", out);

    fputs("<h2>GPU timeline</h2>\n", out);
    gt_timeline(out, r, &r->busy, section);
    gt_html_causes(out, s->idle_by_cause);
    fputs("<h2>Timeline by stream and thread</h2>\n", out);
    gt_tl_write(out, tl, r, section);
    gt_html_findings(out, r, o);
    gt_html_gaps(out, r, o, section);
    gt_html_host_stacks(out, r, section);
    gt_cats_html(out, &r->cats, r);
    gt_html_kernels(out, r, o);

    fputs("<h2>Launch overhead</h2>\n<h3>Host time launching, by launch site</h3>\n", out);
    struct gt_bar bars[10];
    size_t nb = 0;
    for (size_t i = 0; i < r->nlaunch_sites && nb < 10; i++, nb++) {
        bars[nb].site = &r->launch_sites[i].site;
        bars[nb].label = NULL;
        bars[nb].value = (double)r->launch_sites[i].api_total_ns;
        snprintf(bars[nb].shown, sizeof(bars[nb].shown), "%s, %llu launches",
                 gt_fmt_duration((int64_t)r->launch_sites[i].api_total_ns, d1, sizeof(d1)),
                 (unsigned long long)r->launch_sites[i].count);
    }
    gt_bars(out, bars, nb, "#4a72c4");
    fputs("<h3>By kernel</h3>\n", out);
    if (!r->nlaunch_kernels) {
        fputs("<p class=dim>no kernel launches</p>\n", out);
    } else {
        fputs("<table><tr><th>kernel</th><th class=n>launches</th><th class=n>host mean</th><th class=n>p99</th>"
              "<th class=n>GPU mean</th><th class=n>queue mean</th><th class=n>launch-bound</th></tr>\n",
              out);
        for (size_t i = 0; i < gt_top(r->nlaunch_kernels, o); i++) {
            const struct gt_launch_row *k = &r->launch_kernels[i];
            fputs("<tr><td><code>", out);
            gt_put_html(out, gt_kernel_label(k->kernel));
            fprintf(out, "</code></td><td class=n>%llu</td><td class=n>%s</td><td class=n>%s</td>",
                    (unsigned long long)k->count, gt_fmt_duration((int64_t)k->api_mean_ns, d1, sizeof(d1)),
                    gt_fmt_duration((int64_t)k->api_p99_ns, d2, sizeof(d2)));
            fprintf(out, "<td class=n>%s</td><td class=n>%s</td><td class=n>%llu</td></tr>\n",
                    gt_fmt_duration((int64_t)k->gpu_mean_ns, d1, sizeof(d1)),
                    gt_fmt_duration((int64_t)k->queue_mean_ns, d2, sizeof(d2)),
                    (unsigned long long)k->launch_bound);
        }
        fputs("</table>\n", out);
    }

    if (r->ngraphs) {
        fputs("<h2>Graph launches by call site</h2>\n<table><tr><th>site</th><th class=n>launches</th>"
              "<th class=n>host</th><th class=n>operations</th><th class=n>kernels</th><th class=n>GPU</th></tr>\n",
              out);
        for (size_t i = 0; i < gt_top(r->ngraphs, o); i++) {
            const struct gt_graph_row *g = &r->graphs[i];
            fputs("<tr><td>", out);
            gt_site_html(out, &g->site);
            fprintf(out, "</td><td class=n>%llu</td><td class=n>%s</td><td class=n>%llu</td><td class=n>%llu</td>"
                         "<td class=n>%s</td></tr>\n",
                    (unsigned long long)g->count, gt_fmt_duration((int64_t)g->api_total_ns, d1, sizeof(d1)),
                    (unsigned long long)g->ops, (unsigned long long)g->kernels,
                    gt_fmt_duration((int64_t)g->gpu_ns, d2, sizeof(d2)));
        }
        fputs("</table>\n", out);
    }

    if (r->ngnodes) {
        fputs("<h2>Graph nodes: what CUDA Graphs ran, by where each node was created</h2>\n<table><tr><th>node</th>"
              "<th>created at</th><th>launched at</th><th class=n>nodes</th><th class=n>runs</th><th class=n>GPU</th>"
              "</tr>\n", out);
        for (size_t i = 0; i < gt_top(r->ngnodes, o); i++) {
            const struct gt_gnode_row *g = &r->gnodes[i];
            fputs("<tr><td>", out);
            gt_put_html(out, g->kernel[0] ? g->kernel : g->kind);
            fputs("</td><td>", out);
            gt_site_html(out, &g->created);
            fputs("</td><td>", out);
            gt_site_html(out, &g->launched);
            fprintf(out, "</td><td class=n>%llu</td><td class=n>%llu</td><td class=n>%s</td></tr>\n",
                    (unsigned long long)g->nodes, (unsigned long long)g->runs,
                    gt_fmt_duration((int64_t)g->gpu_ns, d1, sizeof(d1)));
        }
        fputs("</table>\n", out);
    }

    fputs("<h2>Host-to-device copies by call site</h2>\n", out);
    if (r->summary.mapped_host_allocs)
        fprintf(out, "<p>Mapped (zero-copy) host memory: %s in %llu allocation%s. Kernels read it over the bus as "
                     "they run; CUPTI's kernel records do not say which kernels or how many bytes, so those reads "
                     "are in no figure here.</p>\n",
                gt_fmt_bytes((int64_t)r->summary.mapped_host_bytes, d1, sizeof(d1)),
                (unsigned long long)r->summary.mapped_host_allocs, r->summary.mapped_host_allocs == 1 ? "" : "s");
    nb = 0;
    for (size_t i = 0; i < r->nh2d && nb < 10; i++, nb++) {
        bars[nb].site = &r->h2d[i].site;
        bars[nb].label = NULL;
        bars[nb].value = (double)r->h2d[i].bytes;
        snprintf(bars[nb].shown, sizeof(bars[nb].shown), "%s in %llu, %s pageable",
                 gt_fmt_bytes((int64_t)r->h2d[i].bytes, d1, sizeof(d1)), (unsigned long long)r->h2d[i].count,
                 gt_fmt_bytes((int64_t)r->h2d[i].pageable_bytes, d2, sizeof(d2)));
    }
    gt_bars(out, bars, nb, "#c47a1f");
    if (r->nh2d) {
        fputs("<table><tr><th>site</th><th class=n>bytes</th><th class=n>copies</th><th class=n>host</th>"
              "<th class=n>GPU</th><th class=n>GB/s</th><th class=n>pageable</th><th class=n>blocking</th></tr>\n",
              out);
        for (size_t i = 0; i < gt_top(r->nh2d, o); i++) {
            const struct gt_h2d_row *h = &r->h2d[i];
            fputs("<tr><td>", out);
            gt_site_html(out, &h->site);
            fprintf(out, "</td><td class=n>%s</td><td class=n>%llu</td><td class=n>%s</td>",
                    gt_fmt_bytes((int64_t)h->bytes, d1, sizeof(d1)), (unsigned long long)h->count,
                    gt_fmt_duration((int64_t)h->host_ns, d2, sizeof(d2)));
            fprintf(out, "<td class=n>%s</td><td class=n>%.2f</td><td class=n>%s</td><td class=n>%llu</td></tr>\n",
                    gt_fmt_duration((int64_t)h->gpu_ns, buf, sizeof(buf)), h->bandwidth_gbps,
                    gt_fmt_bytes((int64_t)h->pageable_bytes, d1, sizeof(d1)), (unsigned long long)h->blocking);
        }
        fputs("</table>\n", out);
    }

    fputs("<h2>Syncs by call site</h2>\n", out);
    if (!r->nsyncs) {
        fputs("<p class=dim>none</p>\n", out);
    } else {
        fputs("<table><tr><th>kind</th><th>site</th><th class=n>calls</th><th class=n>blocked</th></tr>\n", out);
        for (size_t i = 0; i < gt_top(r->nsyncs, o); i++) {
            const struct gt_sync_row *y = &r->syncs[i];
            fputs("<tr><td>", out);
            gt_put_html(out, y->kind);
            fputs("</td><td>", out);
            gt_site_html(out, &y->site);
            fprintf(out, "</td><td class=n>%llu</td><td class=n>%s</td></tr>\n", (unsigned long long)y->count,
                    gt_fmt_duration((int64_t)y->blocked_ns, d1, sizeof(d1)));
        }
        fputs("</table>\n", out);
    }
    gt_html_small_tables(out, r, o);
}

/* gt_report_cats.c: GPU time by kind of work (docs/report.md, Kernel
 * categories) in the report's text, JSON and HTML, over the report and
 * per phase and step. Categories that ran nothing are left out; the rest
 * come most GPU time first (ties: in gt_category_names' order, then a
 * user's). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/gt_fmt.h"
#include "output/gt_report_cats.h"

#define U(x) ((unsigned long long)(x))

/* The categories with operations in (ns, count), ordered; returns how many. */
static size_t gt_cats_order(const struct gt_categories *c, const uint64_t *ns, const uint64_t *count, size_t *idx)
{
    size_t n = 0;
    for (size_t i = 0; i < c->n; i++)
        if (count[i])
            idx[n++] = i;
    /* few rows: insertion sort, stable */
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && ns[idx[j]] > ns[idx[j - 1]]; j--) {
            size_t t = idx[j];
            idx[j] = idx[j - 1];
            idx[j - 1] = t;
        }
    return n;
}

static double gt_pct(uint64_t part, uint64_t total)
{
    return total ? 100.0 * (double)part / (double)total : 0.0;
}

static uint64_t gt_sum(const uint64_t *v, size_t n)
{
    uint64_t s = 0;
    for (size_t i = 0; i < n; i++)
        s += v[i];
    return s;
}

void gt_cats_text(FILE *out, const struct gt_categories *c, int gpu)
{
    if (!c->n)
        return;
    size_t idx[c->n];
    size_t n = gt_cats_order(c, c->gpu_ns, c->count, idx);
    fprintf(out, "\nGPU time by kind of work (kernels by name, copies, memsets; %s time)\n", gpu ? "GPU" : "host");
    if (!n) {
        fprintf(out, "  no GPU work\n");
        return;
    }
    for (size_t k = 0; k < n; k++) {
        size_t i = idx[k];
        char d[64];
        fprintf(out, "  %-14s %10s %6.1f%%  %llu op%s\n", c->names[i],
                gt_fmt_duration((int64_t)c->gpu_ns[i], d, sizeof(d)), gt_pct(c->gpu_ns[i], c->total_ns),
                U(c->count[i]), c->count[i] == 1 ? "" : "s");
    }
}

void gt_cats_text_line(FILE *out, const char *indent, const struct gt_categories *c, const uint64_t *ns,
                       const uint64_t *count)
{
    if (!c->n)
        return;
    size_t idx[c->n];
    size_t n = gt_cats_order(c, ns, count, idx);
    if (!n)
        return;
    uint64_t total = gt_sum(ns, c->n);
    int col = fprintf(out, "%sGPU work:", indent);
    for (size_t k = 0; k < n; k++) {
        size_t i = idx[k];
        char d[64], item[160];
        int len = snprintf(item, sizeof(item), " %s %s %.0f%% (%llu)%s", c->names[i],
                           gt_fmt_duration((int64_t)ns[i], d, sizeof(d)), gt_pct(ns[i], total), U(count[i]),
                           k + 1 < n ? "," : "");
        if (col + len > 78) {
            col = fprintf(out, "\n%s ", indent) - 1;
        }
        col += fprintf(out, "%s", item);
    }
    fputc('\n', out);
}

void gt_cats_json_items(FILE *out, int *first, const char *lead, const struct gt_categories *c, const uint64_t *ns,
                        const uint64_t *count)
{
    if (!c->n)
        return;
    size_t idx[c->n];
    size_t n = gt_cats_order(c, ns, count, idx);
    uint64_t total = gt_sum(ns, c->n);
    for (size_t k = 0; k < n; k++) {
        size_t i = idx[k];
        fprintf(out, "%s{%s\"category\":", *first ? "" : ",", lead);
        *first = 0;
        gt_put_json_string(out, c->names[i]);
        fprintf(out, ",\"gpu_ns\":%llu,\"share_pct\":%.6f,\"count\":%llu}", U(ns[i]), gt_pct(ns[i], total),
                U(count[i]));
    }
}

void gt_cats_json(FILE *out, const struct gt_categories *c, const uint64_t *ns, const uint64_t *count)
{
    int first = 1;
    fputc('[', out);
    gt_cats_json_items(out, &first, "", c, ns, count);
    fputc(']', out);
}

void gt_cats_html(FILE *out, const struct gt_categories *c, const struct gt_report *r)
{
    if (!c->n)
        return;
    size_t idx[c->n];
    size_t n = gt_cats_order(c, c->gpu_ns, c->count, idx);
    fputs("<h3 id=categories>GPU time by kind of work</h3>\n", out);
    if (!n) {
        fputs("<p class=dim>no GPU work</p>\n", out);
        return;
    }
    fputs("<table class=cats><tr><th>category</th><th class=n>GPU time</th><th class=n>share</th>"
          "<th class=n>operations</th></tr>\n", out);
    for (size_t k = 0; k < n; k++) {
        size_t i = idx[k];
        char d[64];
        fprintf(out, "<tr><td>%s</td><td class=n>%s</td><td class=n>%.1f%%</td><td class=n>%llu</td></tr>\n",
                c->names[i], gt_fmt_duration((int64_t)c->gpu_ns[i], d, sizeof(d)), gt_pct(c->gpu_ns[i], c->total_ns),
                U(c->count[i]));
    }
    fputs("</table>\n", out);
    /* per phase and per listed step: a column per category that ran
     * anywhere, in the report's order */
    size_t np = r->nphases < c->nphases ? r->nphases : c->nphases;
    size_t ns = r->steps.nslowest < c->nsteps ? r->steps.nslowest : c->nsteps;
    for (int steps = 0; steps < 2; steps++) {
        size_t rows = steps ? ns : np;
        if (!rows)
            continue;
        fprintf(out, "<table class=cats><tr><th>%s</th>", steps ? "slowest step" : "phase");
        for (size_t k = 0; k < n; k++)
            fprintf(out, "<th class=n>%s</th>", c->names[idx[k]]);
        fputs("</tr>\n", out);
        for (size_t p = 0; p < rows; p++) {
            fputs("<tr><td>", out);
            if (steps)
                fprintf(out, "step %lld", (long long)r->steps.slowest[p].number);
            else
                gt_put_html(out, r->phases[p].name);
            fputs("</td>", out);
            const uint64_t *cnt = steps ? c->step_count : c->phase_count, *tns = steps ? c->step_ns : c->phase_ns;
            for (size_t k = 0; k < n; k++) {
                char d[64];
                size_t at = p * c->n + idx[k];
                fprintf(out, "<td class=n>%s</td>",
                        cnt[at] || tns[at] ? gt_fmt_duration((int64_t)tns[at], d, sizeof(d)) : "");
            }
            fputs("</tr>\n", out);
        }
        fputs("</table>\n", out);
    }
}

/* gt_diff_out.c: the comparison as text (what changed beyond the noise,
 * what is new, what vanished), as one JSON document with every row, or as
 * a self-contained HTML page with BASE and NEW side by side. */
#include <stdio.h>

#include "base/gt_fmt.h"
#include "output/gt_diff_out.h"
#include "output/gt_report_html.h"

/* What a row measures, in words: "mean per launch", "calls", ... */
static const char *gt_label(const struct gt_diff_row *r)
{
    static const char *const item[GT_DCATS][GT_DMEASURES] = {
        {"", "", "per launch", "", ""},
        {"GPU time", "launches", "mean per launch", "", ""},
        {"", "launches", "host time per launch", "", ""},
        {"", "calls", "pageable bytes per call", "", ""},
        {"", "calls", "blocked per call", "", ""},
        {"GPU time", "operations", "mean per operation", "", ""},
    };
    if (r->cat == GT_DC_SUMMARY && r->measure == GT_DM_TOTAL)
        return "";
    return item[r->cat][r->measure];
}

/* A figure with its unit: "12.3 ms a step", "300 a run", "5.0 us a call",
 * "41.2% of the work span" (the span less start-up and teardown idle). */
static const char *gt_value(const struct gt_diff *d, const struct gt_diff_row *r, double v, char *buf, size_t len)
{
    char b[32];
    const char *per = d->per_step ? " a step" : " a run";
    switch (r->measure) {
    case GT_DM_COUNT:
        snprintf(buf, len, "%.4g%s", v, per);
        return buf;
    case GT_DM_SHARE:
        snprintf(buf, len, "%.1f%% of the work span", v * 100.0);
        return buf;
    case GT_DM_PER_CALL:
        per = " a call";
        break;
    case GT_DM_ONCE:
        per = " a run";
        break;
    default:
        break;
    }
    if (r->bytes)
        snprintf(buf, len, "%s%s", gt_fmt_bytes((int64_t)(v + 0.5), b, sizeof(b)), per);
    else
        snprintf(buf, len, "%s%s", gt_fmt_duration((int64_t)(v + 0.5), b, sizeof(b)), per);
    return buf;
}

const char *gt_diff_unit(const struct gt_diff *d, const struct gt_diff_row *r)
{
    switch (r->measure) {
    case GT_DM_TOTAL:
        if (d->per_step)
            return r->bytes ? "bytes_per_step" : "ns_per_step";
        return r->bytes ? "bytes_per_run" : "ns_per_run";
    case GT_DM_COUNT:
        return d->per_step ? "calls_per_step" : "calls_per_run";
    case GT_DM_PER_CALL:
        return r->bytes ? "bytes_per_call" : "ns_per_call";
    case GT_DM_SHARE:
        return "share_of_work_span";
    default:
        return "ns_per_run";
    }
}

/* New and vanished kernels and sites are listed once, by their calls. */
static int gt_listed(const struct gt_diff_row *r, int st)
{
    if (r->status != st)
        return 0;
    if ((st == GT_DS_NEW || st == GT_DS_VANISHED) && r->measure != GT_DM_COUNT)
        return 0;
    return st != GT_DS_SAME || r->mean[0] != 0 || r->mean[1] != 0;
}

static void gt_line(FILE *out, const struct gt_diff *d, const struct gt_diff_row *r)
{
    char a[48], b[48];
    const char *label = gt_label(r);
    fprintf(out, "  %-11s ", gt_diff_cat_names[r->cat]);
    gt_put_text(out, r->cat == GT_DC_KERNEL ? gt_kernel_label(r->name) : r->name, 0);
    fprintf(out, ":%s%s %s -> %s", *label ? " " : "", label, gt_value(d, r, r->mean[0], a, sizeof(a)),
            gt_value(d, r, r->mean[1], b, sizeof(b)));
    if (r->status == GT_DS_CHANGED && r->mean[0] > 0)
        fprintf(out, " (%+.1f%%)", r->change_pct);
    fputc('\n', out);
}

void gt_diff_text(FILE *out, const struct gt_diff *d, int all)
{
    char a[32], b[32];
    fprintf(out, "base: %d trace%s, mean span %s; new: %d trace%s, mean span %s; ", d->ntraces[0],
            d->ntraces[0] == 1 ? "" : "s", gt_fmt_duration((int64_t)d->span_ns[0], a, sizeof(a)), d->ntraces[1],
            d->ntraces[1] == 1 ? "" : "s", gt_fmt_duration((int64_t)d->span_ns[1], b, sizeof(b)));
    if (d->per_step) {
        fprintf(out, "totals and counts per step (%llu and %llu steps, mean ", (unsigned long long)d->steps[0],
                (unsigned long long)d->steps[1]);
        fprintf(out, "%s and ", gt_fmt_duration((int64_t)d->step_ns[0], a, sizeof(a)));
        fprintf(out, "%s)\n", gt_fmt_duration((int64_t)d->step_ns[1], b, sizeof(b)));
    } else {
        fprintf(out, "totals and counts per run (no steps)\n");
    }
    static const char *const heads[4] = {"unchanged (within noise):", "changed beyond noise:", "new sites:",
                                         "vanished sites:"};
    static const int order[4] = {GT_DS_CHANGED, GT_DS_NEW, GT_DS_VANISHED, GT_DS_SAME};
    int any = 0;
    for (int k = 0; k < 4; k++) {
        int st = order[k], n = 0;
        if (st == GT_DS_SAME && !all)
            continue;
        for (size_t i = 0; i < d->nrows; i++) {
            const struct gt_diff_row *r = &d->rows[i];
            if (!gt_listed(r, st))
                continue;
            if (!n++)
                fprintf(out, "%s\n", heads[st]);
            gt_line(out, d, r);
            any += st != GT_DS_SAME;
        }
    }
    if (!any)
        fprintf(out, "no change beyond noise, no new or vanished site\n");
}

void gt_diff_json(FILE *out, const struct gt_diff *d)
{
    fprintf(out,
            "{\"per\":\"%s\",\"base\":{\"traces\":%d,\"span_ns\":%.0f,\"steps\":%llu,\"step_ns\":%.0f},"
            "\"new\":{\"traces\":%d,\"span_ns\":%.0f,\"steps\":%llu,\"step_ns\":%.0f},\"rows\":[",
            d->per_step ? "step" : "run", d->ntraces[0], d->span_ns[0], (unsigned long long)d->steps[0],
            d->step_ns[0], d->ntraces[1], d->span_ns[1], (unsigned long long)d->steps[1], d->step_ns[1]);
    for (size_t i = 0; i < d->nrows; i++) {
        const struct gt_diff_row *r = &d->rows[i];
        fprintf(out, "%s{\"kind\":\"%s\",\"name\":", i ? "," : "", gt_diff_cat_names[r->cat]);
        gt_put_json_string(out, r->name);
        fprintf(out,
                ",\"measure\":\"%s\",\"unit\":\"%s\",\"base\":%.12g,\"new\":%.12g,\"base_spread\":%.12g,\"new_spread\":%.12g,"
                "\"base_count\":%llu,\"new_count\":%llu,\"base_raw\":%.3f,\"new_raw\":%.3f,\"change_pct\":%.3f,"
                "\"status\":\"%s\"}",
                gt_diff_measure_names[r->measure], gt_diff_unit(d, r), r->mean[0], r->mean[1], r->spread[0], r->spread[1],
                (unsigned long long)r->count[0], (unsigned long long)r->count[1], r->raw[0], r->raw[1],
                r->change_pct, gt_diff_status_names[r->status]);
    }
    fputs("]}\n", out);
}

/* ---- HTML ---- */

static const char *const gt_diff_cat_titles[GT_DCATS] = {
    "Summary figures", "Kernels: GPU time, launches, mean per launch", "Launch sites: launches, host time per launch",
    "Pageable H2D call sites: calls, bytes per call", "Sync call sites: calls, time blocked per call",
    "Kinds of work: GPU time, operations, mean per operation"};

static void gt_diff_html_row(FILE *out, const struct gt_diff *d, const struct gt_diff_row *r)
{
    char a[48], b[48], sa[48], sb[48];
    fprintf(out, "<tr class=\"%s\" data-kind=\"%s\" data-measure=\"%s\"><td class=name>",
            gt_diff_status_names[r->status], gt_diff_cat_names[r->cat], gt_diff_measure_names[r->measure]);
    gt_put_html(out, r->name);
    fputs("</td><td>", out);
    gt_put_html(out, gt_label(r));
    fprintf(out, "</td><td class=n>%s<br><span class=dim>&plusmn; %s</span></td>",
            gt_value(d, r, r->mean[0], a, sizeof(a)), gt_value(d, r, r->spread[0], sa, sizeof(sa)));
    fprintf(out, "<td class=n>%s<br><span class=dim>&plusmn; %s</span></td>",
            gt_value(d, r, r->mean[1], b, sizeof(b)), gt_value(d, r, r->spread[1], sb, sizeof(sb)));
    if (r->mean[0] > 0)
        fprintf(out, "<td class=n>%+.1f%%</td>", r->change_pct);
    else
        fputs("<td class=n>&ndash;</td>", out);
    if (r->cat != GT_DC_SUMMARY)
        fprintf(out, "<td class=n>%llu &rarr; %llu</td>", (unsigned long long)r->count[0],
                (unsigned long long)r->count[1]);
    else
        fputs("<td class=n></td>", out);
    fprintf(out, "<td class=st>%s</td></tr>\n", gt_diff_status_names[r->status]);
}

void gt_diff_html(FILE *out, const struct gt_diff *d)
{
    char a[32], b[32];
    gt_html_begin_static(out, "gputrace diff");
    fputs("<style>tr.changed td.st,tr.new td.st{color:#b3261e;font-weight:600}tr.vanished td.st{color:#1a7f37;"
          "font-weight:600}tr.same{color:#6b7685}td.name{word-break:break-word}</style>\n",
          out);
    fputs("<h1>gputrace diff</h1>\n<div class=cards>", out);
    fprintf(out, "<div class=card id=base-side>BASE<b>%d trace%s</b>mean span %s</div>", d->ntraces[0],
            d->ntraces[0] == 1 ? "" : "s", gt_fmt_duration((int64_t)d->span_ns[0], a, sizeof(a)));
    fprintf(out, "<div class=card id=new-side>NEW<b>%d trace%s</b>mean span %s</div></div>\n", d->ntraces[1],
            d->ntraces[1] == 1 ? "" : "s", gt_fmt_duration((int64_t)d->span_ns[1], b, sizeof(b)));
    fprintf(out, "<p class=dim>Totals and counts are per %s; times and bytes per call over the side's calls; "
                 "shares of the span (mean over a side's traces, &plusmn; the spread between them).",
            d->per_step ? "step" : "run");
    fputs(" A change is marked only beyond the noise rule of docs/diff.md; sites found on one "
          "side only are new or vanished.</p>\n",
          out);
    static const int order[4] = {GT_DS_CHANGED, GT_DS_NEW, GT_DS_VANISHED, GT_DS_SAME};
    for (int c = 0; c < GT_DCATS; c++) {
        int any = 0;
        for (size_t i = 0; i < d->nrows && !any; i++)
            any = d->rows[i].cat == c;
        if (!any)
            continue;
        fprintf(out, "<h2 id=\"%s\">%s</h2>\n<table><tr><th>%s</th><th class=n>BASE</th><th class=n>NEW</th>"
                     "<th class=n>change</th><th class=n>calls</th><th>status</th></tr>\n",
                gt_diff_cat_names[c], gt_diff_cat_titles[c], c == GT_DC_SUMMARY  ? "figure"
                : c == GT_DC_KERNEL   ? "kernel"
                : c == GT_DC_CATEGORY ? "kind of work"
                                      : "site");
        for (int k = 0; k < 4; k++)
            for (size_t i = 0; i < d->nrows; i++)
                if (d->rows[i].cat == c && d->rows[i].status == order[k])
                    gt_diff_html_row(out, d, &d->rows[i]);
        fputs("</table>\n", out);
    }
    fputs("<p class=dim>Written by gputrace diff.</p>\n</body></html>\n", out);
}

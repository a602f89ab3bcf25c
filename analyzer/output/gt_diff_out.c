/* gt_diff_out.c: the comparison as text (what changed beyond the noise,
 * what is new, what vanished), as one JSON document with every row, or as
 * a self-contained HTML page with BASE and NEW side by side. */
#include <stdio.h>

#include "base/gt_fmt.h"
#include "output/gt_diff_out.h"
#include "output/gt_report_html.h"

/* A rate: "12.3 ms/s" or "1.5 MiB/s"; "3.1 ms a run" for once-a-run figures. */
static const char *gt_rate(const struct gt_diff *d, const struct gt_diff_row *r, double v, char *buf, size_t len)
{
    char b[32];
    const char *per = r->once ? " a run" : d->per_step ? "/step" : "/s";
    if (r->bytes)
        snprintf(buf, len, "%s%s", gt_fmt_bytes((int64_t)(v + 0.5), b, sizeof(b)), per);
    else
        snprintf(buf, len, "%s%s", gt_fmt_duration((int64_t)(v + 0.5), b, sizeof(b)), per);
    return buf;
}

static const char *gt_unit(const struct gt_diff *d, const struct gt_diff_row *r)
{
    if (r->once)
        return "ns_per_run";
    if (d->per_step)
        return r->bytes ? "bytes_per_step" : "ns_per_step";
    return r->bytes ? "bytes_per_s" : "ns_per_s";
}

static void gt_line(FILE *out, const struct gt_diff *d, const struct gt_diff_row *r)
{
    char a[48], b[48];
    fprintf(out, "  %-11s ", gt_diff_cat_names[r->cat]);
    gt_put_text(out, r->name, 0);
    fprintf(out, ": %s -> %s", gt_rate(d, r, r->mean[0], a, sizeof(a)), gt_rate(d, r, r->mean[1], b, sizeof(b)));
    if (r->status == GT_DS_CHANGED && r->mean[0] > 0)
        fprintf(out, " (%+.1f%%)", r->change_pct);
    if (r->cat != GT_DC_SUMMARY)
        fprintf(out, ", %llu -> %llu calls", (unsigned long long)r->count[0], (unsigned long long)r->count[1]);
    fputc('\n', out);
}

void gt_diff_text(FILE *out, const struct gt_diff *d, int all)
{
    char a[32], b[32];
    fprintf(out, "base: %d trace%s, mean span %s; new: %d trace%s, mean span %s; ", d->ntraces[0],
            d->ntraces[0] == 1 ? "" : "s", gt_fmt_duration((int64_t)d->span_ns[0], a, sizeof(a)), d->ntraces[1],
            d->ntraces[1] == 1 ? "" : "s", gt_fmt_duration((int64_t)d->span_ns[1], b, sizeof(b)));
    if (d->per_step) {
        fprintf(out, "figures per step (%llu and %llu steps, mean ", (unsigned long long)d->steps[0],
                (unsigned long long)d->steps[1]);
        fprintf(out, "%s and ", gt_fmt_duration((int64_t)d->step_ns[0], a, sizeof(a)));
        fprintf(out, "%s)\n", gt_fmt_duration((int64_t)d->step_ns[1], b, sizeof(b)));
    } else {
        fprintf(out, "figures per second of span\n");
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
            if (r->status != st || (st == GT_DS_SAME && r->mean[0] == 0 && r->mean[1] == 0))
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
            d->per_step ? "step" : "second", d->ntraces[0], d->span_ns[0], (unsigned long long)d->steps[0],
            d->step_ns[0], d->ntraces[1], d->span_ns[1], (unsigned long long)d->steps[1], d->step_ns[1]);
    for (size_t i = 0; i < d->nrows; i++) {
        const struct gt_diff_row *r = &d->rows[i];
        fprintf(out, "%s{\"kind\":\"%s\",\"name\":", i ? "," : "", gt_diff_cat_names[r->cat]);
        gt_put_json_string(out, r->name);
        fprintf(out,
                ",\"unit\":\"%s\",\"base\":%.3f,\"new\":%.3f,\"base_spread\":%.3f,\"new_spread\":%.3f,"
                "\"base_count\":%llu,\"new_count\":%llu,\"base_raw\":%.3f,\"new_raw\":%.3f,\"change_pct\":%.3f,"
                "\"status\":\"%s\"}",
                gt_unit(d, r), r->mean[0], r->mean[1], r->spread[0], r->spread[1],
                (unsigned long long)r->count[0], (unsigned long long)r->count[1], r->raw[0], r->raw[1],
                r->change_pct, gt_diff_status_names[r->status]);
    }
    fputs("]}\n", out);
}

/* ---- HTML ---- */

static const char *const gt_diff_cat_titles[GT_DCATS] = {
    "Summary figures", "GPU time per kernel", "Host time in launches per launch site",
    "Pageable H2D bytes per call site", "Time blocked in syncs per call site"};

static void gt_diff_html_row(FILE *out, const struct gt_diff *d, const struct gt_diff_row *r)
{
    char a[48], b[48], sa[48], sb[48];
    fprintf(out, "<tr class=\"%s\" data-kind=\"%s\"><td class=name>", gt_diff_status_names[r->status],
            gt_diff_cat_names[r->cat]);
    gt_put_html(out, r->name);
    fprintf(out, "</td><td class=n>%s<br><span class=dim>&plusmn; %s</span></td>", gt_rate(d, r, r->mean[0], a, sizeof(a)),
            gt_rate(d, r, r->spread[0], sa, sizeof(sa)));
    fprintf(out, "<td class=n>%s<br><span class=dim>&plusmn; %s</span></td>", gt_rate(d, r, r->mean[1], b, sizeof(b)),
            gt_rate(d, r, r->spread[1], sb, sizeof(sb)));
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
    fprintf(out, "<p class=dim>Every figure is per %s (mean over a side's traces, &plusmn; the spread "
          "between them).", d->per_step ? "step" : "second of span");
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
                gt_diff_cat_names[c], gt_diff_cat_titles[c], c == GT_DC_SUMMARY ? "figure" : c == GT_DC_KERNEL ? "kernel" : "site");
        for (int k = 0; k < 4; k++)
            for (size_t i = 0; i < d->nrows; i++)
                if (d->rows[i].cat == c && d->rows[i].status == order[k])
                    gt_diff_html_row(out, d, &d->rows[i]);
        fputs("</table>\n", out);
    }
    fputs("<p class=dim>Written by gputrace diff.</p>\n</body></html>\n", out);
}

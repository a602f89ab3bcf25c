/* gt_rank_html.c: the ranks section of the HTML report: the straggler
 * paragraph, a heat map (rank x collectives: how far after the median
 * rank each rank arrived), and the per-rank figures (docs/ranks.md). Its
 * own styles, so it sits in the page gt_report_html.c opens. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/gt_ranks.h"
#include "base/gt_fmt.h"
#include "output/gt_rank_out.h"

static const char *gt_rh_label(const struct gt_rank_row *r, char *buf, size_t len)
{
    snprintf(buf, len, "%s%s", r->sum->has_rank ? "rank " : "", r->sum->rank);
    return buf;
}

void gt_ranks_html(FILE *out, const struct gt_ranks *g)
{
    char a[32], lab[96];
    fprintf(out, "<section id=ranks><h1>Ranks</h1>\n<p class=dim>%zu ranks, %s, %zu collectives matched "
                 "(docs/ranks.md)</p>\n<p>",
            g->nrows, g->one_host ? "one host" : "several hosts (wall clocks)", g->ncolls);
    char *text = gt_ranks_headline_text(g);
    if (text) {
        gt_put_html(out, text);
        free(text);
    }
    fputs("</p>\n", out);
    if (g->heat_cols && g->nrows) {
        double mx = 0;
        for (size_t i = 0; i < g->nrows * g->heat_cols; i++)
            if (g->heat[i] > mx)
                mx = g->heat[i];
        int cw = (int)(800 / g->heat_cols), rh = g->nrows > 64 ? 4 : 14, lw = 70;
        if (cw < 2)
            cw = 2;
        fprintf(out, "<h3>How late each rank arrived at the collectives</h3>\n<p class=dim>Rows: ranks; columns: "
                     "collectives by ordinal, %zu a column; the darker, the further after the median rank (darkest: "
                     "%s).</p>\n",
                g->heat_per, gt_fmt_duration((int64_t)mx, a, sizeof(a)));
        fprintf(out, "<svg id=rank-heat width=%d height=%d role=img>\n", lw + cw * (int)g->heat_cols + 4,
                rh * (int)g->nrows + 4);
        for (size_t i = 0; i < g->nrows; i++) {
            if (rh >= 10) {
                fprintf(out, "<text x=0 y=%d>", (int)i * rh + rh - 3);
                gt_put_html(out, gt_rh_label(&g->rows[i], lab, sizeof(lab)));
                fputs("</text>", out);
            }
            for (size_t c = 0; c < g->heat_cols; c++) {
                double v = g->heat[i * g->heat_cols + c];
                if (v <= 0 || mx <= 0)
                    continue;
                fprintf(out, "<rect x=%d y=%d width=%d height=%d fill=#b3261e fill-opacity=%.3f><title>",
                        lw + (int)c * cw, (int)i * rh, cw, rh, 0.08 + 0.92 * v / mx);
                gt_put_html(out, gt_rh_label(&g->rows[i], lab, sizeof(lab)));
                fprintf(out, ", collectives %zu-%zu: up to %s after the median rank</title></rect>", c * g->heat_per,
                        (c + 1) * g->heat_per - 1, gt_fmt_duration((int64_t)v, a, sizeof(a)));
            }
            fputc('\n', out);
        }
        fputs("</svg>\n", out);
    }
    static const int figs[] = {GT_RF_SPAN, GT_RF_BUSY, GT_RF_IDLE, GT_RF_SYNC, GT_RF_COMPUTE, GT_RF_COLL,
                               GT_RF_COLL_WAIT, GT_RF_COLL_DATA, GT_RF_CAUSED_WAIT};
    static const char *const heads[] = {"span", "GPU busy", "GPU idle", "sync", "compute", "coll", "coll wait",
                                        "coll data", "caused"};
    fputs("<h3>Per rank</h3>\n<p class=dim>+/&minus;: beyond the median by the outlier rule.</p>\n<table "
          "id=rank-table><tr><th>rank</th>",
          out);
    for (size_t f = 0; f < sizeof(figs) / sizeof(figs[0]); f++)
        fprintf(out, "<th class=n>%s</th>", heads[f]);
    fputs("<th>status</th></tr>\n", out);
    for (size_t i = 0; i < g->nrows; i++) {
        const struct gt_rank_row *r = &g->rows[i];
        fputs("<tr><td>", out);
        gt_put_html(out, gt_rh_label(r, lab, sizeof(lab)));
        fputs("</td>", out);
        for (size_t f = 0; f < sizeof(figs) / sizeof(figs[0]); f++) {
            int o = r->outlier[figs[f]];
            fprintf(out, "<td class=\"n%s\">%s%s</td>", o ? " warn" : "",
                    gt_fmt_duration((int64_t)(r->fig[figs[f]] + 0.5), a, sizeof(a)), o > 0 ? "+" : o < 0 ? "&minus;" : "");
        }
        fprintf(out, "<td>%s%s</td></tr>\n", r->straggler ? "straggler " : "", r->sum->complete ? "" : "did not finish");
    }
    fputs("</table></section>\n", out);
}

/* gt_report_html_flame.c: the HTML report's flame graph of GPU idle by host
 * stack (docs/report.md): an icicle, the listed gaps at the top and each
 * stack's frames below, outermost first, each as wide as its share of the
 * idle time (gt_samples.c and gt_flame.c computed it). Drawn as SVG here,
 * each frame's figures in its tooltip; the page's script
 * (gt_report_html_timeline.js, its style beside it) writes a clicked
 * frame's under the graph. Trace strings reach the page through
 * gt_put_html only, and the script reads them back as text (textContent),
 * never as markup. */
#include <stdio.h>

#include "base/gt_fmt.h"
#include "output/gt_report_samples.h"

#define GT_FL_W 1000.0      /* the graph's width, in its own units */
#define GT_FL_ROW 17        /* a row's height, a frame 16 of it */
#define GT_FL_LABEL 24.0    /* a frame narrower than this has no label, only its tooltip */

#define U(x) ((unsigned long long)(x))

/* One line saying a frame's figures: its tooltip and what a click shows. */
static void gt_flame_says(FILE *out, const struct gt_report *r, const struct gt_flame_node *x)
{
    char d[32];
    const struct gt_flame_node *root = &r->flame[0];
    gt_put_html(out, r->flame_text + x->name);
    fprintf(out, ": idle %s, %.1f%% of the idle time, %llu sample%s", gt_fmt_duration((int64_t)x->idle_ns, d, sizeof(d)),
            root->idle_ns ? 100.0 * (double)x->idle_ns / (double)root->idle_ns : 0.0, U(x->samples),
            x->samples == 1 ? "" : "s");
}

void gt_html_host_flame(FILE *out, const struct gt_report *r, int section)
{
    if (!r->has_samples || !r->nflame || !r->flame[0].idle_ns)
        return;
    int depth = 0;
    for (size_t i = 0; i < r->nflame; i++)
        if (r->flame[i].depth > depth)
            depth = r->flame[i].depth;
    double total = (double)r->flame[0].idle_ns;
    fprintf(out, "<div class=gt-flame id=\"flame-%d\">\n<svg class=flame viewBox=\"0 0 %.0f %d\" width=\"100%%\" "
                 "role=img>\n",
            section, GT_FL_W, GT_FL_ROW * (depth + 1));
    for (size_t i = 0; i < r->nflame; i++) {
        const struct gt_flame_node *x = &r->flame[i];
        double w = GT_FL_W * (double)x->idle_ns / total;
        fprintf(out, "<svg class=\"fl\" x=\"%.3f\" y=\"%d\" width=\"%.3f\" height=\"%d\" data-ns=\"%llu\" "
                     "data-x-ns=\"%llu\" data-samples=\"%llu\" data-depth=\"%d\"><rect class=\"fk%d\" width=\"100%%\" "
                     "height=\"100%%\"/>",
                GT_FL_W * (double)x->x_ns / total, GT_FL_ROW * x->depth, w, GT_FL_ROW - 1, U(x->idle_ns), U(x->x_ns),
                U(x->samples), x->depth, x->kind);
        /* the nested svg clips its label to the frame */
        if (w >= GT_FL_LABEL) {
            fputs("<text x=\"3\" y=\"12\">", out);
            gt_put_html(out, r->flame_text + x->name);
            fputs("</text>", out);
        }
        fputs("<title>", out);
        gt_flame_says(out, r, x);
        fputs("</title></svg>\n", out);
    }
    fprintf(out, "</svg>\n<p class=dim id=\"flame-%d-says\">Each frame is as wide as the idle time the host spent in "
                 "it (the gaps' time shared among their samples, as in the table below): Python frames yellow, "
                 "native ones orange, the thread's state blue. Hover or click a frame for its figures.",
            section);
    if (r->flame_hidden)
        fprintf(out, " %zu frame%s narrower than 1/%d of the idle time not drawn.", r->flame_hidden,
                r->flame_hidden == 1 ? "" : "s", GT_FLAME_MIN);
    fputs("</p>\n</div>\n", out);
}

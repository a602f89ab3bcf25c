/* gt_report_html_steps.c: the HTML report's steps table (docs/report.md,
 * Steps): step time p50/p99/max, then the slowest steps with what each
 * spent more time on than the median step. Apart from gt_report_html.c so
 * that the page's layout and this table change on their own. */
#include <stdio.h>

#include "analysis/gt_analyze.h"
#include "base/gt_fmt.h"
#include "output/gt_report_html.h"

static const char *gt_steps_what(int what)
{
    if (what < GT_CAUSES)
        return gt_cause_text[what];
    return what == GT_STEP_SYNCS ? "host time in syncs" : "host time in copy calls";
}

void gt_html_steps(FILE *out, const struct gt_report *r)
{
    const struct gt_steps *st = &r->steps;
    char d1[32], d2[32], d3[32];
    if (!st->count)
        return;
    fprintf(out, "<h2 id=steps>Steps (%llu)</h2>\n<p>Step time p50 %s, p99 %s, max %s.</p>\n",
            (unsigned long long)st->count, gt_fmt_duration((int64_t)st->p50_ns, d1, sizeof(d1)),
            gt_fmt_duration((int64_t)st->p99_ns, d2, sizeof(d2)),
            gt_fmt_duration((int64_t)st->max_ns, d3, sizeof(d3)));
    if (!st->nslowest)
        return;
    fputs("<table class=steps><tr><th class=n>step</th><th>name</th><th class=n>time</th><th class=n>GPU idle</th>"
          "<th>more than the median step</th></tr>\n",
          out);
    for (size_t i = 0; i < st->nslowest; i++) {
        const struct gt_step_row *x = &st->slowest[i];
        fprintf(out, "<tr><td class=n>%lld</td><td><code>", (long long)x->number);
        gt_put_html(out, x->name);
        fprintf(out, "</code></td><td class=n>%s</td><td class=n>%s</td><td>",
                gt_fmt_duration((int64_t)x->dur_ns, d1, sizeof(d1)),
                gt_fmt_duration((int64_t)x->gpu_idle_ns, d2, sizeof(d2)));
        for (int k = 0; k < x->nover; k++) {
            const struct gt_step_over *o = &x->over[k];
            fprintf(out, "%s+%s %s%s", k ? "<br>" : "", gt_fmt_duration((int64_t)(o->ns - o->median_ns), d1, sizeof(d1)),
                    o->what < GT_CAUSES ? "GPU idle, " : "", gt_steps_what(o->what));
            if (o->has_site && o->site.nframes) {
                fputs(" at <code>", out);
                gt_put_html(out, o->site.frames[0]);
                fputs("</code>", out);
            }
        }
        fputs("</td></tr>\n", out);
    }
    fputs("</table>\n", out);
}

/* gt_report_samples.c: the host samples' parts of the report, in text, JSON
 * and HTML (gt_report_samples.h). Prints what gt_samples.c computed. */
#include <stdio.h>
#include <string.h>

#include "base/gt_fmt.h"
#include "output/gt_report_samples.h"

#define U(x) ((unsigned long long)(x))

void gt_text_gap_host(FILE *out, const struct gt_report *r, const struct gt_gap *g)
{
    if (!r->has_samples)
        return;
    if (!g->host_samples) {
        fprintf(out, "    host during the gap: %s\n",
                g->host_tid < 0 ? "no call making GPU work started in it" : "no samples of the launching thread");
        return;
    }
    fprintf(out, "    host during the gap (thread %lld, %llu sample%s%s%s):\n", (long long)g->host_tid,
            U(g->host_samples), g->host_samples == 1 ? "" : "s", g->host_state[0] ? ", mostly " : "", g->host_state);
    for (int i = 0; i < g->nhost; i++) {
        char line[GT_HOST_TEXT + 16];
        snprintf(line, sizeof(line), "%3.0f%% %s", g->host[i].pct, g->host[i].text);
        fputs("      ", out);
        gt_put_text(out, line, 72);
        fputc('\n', out);
    }
    if (!g->waited)
        return;
    if (!g->others_samples) {
        fputs("    the launching thread waited; no other thread ran in the gap\n", out);
        return;
    }
    fprintf(out, "    the launching thread waited; other threads ran (%llu running sample%s):\n",
            U(g->others_samples), g->others_samples == 1 ? "" : "s");
    for (int i = 0; i < g->nothers; i++) {
        char line[GT_HOST_TEXT + 48];
        snprintf(line, sizeof(line), "%3.0f%% thread %lld: %s", g->others[i].pct, (long long)g->others[i].tid,
                 g->others[i].frame);
        fputs("      ", out);
        gt_put_text(out, line, 72);
        fputc('\n', out);
    }
}

void gt_text_host_stacks(FILE *out, const struct gt_report *r)
{
    if (!r->has_samples || !r->nhost_stacks)
        return;
    char d[32];
    fprintf(out, "\nGPU idle by host stack (the launching thread's samples in each listed gap;\n"
                 "where it waited, the other threads' running samples)\n");
    for (size_t i = 0; i < r->nhost_stacks; i++) {
        const struct gt_host_stack_row *x = &r->host_stacks[i];
        fprintf(out, "  %9s %5.1f%%  ", gt_fmt_duration((int64_t)x->idle_ns, d, sizeof(d)), x->pct);
        gt_put_text(out, x->text, 58);
        fputc('\n', out);
    }
    if (r->more.host_stacks)
        fprintf(out, "  ... %zu more stacks (--top 0 for all)\n", r->more.host_stacks);
}

void gt_json_gap_host(FILE *out, const struct gt_report *r, const struct gt_gap *g)
{
    fputs(",\"host\":", out);
    if (!r->has_samples) {
        fputs("null", out);
        return;
    }
    fputs("{\"tid\":", out);
    if (g->host_tid < 0)
        fputs("null", out);
    else
        fprintf(out, "%lld", (long long)g->host_tid);
    fprintf(out, ",\"samples\":%llu,\"state\":", U(g->host_samples));
    gt_put_json_string(out, g->host_state[0] ? g->host_state : NULL);
    fputs(",\"stacks\":[", out);
    for (int i = 0; i < g->nhost; i++) {
        fputs(i ? ",{\"stack\":" : "{\"stack\":", out);
        gt_put_json_string(out, g->host[i].text);
        fprintf(out, ",\"pct\":%.6f}", g->host[i].pct);
    }
    fprintf(out, "],\"waited\":%s,\"others_samples\":%llu,\"others\":[", g->waited ? "true" : "false",
            U(g->others_samples));
    for (int i = 0; i < g->nothers; i++) {
        fprintf(out, "%s{\"tid\":%lld,\"samples\":%llu,\"pct\":%.6f,\"frame\":", i ? "," : "",
                (long long)g->others[i].tid, U(g->others[i].samples), g->others[i].pct);
        gt_put_json_string(out, g->others[i].frame);
        fputc('}', out);
    }
    fputs("]}", out);
}

void gt_json_host_stacks(FILE *out, const struct gt_report_item *v, size_t n)
{
    fputs(",\"idle_by_host_stack\":[", out);
    int first = 1;
    for (size_t t = 0; t < n; t++)
        for (size_t i = 0; i < v[t].r.nhost_stacks; i++) {
            const struct gt_host_stack_row *x = &v[t].r.host_stacks[i];
            fprintf(out, "%s{\"pid\":%lld,\"stack\":", first ? "" : ",", v[t].pid);
            first = 0;
            gt_put_json_string(out, x->text);
            fprintf(out, ",\"idle_ns\":%llu,\"pct\":%.6f,\"samples\":%llu,\"gaps\":%llu}", U(x->idle_ns), x->pct,
                    U(x->samples), U(x->gaps));
        }
    fputc(']', out);
}

void gt_html_host_stacks(FILE *out, const struct gt_report *r, int section)
{
    if (!r->has_samples)
        return;
    char d[32];
    fputs("<h2>GPU idle by host stack</h2>\n<p class=dim>the launching thread's samples in each listed gap "
          "(where it waited on a lock or slept, the other threads' running samples), "
          "each gap's time shared among them</p>\n",
          out);
    if (!r->nhost_stacks) {
        fputs("<p class=dim>no gaps</p>\n", out);
        return;
    }
    gt_html_host_flame(out, r, section);
    fputs("<table><tr><th class=n>idle</th><th class=n>share</th><th class=n>samples</th><th class=n>gaps</th>"
          "<th>host stack</th></tr>\n",
          out);
    for (size_t i = 0; i < r->nhost_stacks; i++) {
        const struct gt_host_stack_row *x = &r->host_stacks[i];
        fprintf(out, "<tr><td class=n>%s</td><td class=n>%.1f%%</td><td class=n>%llu</td><td class=n>%llu</td><td>",
                gt_fmt_duration((int64_t)x->idle_ns, d, sizeof(d)), x->pct, U(x->samples), U(x->gaps));
        gt_put_html(out, x->text);
        fputs("</td></tr>\n", out);
    }
    fputs("</table>\n", out);
}

void gt_html_gap_others(FILE *out, const struct gt_gap *g)
{
    if (!g->waited || !g->others_samples)
        return;
    fputs("<br>the launching thread waited; meanwhile ran:", out);
    for (int i = 0; i < g->nothers; i++) {
        fprintf(out, "<br>%.0f%% thread %lld: ", g->others[i].pct, (long long)g->others[i].tid);
        gt_put_html(out, g->others[i].frame);
    }
}

/* gt_rank_out.c: the ranks section, in text and JSON (docs/ranks.md
 * defines each figure; tests/test_ranks.py recomputes each from the
 * traces with SQL). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/gt_ranks.h"
#include "base/gt_fmt.h"
#include "output/gt_rank_out.h"

#define U(x) ((unsigned long long)(x))

static const char *gt_dur(double ns, char *buf, size_t len)
{
    return gt_fmt_duration((int64_t)(ns + 0.5), buf, len);
}

static void gt_put_where(FILE *out, const struct gt_rank_where *w)
{
    if (w->index < 0)
        return;
    fputs(" in NVTX range '", out);
    gt_put_text(out, w->range, 60);
    fprintf(out, "' #%lld", (long long)w->index);
}

static const char *gt_rank_label(const struct gt_rank_row *r, char *buf, size_t len)
{
    if (r->sum->has_rank)
        snprintf(buf, len, "rank %s", r->sum->rank);
    else
        snprintf(buf, len, "%s", r->sum->rank);
    return buf;
}

char *gt_ranks_headline_text(const struct gt_ranks *g)
{
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    if (!m)
        return NULL;
    gt_ranks_headline(m, g);
    if (fclose(m) != 0) {
        free(text);
        return NULL;
    }
    if (len && text[len - 1] == '\n')
        text[len - 1] = 0;
    return text;
}

void gt_ranks_headline(FILE *out, const struct gt_ranks *g)
{
    char a[32], b[32], c[32], lab[96];
    double others = g->nrows > 1 ? (double)(g->nrows - 1) : 1;
    if (g->worst >= g->nrows) {
        size_t top = g->nrows;
        for (size_t i = 0; i < g->nrows; i++)
            if (top == g->nrows || g->rows[i].fig[GT_RF_CAUSED_WAIT] > g->rows[top].fig[GT_RF_CAUSED_WAIT])
                top = i;
        fprintf(out, "No straggler: no rank made the others wait beyond the rule");
        if (top < g->nrows && g->ncolls)
            fprintf(out, " (the most: %s, %s per other rank, %.1f%% of the median span)",
                    gt_rank_label(&g->rows[top], lab, sizeof(lab)),
                    gt_dur(g->rows[top].fig[GT_RF_CAUSED_WAIT] / others, a, sizeof(a)), g->straggler_wait_pct);
        fputs(".\n", out);
        return;
    }
    const struct gt_rank_row *r = &g->rows[g->worst];
    fprintf(out, "Straggler: %s made the others wait %s in all (%s per other rank, %.1f%% of the median span)",
            gt_rank_label(r, lab, sizeof(lab)), gt_dur(r->fig[GT_RF_CAUSED_WAIT], a, sizeof(a)),
            gt_dur(r->fig[GT_RF_CAUSED_WAIT] / others, b, sizeof(b)), g->straggler_wait_pct);
    if (r->worst_coll != SIZE_MAX) {
        const struct gt_rank_match *m = &g->colls[r->worst_coll];
        fprintf(out, "; worst at collective %u:%u (", m->stream, m->ordinal);
        gt_put_text(out, m->name, 60);
        fputc(')', out);
        gt_put_where(out, &m->where);
        fprintf(out, ", where it arrived %s after the median rank and the others waited %s",
                gt_dur((double)m->late_ns, a, sizeof(a)), gt_dur((double)m->wait_ns, c, sizeof(c)));
    }
    fputs(".", out);
    /* its longest idle gaps while it ran (start-up and tear-down aside),
     * those in the worst collective's NVTX range first: why it was late */
    const struct gt_rank_where *ww = r->worst_coll != SIZE_MAX ? &g->colls[r->worst_coll].where : NULL;
    size_t shown = 0;
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < r->sum->ngaps && shown < 3; i++) {
            const struct gt_rank_gap *x = &r->sum->gaps[i];
            if (x->cause == GT_CAUSE_STARTUP || x->cause == GT_CAUSE_TEARDOWN)
                continue;
            int same = ww && ww->index >= 0 && x->where.index == ww->index && strcmp(x->where.range, ww->range) == 0;
            if (same != (pass == 0))
                continue;
            fprintf(out, "%s %s %s", shown++ ? ";" : " Its longest GPU idle gaps:",
                    gt_dur((double)x->dur_ns, a, sizeof(a)), gt_cause_text[x->cause]);
            gt_put_where(out, &x->where);
            if (x->after[0]) {
                fputs(", ended by ", out);
                gt_put_text(out, x->after_api[0] ? x->after_api : "a call", 40);
                fputs(" at ", out);
                gt_put_text(out, x->after, 200);
            }
        }
    fputs(shown ? ".\n" : "\n", out);
}

static void gt_cell(FILE *out, const struct gt_rank_row *r, int f)
{
    char buf[32], cell[40];
    double v = r->fig[f];
    if (f == GT_RF_H2D)
        gt_fmt_bytes((int64_t)v, buf, sizeof(buf));
    else if (f == GT_RF_PAGEABLE_PCT)
        snprintf(buf, sizeof(buf), "%.1f%%", v);
    else
        gt_dur(v, buf, sizeof(buf));
    snprintf(cell, sizeof(cell), "%s%s", buf, r->outlier[f] > 0 ? "+" : r->outlier[f] < 0 ? "-" : "");
    fprintf(out, " %10s", cell);
}

static void gt_rank_cell_label(FILE *out, const struct gt_rank_row *r)
{
    char lab[96], cell[128];
    snprintf(cell, sizeof(cell), "%s%s%s", gt_rank_label(r, lab, sizeof(lab)), r->straggler ? "*" : "",
             r->sum->complete ? "" : "!");
    fputs(cell, out);
    for (size_t k = strlen(cell); k < 9; k++)
        fputc(' ', out);
}

/* The paragraph, wrapped at 80 columns. */
static void gt_wrap(FILE *out, const char *text)
{
    size_t col = 0;
    const char *p = text;
    while (*p) {
        const char *w = p;
        while (*w && *w != ' ' && *w != '\n')
            w++;
        size_t len = (size_t)(w - p);
        if (col && col + 1 + len > 80) {
            fputc('\n', out);
            col = 0;
        } else if (col) {
            fputc(' ', out);
            col++;
        }
        fwrite(p, 1, len, out);
        col += len;
        p = w;
        while (*p == ' ')
            p++;
        if (*p == '\n') {
            fputc('\n', out);
            col = 0;
            p++;
        }
    }
    if (col)
        fputc('\n', out);
}

void gt_ranks_text(FILE *out, const struct gt_ranks *g, size_t top)
{
    char a[32], b[32], lab[96];
    fprintf(out, "== ranks: %zu, %s, %zu collectives matched%s\n", g->nrows,
            g->one_host ? "one host (its CLOCK_MONOTONIC)" : "several hosts (wall clocks: their skew adds to waits)",
            g->ncolls, !g->ncolls ? "" : g->by_step ? " by NVTX step" : " by order");
    char *text = gt_ranks_headline_text(g);
    if (text) {
        gt_wrap(out, text);
        free(text);
    }
    for (size_t i = 0; i < g->nrows; i++)
        if (!g->rows[i].sum->complete)
            fprintf(out, "%s did not finish (crashed or killed): analysed as far as its\ntrace goes (%s).\n",
                    gt_rank_label(&g->rows[i], lab, sizeof(lab)), g->rows[i].sum->path);
    fprintf(out, "\nper rank (+/-: beyond the median by the outlier rule; *: straggler; !: did not\n"
                 "finish; compute: GPU time in kernels other than collectives)\n");
    static const int t1[] = {GT_RF_SPAN, GT_RF_BUSY, GT_RF_IDLE, GT_RF_LAUNCH_HOST, GT_RF_SYNC, GT_RF_COMPUTE};
    static const int t2[] = {GT_RF_H2D, GT_RF_PAGEABLE_PCT, GT_RF_COLL, GT_RF_COLL_WAIT, GT_RF_COLL_DATA,
                             GT_RF_CAUSED_WAIT};
    fprintf(out, "%-9s %10s %10s %10s %10s %10s %10s\n", "rank", "span", "gpu busy", "gpu idle", "launch", "sync",
            "compute");
    for (size_t i = 0; i < g->nrows; i++) {
        gt_rank_cell_label(out, &g->rows[i]);
        for (size_t f = 0; f < 6; f++)
            gt_cell(out, &g->rows[i], t1[f]);
        fputc('\n', out);
    }
    fprintf(out, "\n(coll: GPU time in collectives, split into waiting for peers and moving\n"
                 "data; caused: time the others waited for this rank; last: collectives it\n"
                 "was last at, by at least 1%% of the median span)\n");
    fprintf(out, "%-9s %10s %10s %10s %10s %10s %10s %4s\n", "rank", "h2d", "pageable", "coll", "coll wait",
            "coll data", "caused", "last");
    for (size_t i = 0; i < g->nrows; i++) {
        gt_rank_cell_label(out, &g->rows[i]);
        for (size_t f = 0; f < 6; f++)
            gt_cell(out, &g->rows[i], t2[f]);
        fprintf(out, " %4llu\n", U(g->rows[i].last_count));
    }
    fputs("\nidle by cause per rank (the three largest)\n", out);
    for (size_t i = 0; i < g->nrows; i++) {
        const struct gt_rank_row *r = &g->rows[i];
        gt_rank_cell_label(out, r);
        int used[GT_CAUSES] = {0};
        for (int k = 0; k < 3; k++) {
            int best = -1;
            for (int c = 0; c < GT_CAUSES; c++)
                if (!used[c] && r->sum->s.idle_by_cause[c] &&
                    (best < 0 || r->sum->s.idle_by_cause[c] > r->sum->s.idle_by_cause[best]))
                    best = c;
            if (best < 0)
                break;
            used[best] = 1;
            fprintf(out, "%s %s %s", k ? "," : "", gt_dur((double)r->sum->s.idle_by_cause[best], a, sizeof(a)),
                    gt_cause_names[best]);
        }
        fputc('\n', out);
    }
    /* the collectives that cost the most waiting */
    size_t n = g->ncolls, *idx = malloc((n ? n : 1) * sizeof(*idx));
    if (!idx)
        return;
    for (size_t i = 0; i < n; i++)
        idx[i] = i;
    for (size_t i = 1; i < n; i++) { /* insertion sort by wait, then order: n is modest */
        size_t x = idx[i], j = i;
        while (j > 0 && g->colls[idx[j - 1]].wait_ns < g->colls[x].wait_ns) {
            idx[j] = idx[j - 1];
            j--;
        }
        idx[j] = x;
    }
    size_t shown = top && top < n ? top : n;
    fprintf(out, "\nstragglers: collectives by the others' wait for the last rank (%zu of %zu)\n", shown, n);
    fprintf(out, "%-7s %5s %-9s %10s %11s  %s\n", "coll", "ranks", "last", "late by", "others wait",
            "kernel, where");
    for (size_t i = 0; i < shown; i++) {
        const struct gt_rank_match *m = &g->colls[idx[i]];
        char id[24];
        snprintf(id, sizeof(id), "%u:%u", m->stream, m->ordinal);
        fprintf(out, "%-7s %5zu %-9s %10s %11s  ", id, m->nranks, gt_rank_label(&g->rows[m->last], lab, sizeof(lab)),
                gt_dur((double)m->late_ns, a, sizeof(a)), gt_dur((double)m->wait_ns, b, sizeof(b)));
        gt_put_text(out, m->name, 28);
        if (m->where.index >= 0) {
            fputs("\n        in NVTX range '", out);
            gt_put_text(out, m->where.range, 40);
            fprintf(out, "' #%lld", (long long)m->where.index);
        }
        fputc('\n', out);
    }
    free(idx);
}

static void gt_put_where_json(FILE *out, const struct gt_rank_where *w)
{
    fputs("\"range\":", out);
    gt_put_json_string(out, w->index >= 0 ? w->range : NULL);
    fprintf(out, ",\"range_index\":%lld", (long long)w->index);
}

void gt_ranks_json(FILE *out, const struct gt_ranks *g, size_t top)
{
    fprintf(out, "{\"one_host\":%s,\"matched_by\":\"%s\",\"median_span_ns\":%.0f,\"floor_ns\":%.0f,\"straggler_wait_pct\":%.6f,"
                 "\"skew_pct\":%.6f,\"worst\":",
            g->one_host ? "true" : "false", g->by_step ? "step" : "order", g->median_span_ns, g->floor_ns, g->straggler_wait_pct, g->skew_pct);
    if (g->worst < g->nrows)
        gt_put_json_string(out, g->rows[g->worst].sum->rank);
    else
        fputs("null", out);
    fputs(",\"headline\":", out);
    char *text = gt_ranks_headline_text(g);
    gt_put_json_string(out, text ? text : "");
    free(text);
    fputs(",\"rows\":[", out);
    for (size_t i = 0; i < g->nrows; i++) {
        const struct gt_rank_row *r = &g->rows[i];
        fputs(i ? ",\n{\"rank\":" : "\n{\"rank\":", out);
        gt_put_json_string(out, r->sum->rank);
        fputs(",\"has_rank\":", out);
        fputs(r->sum->has_rank ? "true" : "false", out);
        fputs(",\"host\":", out);
        gt_put_json_string(out, r->sum->host);
        fprintf(out, ",\"pid\":%lld,\"trace\":", r->sum->pid);
        gt_put_json_string(out, r->sum->path);
        fprintf(out, ",\"complete\":%s,\"straggler\":%s,\"last_count\":%llu", r->sum->complete ? "true" : "false",
                r->straggler ? "true" : "false", U(r->last_count));
        for (int f = 0; f < GT_RFIGS; f++)
            fprintf(out, f == GT_RF_PAGEABLE_PCT ? ",\"%s\":%.6f" : ",\"%s\":%.0f", gt_rank_fig_names[f], r->fig[f]);
        fputs(",\"idle_by_cause_ns\":{", out);
        for (int c = 0; c < GT_CAUSES; c++)
            fprintf(out, "%s\"%s\":%llu", c ? "," : "", gt_cause_names[c], U(r->sum->s.idle_by_cause[c]));
        fputs("},\"outliers\":{", out);
        int first = 1;
        for (int f = 0; f < GT_RFIGS; f++)
            if (r->outlier[f]) {
                fprintf(out, "%s\"%s\":%d", first ? "" : ",", gt_rank_fig_names[f], r->outlier[f]);
                first = 0;
            }
        fputs("},\"gaps\":[", out);
        for (size_t k = 0; k < r->sum->ngaps; k++) {
            const struct gt_rank_gap *x = &r->sum->gaps[k];
            fprintf(out, "%s{\"dur_ns\":%llu,\"cause\":\"%s\",\"after\":", k ? "," : "", U(x->dur_ns),
                    gt_cause_names[x->cause]);
            gt_put_json_string(out, x->after);
            fputs(",\"after_api\":", out);
            gt_put_json_string(out, x->after_api);
            fputc(',', out);
            gt_put_where_json(out, &x->where);
            fputc('}', out);
        }
        fputs("]}", out);
    }
    fputs("],\n\"collectives\":[", out);
    size_t shown = 0;
    for (size_t i = 0; i < g->ncolls; i++) {
        const struct gt_rank_match *c = &g->colls[i];
        if (top && shown >= top)
            break;
        fprintf(out, "%s{\"stream\":%u,\"ordinal\":%u,\"kernel\":", shown ? ",\n" : "\n", c->stream, c->ordinal);
        gt_put_json_string(out, c->name);
        if (g->by_step && c->step >= 0)
            fprintf(out, ",\"step\":%lld,\"in_step\":%u", (long long)c->step, c->in_step);
        else if (g->by_step)
            fprintf(out, ",\"step\":null,\"in_step\":%u", c->in_step);
        else
            fputs(",\"step\":null,\"in_step\":null", out);
        fprintf(out, ",\"ranks\":%zu,\"last\":", c->nranks);
        gt_put_json_string(out, g->rows[c->last].sum->rank);
        fprintf(out, ",\"earliest_ns\":%llu,\"latest_ns\":%llu,\"median_ns\":%llu,\"late_ns\":%llu,\"wait_ns\":%llu,",
                U(c->earliest_ns), U(c->latest_ns), U(c->median_ns), U(c->late_ns), U(c->wait_ns));
        gt_put_where_json(out, &c->where);
        fputc('}', out);
        shown++;
    }
    fprintf(out, "],\"collectives_total\":%zu}", g->ncolls);
}

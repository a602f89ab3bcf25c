/* gt_report_out.h: the report's output formats. Each takes the analysed
 * traces as they are and prints; none computes a figure of its own beyond
 * the sums over processes (gt_report_items_total). */
#ifndef GT_REPORT_OUT_H
#define GT_REPORT_OUT_H

#include <stddef.h>
#include <stdio.h>

#include "analysis/gt_analyze.h"
#include "output/gt_report_html.h"

/* One trace's report, as every output format takes it. */
struct gt_report_item {
    const char *path;
    long long pid;
    char *host;          /* meta.host; NULL when absent */
    int64_t start_ns;    /* meta.start_ns: with host and pid, which run this is */
    int schema_version;
    struct gt_report r;
    struct gt_tl tl;     /* HTML only: the interactive timeline's lanes */
};

/* Totals over processes: sums, with shares recomputed from them. */
struct gt_summary gt_report_items_total(const struct gt_report_item *v, size_t n);

void gt_report_text(FILE *out, const struct gt_report_item *v, size_t n, const struct gt_analyze_opts *o);
void gt_report_json(FILE *out, const struct gt_report_item *v, size_t n);
/* The same with the ranks section (report's "ranks" key) when g is not NULL. */
struct gt_ranks;
void gt_report_json_ranks(FILE *out, const struct gt_report_item *v, size_t n, const struct gt_ranks *g, size_t top);

#endif

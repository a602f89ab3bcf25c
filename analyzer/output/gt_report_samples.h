/* gt_report_samples.h: the host samples' parts of the report (docs/report.md,
 * "Host during the gap", "GPU idle by host stack"), in each format; called
 * by the format's own printer. */
#ifndef GT_REPORT_SAMPLES_H
#define GT_REPORT_SAMPLES_H

#include <stdio.h>

#include "analysis/gt_analyze.h"
#include "output/gt_report_out.h"

/* Text: a gap's "host during the gap" lines (nothing for a trace without
 * samples), and the by-stack section. */
void gt_text_gap_host(FILE *out, const struct gt_report *r, const struct gt_gap *g);
void gt_text_host_stacks(FILE *out, const struct gt_report *r);
/* JSON: a gap's ",\"host\":{...}" (null without samples); the top-level
 * ",\"idle_by_host_stack\":[...]". */
void gt_json_gap_host(FILE *out, const struct gt_report *r, const struct gt_gap *g);
void gt_json_host_stacks(FILE *out, const struct gt_report_item *v, size_t n);
/* HTML: the by-stack section, its flame graph (gt_report_html_flame.c)
 * then its table (nothing for a trace without samples); section numbers
 * the report's traces, for the graph's element ids. */
void gt_html_host_stacks(FILE *out, const struct gt_report *r, int section);
void gt_html_host_flame(FILE *out, const struct gt_report *r, int section);
/* HTML: in a gap's cause cell, the threads that ran while its launching
 * thread waited (nothing otherwise). */
void gt_html_gap_others(FILE *out, const struct gt_gap *g);

#endif

/* gt_report_html.h: the report as one self-contained HTML file. */
#ifndef GT_REPORT_HTML_H
#define GT_REPORT_HTML_H

#include <stdio.h>

#include "analysis/gt_analyze.h"
#include "output/gt_report_html_timeline.h"
#include "trace/gt_trace.h"

void gt_html_begin(FILE *out, const char *title);
/* The same page head without the timeline's script and style (a page
 * with no script at all: gputrace diff). */
void gt_html_begin_static(FILE *out, const char *title);
/* One trace's section; `section` keeps anchors apart between traces. r
 * holds every row and its busy slices (analysed with busy_slices) (the timeline marks every listed gap); the tables show
 * o->top rows each. */
void gt_html_trace(FILE *out, const char *path, long long pid, const struct gt_report *r, const struct gt_tl *tl,
                   const struct gt_analyze_opts *o, int section);
void gt_html_end(FILE *out);
/* The steps table, when r has steps (gt_report_html_steps.c). */
void gt_html_steps(FILE *out, const struct gt_report *r);

#endif

/* gt_report_cats.h: GPU time by kind of work in the report's formats
 * (gt_report_cats.c). */
#ifndef GT_REPORT_CATS_H
#define GT_REPORT_CATS_H

#include <stdint.h>
#include <stdio.h>

#include "analysis/gt_analyze.h"

/* The text report's section over the whole report. */
void gt_cats_text(FILE *out, const struct gt_categories *c, int gpu);
/* One phase's or step's categories on a line ("GPU work: matmul 3 ms 60% (12), ..."). */
void gt_cats_text_line(FILE *out, const char *indent, const struct gt_categories *c, const uint64_t *ns,
                       const uint64_t *count);
/* {lead "category", "gpu_ns", "share_pct", "count"}, ... (no brackets), a
 * comma before each but the first of the list (*first). */
void gt_cats_json_items(FILE *out, int *first, const char *lead, const struct gt_categories *c, const uint64_t *ns,
                        const uint64_t *count);
/* [{"category", "gpu_ns", "share_pct", "count"}...] of one table row. */
void gt_cats_json(FILE *out, const struct gt_categories *c, const uint64_t *ns, const uint64_t *count);
/* The HTML report's table, and one per phase. */
void gt_cats_html(FILE *out, const struct gt_categories *c, const struct gt_report *r);

#endif

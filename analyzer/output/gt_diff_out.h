/* gt_diff_out.h: `gputrace diff` as text, JSON or HTML (docs/diff.md). */
#ifndef GT_DIFF_OUT_H
#define GT_DIFF_OUT_H

#include <stdio.h>

#include "analysis/gt_diff.h"

void gt_diff_text(FILE *out, const struct gt_diff *d, int all);
/* A row's JSON unit: "ns_per_run", "calls_per_step", "share_of_work_span", ... */
const char *gt_diff_unit(const struct gt_diff *d, const struct gt_diff_row *r);
void gt_diff_json(FILE *out, const struct gt_diff *d);
/* One self-contained page, BASE and NEW side by side. */
void gt_diff_html(FILE *out, const struct gt_diff *d);

#endif

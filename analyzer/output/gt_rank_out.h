/* gt_rank_out.h: the ranks section of `report` (text and JSON) and a
 * rank's summary file (`summarize`), docs/ranks.md. */
#ifndef GT_RANK_OUT_H
#define GT_RANK_OUT_H

#include <stdio.h>

#include "analysis/gt_ranks.h"

/* One rank's summary as the JSON file `summarize` writes. */
void gt_rank_summary_write(FILE *out, const struct gt_rank_sum *s, const char *version);
/* The section in text: the straggler paragraph first, then the tables
 * (top: rows of the collectives table; 0: all). */
void gt_ranks_text(FILE *out, const struct gt_ranks *g, size_t top);
/* The section as a JSON object (the value of report's "ranks" key). */
void gt_ranks_json(FILE *out, const struct gt_ranks *g, size_t top);
/* The section in HTML, inside the page gt_html_begin opened
 * (gt_rank_html.c): the paragraph, the heat map, the per-rank table. */
void gt_ranks_html(FILE *out, const struct gt_ranks *g);
/* The one-paragraph answer: who made the others wait, and why. */
void gt_ranks_headline(FILE *out, const struct gt_ranks *g);
/* The same as a string without its last newline, for the formats that
 * escape or wrap it (free it); NULL when out of memory. */
char *gt_ranks_headline_text(const struct gt_ranks *g);

#endif

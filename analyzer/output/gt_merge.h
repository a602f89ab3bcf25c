/* gt_merge.h: many traces into one SQLite file with a rank column on
 * every view (gt_merge.c, docs/ranks.md). */
#ifndef GT_MERGE_H
#define GT_MERGE_H

#include <sqlite3.h>
#include <stdint.h>

#include "trace/gt_trace.h"

/* The views copied, NULL-terminated. */
extern const char *const gt_merge_views[];

/* Creates the tables traces and meta in a new file: 0, or -1 after an error line. */
int gt_merge_begin(sqlite3 *out, const char *out_path);
/* Adds one trace (one transaction); rows counts the rows copied. 0, or -1. */
int gt_merge_one(sqlite3 *out, const char *out_path, struct gt_trace *t, uint64_t *rows);

#endif

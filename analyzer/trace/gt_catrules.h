/* gt_catrules.h: kernel category rules (docs/report.md, "Kernel
 * categories"): ordered GLOB patterns over a kernel's name, each naming a
 * category; the first that matches wins. The defaults ship in
 * analyzer/trace/kernel_categories.tsv, compiled in; a version 9 trace
 * keeps its own copy in kernel_category_rules, and gt_trace_open gives
 * older traces the defaults under that name. */
#ifndef GT_CATRULES_H
#define GT_CATRULES_H

#include <stddef.h>

#include "trace/gt_trace.h"

struct gt_catrule {
    char *pattern, *category;
};

struct gt_catrules {
    struct gt_catrule *v;
    size_t n, cap;
};

/* The compiled-in default rules' text (the .tsv file as it is). */
extern const char *const gt_catrules_default_tsv;
extern const size_t gt_catrules_default_len;

/* Appends the rules of `text` (the .tsv form: pattern, tab, category; #
 * comments). 0, or -1 with *line set to the first line that is not a
 * rule (1-based; 0: out of memory). */
int gt_catrules_parse(struct gt_catrules *r, const char *text, size_t len, size_t *line);
/* The rules a report uses for trace t: the user's file `user` (NULL:
 * $GPUTRACE_CATEGORIES when set and not empty, else none) first, then the
 * trace's kernel_category_rules. 0, or -1 after printing an error. */
int gt_catrules_load(struct gt_trace *t, const char *user, struct gt_catrules *r);
/* The category of a kernel named `name`: the first rule whose pattern
 * matches the whole name (SQLite's GLOB), else "other"; a kernel without a
 * name (NULL) is "other". */
/* Whether the user's file `path` reads as rules: 0, or -1 after printing
 * why not. */
int gt_catrules_check(const char *path);
const char *gt_catrules_match(const struct gt_catrules *r, const char *name);
void gt_catrules_free(struct gt_catrules *r);

/* For traces before version 9: a temporary kernel_category_rules holding
 * the defaults and a kernel_categories view over it, as version 9 traces
 * have (the file is not written). 0, or an SQLite error code. */
int gt_catrules_shim(sqlite3 *db);

#endif

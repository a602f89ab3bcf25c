/* gt_budget.h: the budgets `gputrace audit` checks, and parsing them from
 * the command line and from budget files. No printing and no SQLite here:
 * errors come back as text, so this is unit-tested on its own. */
#ifndef GT_BUDGET_H
#define GT_BUDGET_H

#include <stddef.h>
#include <stdint.h>

enum gt_budget_key {
    GT_BUDGET_IDLE_PCT,           /* max-idle-pct: percent, 0 to 100 */
    GT_BUDGET_PAGEABLE_H2D_BYTES, /* max-pageable-h2d-bytes: bytes */
    GT_BUDGET_LAUNCH_BOUND_PCT,   /* max-launch-bound-pct: percent */
    GT_BUDGET_SYNC_PCT,           /* max-sync-pct: percent */
    GT_BUDGET_STEP_P99,           /* max-step-p99: a duration (docs/report.md, Steps) */
    /* the job budgets (docs/ranks.md): one figure over the ranks, not per trace */
    GT_BUDGET_STRAGGLER_WAIT_PCT, /* max-straggler-wait-pct: percent, 0 or more */
    GT_BUDGET_RANK_SKEW_PCT,      /* max-rank-skew-pct: percent, 0 or more */
    GT_NBUDGETS
};

/* "max-idle-pct", ...: the file keys; the options are the same with "--". */
extern const char *const gt_budget_names[GT_NBUDGETS];

struct gt_budgets {
    int set[GT_NBUDGETS];    /* 1: this budget is checked */
    double pct[GT_NBUDGETS]; /* the limit of a percent budget */
    uint64_t bytes;          /* the limit of max-pageable-h2d-bytes */
    uint64_t ns;             /* the limit of max-step-p99 */
    int line[GT_NBUDGETS];   /* budget-file line that set it; 0: not from a file */
};

/* The key named `name` ("max-idle-pct"), or -1. */
int gt_budget_key(const char *name);
/* 1 if the key's value is a percent, 0 if bytes or a duration. */
int gt_budget_is_pct(int key);
/* 1 if the key's value is a duration (250us, 2ms, 1.5s). */
int gt_budget_is_duration(int key);
/* 1 if the key is a job budget, checked over the ranks together; its
 * percent may exceed 100 (a rank may compute twice as long as the median). */
int gt_budget_is_rank(int key);
/* How many per-trace budgets (not job budgets) are set. */
int gt_budget_count_per_trace(const struct gt_budgets *b);

/* A percent: a decimal number from 0 to 100, optionally followed by '%'.
 * Returns 0, or -1 when `s` is not one. */
int gt_parse_pct(const char *s, double *out);
/* The same from 0 to `max`. */
int gt_parse_pct_upto(const char *s, double max, double *out);
/* A byte count: a whole number, optionally followed by B, K, KiB, M, MiB,
 * G, GiB or T, TiB (binary multiples, any case, spaces allowed before the
 * suffix). Returns 0, or -1 when `s` is not one or overflows. */
int gt_parse_bytes(const char *s, uint64_t *out);

/* Sets budget `name` to `value`. Returns 0, or -1 with a message in err
 * ("unknown budget 'x'...", "max-idle-pct: 'abc' is not a percent..."). */
int gt_budget_set(struct gt_budgets *b, const char *name, const char *value, char *err, size_t errlen);

/* Parses budget-file text: one `KEY = VALUE` per line, '#' starts a
 * comment, blank lines are skipped; a key given twice is an error. Returns
 * 0, or -1 with "line N: reason" in err. */
int gt_budget_parse_text(struct gt_budgets *b, const char *text, char *err, size_t errlen);
/* Reads and parses the file at `path`. Returns 0, or -1 with
 * "PATH: reason" or "PATH:N: reason" in err. */
int gt_budget_load(struct gt_budgets *b, const char *path, char *err, size_t errlen);

/* Copies every budget set in `over` onto `b` (command line over file). */
void gt_budget_merge(struct gt_budgets *b, const struct gt_budgets *over);
/* How many budgets are set. */
int gt_budget_count(const struct gt_budgets *b);

#endif

/* gt_progress.h: a progress line on standard error for commands that read
 * a large trace (export, report): shown once the work has taken 2 s, as a
 * percentage of the rows to read and a rate, rewritten in place on a
 * terminal and printed as plain lines (one every 5 s) otherwise. */
#ifndef GT_PROGRESS_H
#define GT_PROGRESS_H

#include <stdint.h>

extern int gt_progress_quiet;      /* -q: never shown */
extern uint64_t gt_progress_rows;  /* rows read so far */

/* Starts counting toward `total` rows (0: unknown), labelled `what`. */
void gt_progress_begin(const char *what, uint64_t total);
/* Looks at the clock; called every 65536 rows by gt_progress_row. */
void gt_progress_update(void);
/* Clears the line, if one was shown. */
void gt_progress_end(void);

/* One row read: cheap enough for every row of a scan. Scans may run on
 * two threads at once (export's own pass and the gap analysis). */
static inline void gt_progress_row(void)
{
    if ((__atomic_add_fetch(&gt_progress_rows, 1, __ATOMIC_RELAXED) & 0xffff) == 0)
        gt_progress_update();
}

#endif

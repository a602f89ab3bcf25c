/* gt_record_summary.h: what `gputrace record` says when the command ends. */
#ifndef GT_RECORD_SUMMARY_H
#define GT_RECORD_SUMMARY_H

/* Reads the trace paths the traced processes listed in `list_path` and
 * prints a few lines about them on stderr; with say_none (not quiet),
 * says so when there were none: with `capture_range` (the
 * GPUTRACE_CAPTURE_RANGE in force, or NULL), that no range was entered. */
void gt_record_summary(const char *list_path, int say_none, const char *capture_range);

#endif

/* gt_record_summary.h: what `gputrace record` says when the command ends. */
#ifndef GT_RECORD_SUMMARY_H
#define GT_RECORD_SUMMARY_H

/* Reads the trace paths the traced processes listed in `list_path` and
 * prints a few lines about them on stderr. */
void gt_record_summary(const char *list_path);

#endif

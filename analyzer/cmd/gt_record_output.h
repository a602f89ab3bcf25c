/* gt_record_output.h: `gputrace record` checks where the traces will go
 * before it starts the command (docs/cli.md): a process that cannot create
 * its trace runs untraced, and one that finds an earlier trace at the name
 * writes beside it, neither of which is how to learn of a mistake in -o. */
#ifndef GT_RECORD_OUTPUT_H
#define GT_RECORD_OUTPUT_H

/* `pattern` as -o (or the default), for `command`; `per_window` when the
 * traces are windows' (-w1 before the extension). The directory must be
 * one this user can create files in, and a trace already at the name is
 * refused unless `force`. Names that hang on what only the traced process
 * knows (%p, %n, %r) are not checked for an earlier trace. 0, or -1 after
 * one line on stderr. */
int gt_record_check_output(const char *pattern, const char *command, int per_window, int force);

#endif

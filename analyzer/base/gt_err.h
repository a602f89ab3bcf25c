/* gt_err.h: exit statuses and error lines, shared by every layer of the
 * analyzer (a trace that cannot be read is a usage error wherever found). */
#ifndef GT_ERR_H
#define GT_ERR_H

/* Exit statuses shared by every subcommand. */
enum {
    GT_EXIT_OK = 0,
    GT_EXIT_FAIL = 1,   /* ran, but something went wrong while doing the work */
    GT_EXIT_USAGE = 2,  /* bad arguments or unusable input: nothing was done */
};

/* Prints "gputrace: " and the message to stderr. */
void gt_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Prints the message, then a pointer to the subcommand's help, and returns
 * GT_EXIT_USAGE so callers can `return gt_usage_error(...)`. */
int gt_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif

/* gt_cmds.h: the subcommand table shared by the dispatcher and the
 * subcommands, so `help CMD` and `CMD --help` print the same text. */
#ifndef GT_CMDS_H
#define GT_CMDS_H

#include <stdio.h>

#define GT_VERSION "0.1.0"

/* Exit statuses shared by every subcommand. */
enum {
    GT_EXIT_OK = 0,
    GT_EXIT_FAIL = 1,   /* ran, but something went wrong while doing the work */
    GT_EXIT_USAGE = 2,  /* bad arguments or unusable input: nothing was done */
};

struct gt_cmd {
    const char *name;
    const char *summary;  /* one line for the top-level usage */
    int (*run)(int argc, char **argv);  /* argv[0] is the subcommand name */
    void (*usage)(FILE *out);
};

int gt_cmd_record(int argc, char **argv);
void gt_cmd_record_usage(FILE *out);
int gt_cmd_info(int argc, char **argv);
void gt_cmd_info_usage(FILE *out);
int gt_cmd_report(int argc, char **argv);
void gt_cmd_report_usage(FILE *out);
int gt_cmd_audit(int argc, char **argv);
int gt_cmd_export(int argc, char **argv);
void gt_cmd_export_usage(FILE *out);
void gt_cmd_audit_usage(FILE *out);

/* Prints "gputrace: " and the message to stderr. */
void gt_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Prints the message, then a pointer to the subcommand's help, and returns
 * GT_EXIT_USAGE so callers can `return gt_usage_error(...)`. */
int gt_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif

/* gt_cmds.h: the subcommand table shared by the dispatcher and the
 * subcommands, so `help CMD` and `CMD --help` print the same text. */
#ifndef GT_CMDS_H
#define GT_CMDS_H

#include <stdio.h>

#include "base/gt_err.h"

#define GT_VERSION "0.1.0"

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
int gt_cmd_trigger(int argc, char **argv);
void gt_cmd_trigger_usage(FILE *out);
int gt_cmd_diff(int argc, char **argv);
void gt_cmd_diff_usage(FILE *out);
int gt_cmd_merge(int argc, char **argv);
void gt_cmd_merge_usage(FILE *out);
int gt_cmd_summarize(int argc, char **argv);
void gt_cmd_summarize_usage(FILE *out);
/* `audit --baseline ...` (gt_cmd_diff.c) */
int gt_cmd_audit_baseline(int argc, char **argv);

#endif

/* gt_err.c: error lines on stderr, shared by every subcommand. */
#include <stdarg.h>
#include <stdio.h>

#include "base/gt_err.h"

void gt_err(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("gputrace: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

int gt_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("gputrace: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    if (cmd)
        fprintf(stderr, "Try 'gputrace %s --help'.\n", cmd);
    else
        fprintf(stderr, "Try 'gputrace --help'.\n");
    return GT_EXIT_USAGE;
}

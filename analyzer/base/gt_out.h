/* gt_out.h: where a command writes a file it produces: standard output
 * for "-", gzip-compressed (zlib) when the name ends in ".gz", a plain
 * file otherwise. Printers keep writing to a FILE either way. */
#ifndef GT_OUT_H
#define GT_OUT_H

#include <stdio.h>

/* NULL after an error message. */
FILE *gt_out_open(const char *path);
/* Flushes and closes (standard output is flushed, not closed). 0, or -1
 * after an error message naming `path` and the reason: `write_errno` when
 * the writer saw a write fail (errno then), else the close's own. */
int gt_out_close(FILE *f, const char *path, int write_errno);

#endif

/* gt_lines.h: a frame's source file, line and inlined-function chain from
 * the module's DWARF (elfutils libdw), on the writer thread, once per
 * unique frame. */
#ifndef GT_LINES_H
#define GT_LINES_H

#include <stddef.h>
#include <stdint.h>

/* The most frames one instruction expands to: itself and the functions
 * inlined into it, innermost first. Deeper chains keep their innermost. */
#define GT_LINES_MAX 8

struct gt_line {
    char file[512];     /* as the line table names it; "" when unknown */
    int line, column;   /* 0 when unknown */
    char func[512];     /* the inlined function; for the last, the real function's DWARF name or "" */
    int inlined;        /* 1: a function inlined at the next frame's line */
};

/* Resolves the instruction at `offset` (a file address, as frames.offset)
 * in the module at `path`. Fills out[0..n) innermost first, the last
 * being the real (not inlined) function; returns n, 0 when the module has
 * no line information for it. Looks for separate debug information by
 * build-id and .gnu_debuglink under /usr/lib/debug (and the directory in
 * GPUTRACE_DEBUG_DIR); never the network. Modules in the system's library
 * directories (/lib, /usr/lib, /lib64, /usr/lib64, ...) are not resolved. */
int gt_lines_resolve(const char *path, uint64_t offset, struct gt_line *out, int max);
/* Drops every module's debug information. */
void gt_lines_reset(void);

#endif

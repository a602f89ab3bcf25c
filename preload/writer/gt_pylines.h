/* gt_pylines.h: CPython line tables, decoded on the writer thread from the
 * copies hot/gt_python.c made of each code object. */
#ifndef GT_PYLINES_H
#define GT_PYLINES_H

#include <stddef.h>
#include <stdint.h>

/* The source line of instruction `lasti` (code units), from a copy of a
 * code object's co_linetable; -1 when the instruction has none. */
int gt_py_line(int minor, const uint8_t *table, size_t len, int first_line, int lasti);

#endif

/* py_lines: drives the shim's line-table decoder (preload/writer/gt_pylines.c) for
 * tests/test_python.py, which compares it with the interpreter's own
 * co_lines() over whole modules. Each input line:
 *   MINOR FIRST_LINE HEX_TABLE LASTI...
 * Each output line: the decoded line of every LASTI (-1: none). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "writer/gt_pylines.h"

int main(void)
{
    static char buf[1 << 22];
    static unsigned char table[1 << 21];
    while (fgets(buf, sizeof(buf), stdin)) {
        char *save = NULL;
        char *tok = strtok_r(buf, " \n", &save);
        if (!tok)
            continue;
        int minor = atoi(tok);
        int first = atoi(strtok_r(NULL, " \n", &save));
        char *hex = strtok_r(NULL, " \n", &save);
        size_t len = 0;
        if (strcmp(hex, "-") != 0)
            for (; hex[2 * len] && hex[2 * len + 1] && len < sizeof(table); len++) {
                char b[3] = {hex[2 * len], hex[2 * len + 1], 0};
                table[len] = (unsigned char)strtoul(b, NULL, 16);
            }
        const char *sep = "";
        while ((tok = strtok_r(NULL, " \n", &save))) {
            printf("%s%d", sep, gt_py_line(minor, table, len, first, atoi(tok)));
            sep = " ";
        }
        printf("\n");
    }
    return 0;
}

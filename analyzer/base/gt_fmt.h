/* gt_fmt.h: number, size and text formatting shared by report commands. */
#ifndef GT_FMT_H
#define GT_FMT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* "512 B", "1.5 KiB", "40.0 MiB"... (binary units). */
const char *gt_fmt_bytes(int64_t bytes, char *buf, size_t len);
/* The same for sizes up to 2^64 - 1 (16.0 EiB): limits a user gives. */
const char *gt_fmt_ubytes(uint64_t bytes, char *buf, size_t len);
/* "850 ns", "12.3 us", "4.56 ms", "1.234 s", "2 min 3.4 s", "1 h 02 min". */
const char *gt_fmt_duration(int64_t ns, char *buf, size_t len);
/* Parses "250000", "250us", "1.5ms", "2s" (ns, us, ms, s) into ns.
 * Returns 0, or -1 if it is not a non-negative duration. */
int gt_parse_duration(const char *s, uint64_t *ns);
/* The length of a recording window or a wait (record --delay/--duration,
 * trigger --duration and --at +D): as gt_parse_duration, plus m and h, but
 * a unit is required: a bare "10" is rejected, where nsys would read
 * seconds and the budgets read nanoseconds. */
int gt_parse_window_length(const char *s, uint64_t *ns);
/* Writes `s` for a terminal: control characters become '?', and it is cut
 * to `width` columns with "..." (width <= 0: no limit). Bytes of multibyte
 * UTF-8 count one column per character. */
void gt_put_text(FILE *out, const char *s, int width);
/* A kernel's name as text and HTML show it: "(unnamed kernel)" for an
 * empty one, which would print as a blank line (JSON keeps ""). */
const char *gt_kernel_label(const char *name);
/* Writes `s` as a JSON string literal (with quotes); NULL writes null. */
void gt_put_json_string(FILE *out, const char *s);
/* Writes `s` as HTML text or an attribute value: < > & " escaped; NULL
 * writes nothing. */
void gt_put_html(FILE *out, const char *s);

#endif

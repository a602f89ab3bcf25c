/* gt_utf8.h: text outputs (report in every format, info, the chrome-json
 * export) valid whatever bytes the trace's names hold. Kernel, NVTX,
 * thread and file names come from the traced program, which may put any
 * bytes in them; the printers write them as they are, and this one filter
 * between the printers and the file makes the bytes valid UTF-8. */
#ifndef GT_UTF8_H
#define GT_UTF8_H

#include <stddef.h>
#include <stdio.h>

/* A FILE whose writes reach `under` as valid UTF-8: each byte that does
 * not start or continue a well-formed sequence (RFC 3629: no overlong
 * forms, surrogates or code points past U+10FFFF) becomes U+FFFD, and
 * control characters other than tab and newline become '?' (they would
 * make JSON invalid and drive a terminal). Closing it flushes `under`,
 * and closes it too unless it is stdout. NULL (and `under` left as is)
 * if the stream cannot be made. */
FILE *gt_utf8_wrap(FILE *under);

/* The length of the well-formed UTF-8 sequence at s[0..n), or 0 if s[0]
 * starts none (or a sequence cut off before n). */
size_t gt_utf8_seq_len(const unsigned char *s, size_t n);

#endif

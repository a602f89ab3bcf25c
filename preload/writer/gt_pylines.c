/* gt_pylines.c: instruction offset -> source line, from a copy of a code
 * object's line table. Two formats: PEP 626's (3.10) and the location
 * table of 3.11 and later (Objects/locations.md in CPython). Both describe
 * consecutive address ranges, each with a line delta. */
#include "writer/gt_pylines.h"

/* 3.10: (length in bytes, signed line delta) pairs; -128: no line. */
static int gt_py_line_310(const uint8_t *t, size_t len, int line, int addr)
{
    int end = 0;
    for (size_t i = 0; i + 1 < len; i += 2) {
        int start = end;
        end += t[i];
        int delta = (int8_t)t[i + 1];
        int here = -1;
        if (delta != -128) {
            line += delta;
            here = line;
        }
        if (addr >= start && addr < end)
            return here;
    }
    return -1;
}

static const uint8_t *gt_varint(const uint8_t *p, const uint8_t *end, unsigned *out)
{
    unsigned v = 0, shift = 0;
    while (p < end) {
        uint8_t b = *p++;
        v |= (unsigned)(b & 63) << shift;
        shift += 6;
        if (!(b & 64) || shift > 30)
            break;
    }
    *out = v;
    return p;
}

static int gt_line_delta(const uint8_t *p, const uint8_t *end)
{
    int code = (p[0] >> 3) & 15;
    unsigned v;
    switch (code) {
    case 15: /* no location */
        return 0;
    case 14: /* long form */
    case 13: /* no columns */
        gt_varint(p + 1, end, &v);
        return (v & 1) ? -(int)(v >> 1) : (int)(v >> 1);
    case 10:
    case 11:
    case 12: /* one-line forms */
        return code - 10;
    default: /* short forms: same line */
        return 0;
    }
}

/* 3.11+: entries start with a byte whose top bit is set: 1 cccc lll, with
 * lll + 1 code units covered and cccc saying how the line delta follows. */
static int gt_py_line_311(const uint8_t *t, size_t len, int line, int addr)
{
    const uint8_t *p = t, *end = t + len;
    int at = 0;
    while (p < end) {
        if (!(*p & 128))
            return -1; /* not an entry start: a damaged copy */
        int code = (p[0] >> 3) & 15;
        int here = -1;
        if (code != 15) {
            line += gt_line_delta(p, end);
            here = line;
        }
        int next = at + ((p[0] & 7) + 1) * 2;
        if (addr >= at && addr < next)
            return here;
        at = next;
        do
            p++;
        while (p < end && !(*p & 128));
    }
    return -1;
}

int gt_py_line(int minor, const uint8_t *table, size_t len, int first_line, int lasti)
{
    if (lasti < 0 || !table)
        return -1;
    int addr = lasti * 2; /* tables count bytes of 2-byte code units */
    return minor <= 10 ? gt_py_line_310(table, len, first_line, addr)
                       : gt_py_line_311(table, len, first_line, addr);
}

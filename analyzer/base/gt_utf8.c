/* gt_utf8.c: the filter that keeps text outputs valid UTF-8 (gt_utf8.h).
 * A FILE made with fopencookie: printers keep writing with fprintf, and a
 * sequence cut between two writes is held back until its end arrives. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/gt_utf8.h"

struct gt_utf8_out {
    FILE *under;
    unsigned char held[4]; /* the start of a sequence the last write cut */
    size_t nheld;
};

size_t gt_utf8_seq_len(const unsigned char *s, size_t n)
{
    if (n == 0)
        return 0;
    unsigned c = s[0];
    if (c < 0x80)
        return 1;
    size_t len;
    unsigned lo = 0x80, hi = 0xbf; /* the second byte's range */
    if (c >= 0xc2 && c <= 0xdf)
        len = 2;
    else if (c >= 0xe0 && c <= 0xef) {
        len = 3;
        if (c == 0xe0)
            lo = 0xa0; /* no overlong forms */
        else if (c == 0xed)
            hi = 0x9f; /* no surrogates */
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4;
        if (c == 0xf0)
            lo = 0x90;
        else if (c == 0xf4)
            hi = 0x8f; /* nothing past U+10FFFF */
    } else
        return 0;
    if (n < len)
        return 0;
    if (s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < len; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    return len;
}

/* Whether s[0..n) could still become a well-formed sequence with more
 * bytes (a write cut it). */
static int gt_utf8_could_continue(const unsigned char *s, size_t n)
{
    unsigned char probe[4];
    memcpy(probe, s, n);
    size_t want = s[0] >= 0xf0 ? 4 : s[0] >= 0xe0 ? 3 : 2;
    if (s[0] < 0xc2 || s[0] > 0xf4 || n >= want)
        return 0;
    /* Completed with the smallest continuation the lead byte allows. */
    unsigned lo = s[0] == 0xe0 ? 0xa0 : s[0] == 0xf0 ? 0x90 : 0x80;
    for (size_t i = n; i < want; i++)
        probe[i] = i == 1 ? (unsigned char)lo : 0x80;
    return gt_utf8_seq_len(probe, want) == want;
}

static int gt_utf8_put(struct gt_utf8_out *o, const unsigned char *s, size_t n)
{
    return n == 0 || fwrite(s, 1, n, o->under) == n ? 0 : -1;
}

/* Writes s[0..n) cleaned; keeps a cut sequence at the end when `more`. */
static int gt_utf8_clean(struct gt_utf8_out *o, const unsigned char *s, size_t n, int more)
{
    static const unsigned char fffd[3] = {0xef, 0xbf, 0xbd};
    size_t run = 0, i = 0; /* s[run..i) is clean and not yet written */
    while (i < n) {
        unsigned c = s[i];
        if (c >= 0x20 && c < 0x7f) {
            i++;
            continue;
        }
        size_t len = c < 0x80 ? 1 : gt_utf8_seq_len(s + i, n - i);
        if (c < 0x80 ? (c == '\n' || c == '\t' || c == 0x7f) : len > 0) {
            i += len;
            continue;
        }
        if (gt_utf8_put(o, s + run, i - run) < 0)
            return -1;
        if (more && c >= 0x80 && n - i < 4 && gt_utf8_could_continue(s + i, n - i)) {
            memcpy(o->held, s + i, n - i);
            o->nheld = n - i;
            return 0;
        }
        if (c < 0x80 ? gt_utf8_put(o, (const unsigned char *)"?", 1) : gt_utf8_put(o, fffd, 3))
            return -1;
        run = ++i;
    }
    return gt_utf8_put(o, s + run, i - run);
}

static ssize_t gt_utf8_write(void *cookie, const char *buf, size_t len)
{
    struct gt_utf8_out *o = cookie;
    const unsigned char *s = (const unsigned char *)buf;
    size_t used = 0;
    if (o->nheld) {
        /* the held start and this write's first bytes, as one piece */
        unsigned char join[8];
        size_t take = len < 4 ? len : 4;
        memcpy(join, o->held, o->nheld);
        memcpy(join + o->nheld, s, take);
        size_t n = o->nheld + take, seq = gt_utf8_seq_len(join, n);
        size_t had = o->nheld;
        o->nheld = 0;
        if (seq > had) {
            if (gt_utf8_put(o, join, seq) < 0)
                return -1;
            used = seq - had;
        } else if (n < 4 && gt_utf8_could_continue(join, n) && take == len) {
            memcpy(o->held, join, n); /* still cut: wait for more */
            o->nheld = n;
            return (ssize_t)len;
        } else if (gt_utf8_clean(o, join, had, 0) < 0) { /* the held bytes were not a start */
            return -1;
        }
    }
    /* Passed on at once: stderr's lines between traces stay in order. */
    if (gt_utf8_clean(o, s + used, len - used, 1) < 0 || fflush(o->under) != 0) {
        errno = errno ? errno : EIO;
        return -1;
    }
    return (ssize_t)len;
}

static int gt_utf8_close(void *cookie)
{
    struct gt_utf8_out *o = cookie;
    int rc = o->nheld ? gt_utf8_clean(o, o->held, o->nheld, 0) : 0;
    int err = ferror(o->under) ? (errno ? errno : EIO) : 0;
    if (o->under == stdout ? fflush(o->under) != 0 : fclose(o->under) != 0)
        rc = -1, err = errno ? errno : EIO;
    else if (err)
        rc = -1;
    free(o);
    if (rc < 0)
        errno = err ? err : EIO;
    return rc;
}

FILE *gt_utf8_wrap(FILE *under)
{
    struct gt_utf8_out *o = calloc(1, sizeof(*o));
    if (!o)
        return NULL;
    o->under = under;
    cookie_io_functions_t io = {.write = gt_utf8_write, .close = gt_utf8_close};
    FILE *f = fopencookie(o, "w", io);
    if (!f) {
        free(o);
        return NULL;
    }
    setvbuf(f, NULL, _IOFBF, 1 << 16);
    return f;
}

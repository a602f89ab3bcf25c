/* gt_spans.c: the span log (see gt_spans.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/gt_spans.h"

static void gt_put_varint(uint8_t *p, size_t *off, uint64_t v)
{
    while (v >= 0x80) {
        p[(*off)++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p[(*off)++] = (uint8_t)v;
}

static uint64_t gt_get_varint(const uint8_t *p, size_t *off)
{
    uint64_t v = 0;
    for (int shift = 0;; shift += 7) {
        uint8_t b = p[(*off)++];
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            return v;
    }
}

static FILE *gt_spans_tmpfile(void)
{
    const char *dir = getenv("TMPDIR");
    char path[4096];
    snprintf(path, sizeof(path), "%s/gputrace-spans-XXXXXX", dir && *dir ? dir : "/tmp");
    int fd = mkstemp(path);
    if (fd < 0)
        return NULL;
    unlink(path);
    FILE *f = fdopen(fd, "w+b");
    if (!f)
        close(fd);
    return f;
}

void gt_spanlog_add(struct gt_spanlog *l, int cat, uint64_t start, uint64_t end, uint32_t site, uint32_t api)
{
    if (l->failed)
        return;
    /* a full log goes to disk (records never straddle a write) */
    if (l->len + 32 > l->cap && l->cap >= GT_SPANLOG_MEM) {
        if ((!l->file && !(l->file = gt_spans_tmpfile())) || fwrite(l->buf, 1, l->len, l->file) != l->len) {
            l->failed = 1;
            return;
        }
        l->spilled += l->len;
        l->len = 0;
    }
    if (l->len + 32 > l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 1 << 20;
        uint8_t *b = realloc(l->buf, cap);
        if (!b) {
            l->failed = 1;
            return;
        }
        l->buf = b;
        l->cap = cap;
    }
    /* starts come nearly in order: small deltas, signed (zigzag) */
    int64_t d = (int64_t)(start - l->prev);
    gt_put_varint(l->buf, &l->len, ((uint64_t)d << 1) ^ (uint64_t)(d >> 63));
    gt_put_varint(l->buf, &l->len, end > start ? end - start : 0);
    l->buf[l->len++] = (uint8_t)cat;
    gt_put_varint(l->buf, &l->len, site);
    gt_put_varint(l->buf, &l->len, api);
    l->prev = start;
    if (!l->n || start > l->max_start)
        l->max_start = start;
    else if (l->max_start - start > l->lateness)
        l->lateness = l->max_start - start;
    l->n++;
}

struct gt_span {
    uint64_t start, end;
    int cat;
    uint32_t site, api;
};

struct gt_span_heap {
    struct gt_span *v;
    size_t n, cap;
};

static int gt_span_push(struct gt_span_heap *h, struct gt_span x)
{
    if (h->n == h->cap) {
        size_t cap = h->cap ? h->cap * 2 : 1024;
        struct gt_span *v = realloc(h->v, cap * sizeof(*v));
        if (!v)
            return -1;
        h->v = v;
        h->cap = cap;
    }
    size_t i = h->n++;
    while (i > 0 && h->v[(i - 1) / 2].start > x.start) {
        h->v[i] = h->v[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h->v[i] = x;
    return 0;
}

static struct gt_span gt_span_pop(struct gt_span_heap *h)
{
    struct gt_span top = h->v[0], last = h->v[--h->n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= h->n)
            break;
        if (c + 1 < h->n && h->v[c + 1].start < h->v[c].start)
            c++;
        if (last.start <= h->v[c].start)
            break;
        h->v[i] = h->v[c];
        i = c;
    }
    if (h->n)
        h->v[i] = last;
    return top;
}

/* The log read back in order: what went to disk, then the buffer. */
struct gt_span_reader {
    const struct gt_spanlog *l;
    uint8_t *win;               /* a window on the file */
    size_t off, len;            /* in the window (or in the buffer, once there) */
    uint64_t file_at;           /* the file's bytes read into windows */
    int in_buf;
};

#define GT_SPAN_WINDOW (1u << 20)

/* At least one whole record ahead of off (records are under 32 bytes),
 * or all that is left. 0; -1 on a read error. */
static int gt_span_ahead(struct gt_span_reader *r)
{
    if (r->in_buf || r->len - r->off >= 32)
        return 0;
    const struct gt_spanlog *l = r->l;
    if (r->file_at < l->spilled) {
        size_t keep = r->len - r->off;
        memmove(r->win, r->win + r->off, keep);
        size_t want = GT_SPAN_WINDOW - keep;
        if (want > l->spilled - r->file_at)
            want = (size_t)(l->spilled - r->file_at);
        if (pread(fileno(l->file), r->win + keep, want, (off_t)r->file_at) != (ssize_t)want)
            return -1;
        r->file_at += want;
        r->off = 0;
        r->len = keep + want;
        return 0;
    }
    if (r->off < r->len)
        return 0;
    /* the file is done, on a record's boundary: the buffer follows */
    r->in_buf = 1;
    r->off = 0;
    r->len = l->len;
    return 0;
}

int gt_spanlog_replay(const struct gt_spanlog *l, gt_spanlog_fn fn, void *arg)
{
    struct gt_span_heap h = {0};
    uint64_t prev = 0, max_start = 0;
    struct gt_span_reader rd = {.l = l, .in_buf = !l->spilled};
    if (l->spilled) {
        if (fflush(l->file) != 0 || !(rd.win = malloc(GT_SPAN_WINDOW)))
            return -1;
    } else {
        rd.len = l->len;
    }
    int rc = 0;
    for (size_t i = 0; i < l->n; i++) {
        if (gt_span_ahead(&rd) < 0) {
            rc = -1;
            break;
        }
        const uint8_t *b = rd.in_buf ? l->buf : rd.win;
        size_t off = rd.off;
        uint64_t z = gt_get_varint(b, &off);
        int64_t d = (int64_t)(z >> 1) ^ -(int64_t)(z & 1);
        struct gt_span x;
        x.start = prev + (uint64_t)d;
        x.end = x.start + gt_get_varint(b, &off);
        x.cat = b[off++];
        x.site = (uint32_t)gt_get_varint(b, &off);
        x.api = (uint32_t)gt_get_varint(b, &off);
        rd.off = off;
        prev = x.start;
        if (!l->lateness && (!i || x.start >= max_start)) {
            /* in order already: no buffer */
            max_start = x.start;
            fn(x.cat, x.start, x.end, x.site, x.api, arg);
            continue;
        }
        if (gt_span_push(&h, x) < 0) {
            rc = -1;
            break;
        }
        if (!i || x.start > max_start)
            max_start = x.start;
        /* every call still to come starts at max_start - lateness or later */
        while (h.n && h.v[0].start + l->lateness <= max_start) {
            struct gt_span y = gt_span_pop(&h);
            fn(y.cat, y.start, y.end, y.site, y.api, arg);
        }
    }
    while (rc == 0 && h.n) {
        struct gt_span y = gt_span_pop(&h);
        fn(y.cat, y.start, y.end, y.site, y.api, arg);
    }
    free(h.v);
    free(rd.win);
    return rc;
}

void gt_spanlog_free(struct gt_spanlog *l)
{
    free(l->buf);
    if (l->file)
        fclose(l->file);
    memset(l, 0, sizeof(*l));
}

/* The calls from SQLite name their sites by stack key; the sweep by index. */
struct gt_keyed {
    struct gt_sites *sites;
    gt_spanlog_fn fn;
    void *arg;
};

static void gt_keyed_call(int cat, uint64_t start, uint64_t end, int64_t site_key, uint32_t api, void *arg)
{
    struct gt_keyed *k = arg;
    k->fn(cat, start, end, gt_site_index(k->sites, site_key), api, k->arg);
}

int gt_spans_scan(struct gt_scan *scan, struct gt_sites *sites, gt_spanlog_fn fn, void *arg)
{
    struct gt_keyed k = {sites, fn, arg};
    return gt_scan_call_spans(scan, gt_keyed_call, &k);
}

/* gt_extsort.c: sorting in bounded memory through runs on disk (see
 * gt_extsort.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/gt_err.h"
#include "base/gt_extsort.h"

#define GT_XS_READ (16 * 1024)

/* One run being merged: its records in [next, end) on disk, a buffer of
 * them read ahead; the buffer's own run (the last) reads from memory.
 * Keyed runs are bytes on disk (next, end count bytes), decoded from raw
 * into buf. */
struct gt_xs_run {
    uint64_t next, end;
    unsigned char *buf;     /* NULL: the sort's own buffer */
    size_t have, at;        /* records in buf, the current one */
    unsigned char *raw;     /* keyed: bytes read, not yet decoded */
    size_t raw_len, raw_at;
    uint32_t key;           /* keyed: the last record decoded */
    uint64_t value;
};

/* The sort fails, said once a process: a temporary file that could not
 * be written or read (a full disk), or memory. */
static void gt_xs_fail(struct gt_extsort *s, int file)
{
    /* one line, however many sorts (and threads) meet the same full disk */
    static int said;
    if (!s->failed && !__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED)) {
        const char *dir = getenv("TMPDIR");
        if (file)
            gt_err("a temporary file in %s: %s", dir && *dir ? dir : "/tmp", strerror(errno ? errno : EIO));
        else
            gt_err("out of memory");
    }
    s->failed = 1;
}

/* A buffer slot: the record, padded to 8 bytes. */
static size_t gt_xs_stride(const struct gt_extsort *s)
{
    return (s->size + 7) & ~(size_t)7;
}

void gt_xs_init(struct gt_extsort *s, size_t size, gt_xs_cmp cmp, void *cmp_arg, size_t mem)
{
    memset(s, 0, sizeof(*s));
    s->size = size;
    s->cmp = cmp;
    s->cmp_arg = cmp_arg;
    /* a test's way to make small traces spill (docs/performance.md) */
    const char *env = getenv("GPUTRACE_SORT_MEM");
    if (env && *env)
        mem = (size_t)strtoull(env, NULL, 10);
    s->cap = mem / gt_xs_stride(s);
    if (s->cap < 16)
        s->cap = 16;
}

int gt_xs_keyed_cmp(const void *a, const void *b, void *arg)
{
    (void)arg;
    const struct gt_xs_keyed *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->value < y->value ? -1 : x->value > y->value;
}

void gt_xs_init_keyed(struct gt_extsort *s, size_t mem)
{
    gt_xs_init(s, sizeof(struct gt_xs_keyed), gt_xs_keyed_cmp, NULL, mem);
    s->keyed = 1;
}

void gt_xs_free(struct gt_extsort *s)
{
    for (size_t i = 0; s->runs && i < s->nrunsread; i++) {
        free(s->runs[i].buf);
        free(s->runs[i].raw);
    }
    free(s->runs);
    free(s->heap);
    free(s->buf);
    if (s->file)
        fclose(s->file);
    free(s->run_start);
    memset(s, 0, sizeof(*s));
}

static int gt_xs_slot_cmp(const void *a, const void *b, void *arg)
{
    const struct gt_extsort *s = arg;
    return s->cmp(a, b, s->cmp_arg);
}

static int gt_xs_bits(uint64_t v)
{
    return v ? 64 - __builtin_clzll(v) : 0;
}

/* Keyed records (struct gt_xs_keyed) by key, then value: each packed
 * into one 64-bit word (the key above the bits the buffer's values use),
 * the words sorted by radix, least significant 11 bits first, over only
 * the bits in use (two passes for most buffers), and unpacked. Keys and
 * values too wide to share 64 bits are left to qsort (-1). */
static int gt_xs_radix(struct gt_extsort *s)
{
    struct gt_xs_keyed *a = (struct gt_xs_keyed *)(void *)s->buf;
    uint64_t anyv = 0, anyk = 0;
    for (size_t i = 0; i < s->n; i++) {
        anyv |= a[i].value;
        anyk |= a[i].key;
    }
    int vbits = gt_xs_bits(anyv), bits = vbits + gt_xs_bits(anyk);
    if (bits > 64)
        return -1;
    uint64_t *w = malloc(2 * s->n * sizeof(*w));
    if (!w)
        return -1;
    uint64_t *x = w, *y = w + s->n;
    for (size_t i = 0; i < s->n; i++)
        x[i] = vbits == 64 ? a[i].value : (uint64_t)a[i].key << vbits | a[i].value;
    size_t count[2048];
    for (int shift = 0; shift < bits; shift += 11) {
        memset(count, 0, sizeof(count));
        for (size_t i = 0; i < s->n; i++)
            count[x[i] >> shift & 2047]++;
        size_t at = 0;
        for (int d = 0; d < 2048; d++) {
            size_t c = count[d];
            count[d] = at;
            at += c;
        }
        for (size_t i = 0; i < s->n; i++)
            y[count[x[i] >> shift & 2047]++] = x[i];
        uint64_t *t = x;
        x = y;
        y = t;
    }
    uint64_t vmask = vbits == 64 ? ~0ull : (1ull << vbits) - 1;
    for (size_t i = 0; i < s->n; i++) {
        a[i].key = vbits == 64 ? 0 : (uint32_t)(x[i] >> vbits);
        a[i].pad = 0;
        a[i].value = x[i] & vmask;
    }
    free(w);
    return 0;
}

static void gt_xs_sort_buffer(struct gt_extsort *s)
{
    size_t stride = gt_xs_stride(s);
    /* operations come nearly in order, often wholly: checked first */
    size_t i = 1;
    while (i < s->n && s->cmp(s->buf + (i - 1) * stride, s->buf + i * stride, s->cmp_arg) <= 0)
        i++;
    if (i >= s->n)
        return;
    if (s->keyed && gt_xs_radix(s) == 0)
        return;
    qsort_r(s->buf, s->n, stride, gt_xs_slot_cmp, s);
}

/* The temporary file the runs go to, unlinked at once. */
static FILE *gt_xs_tmpfile(void)
{
    const char *dir = getenv("TMPDIR");
    if (!dir || !*dir)
        dir = "/tmp";
    size_t n = strlen(dir) + 32;
    char *path = malloc(n);
    if (!path)
        return NULL;
    snprintf(path, n, "%s/gputrace-sort-XXXXXX", dir);
    int fd = mkstemp(path);
    if (fd >= 0)
        unlink(path);
    free(path);
    if (fd < 0)
        return NULL;
    FILE *f = fdopen(fd, "w+b");
    if (!f)
        close(fd);
    return f;
}

static size_t gt_xs_put(unsigned char *p, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (unsigned char)v;
    return n;
}

/* A varint of p[*at..len); -1 when it runs past len. */
static int gt_xs_get(const unsigned char *p, size_t len, size_t *at, uint64_t *v)
{
    uint64_t x = 0;
    for (size_t i = *at, shift = 0; i < len && shift < 64; i++, shift += 7) {
        x |= (uint64_t)(p[i] & 0x7f) << shift;
        if (!(p[i] & 0x80)) {
            *at = i + 1;
            *v = x;
            return 0;
        }
    }
    return -1;
}

/* A sorted keyed buffer as bytes: each record's key less the one before
 * it, then its value (less the one before it under the same key), as
 * varints: 2 to 4 bytes a record rather than 16. *bytes: written. */
static int gt_xs_spill_keyed(struct gt_extsort *s, uint64_t *bytes)
{
    unsigned char out[GT_XS_READ];
    size_t len = 0;
    uint64_t all = 0;
    uint32_t key = 0;
    uint64_t value = 0;
    const struct gt_xs_keyed *a = (const struct gt_xs_keyed *)(const void *)s->buf;
    for (size_t i = 0; i < s->n; i++) {
        if (len + 32 > sizeof(out)) {
            if (fwrite(out, 1, len, s->file) != len)
                return -1;
            all += len;
            len = 0;
        }
        len += gt_xs_put(out + len, a[i].key - key);
        len += gt_xs_put(out + len, a[i].key == key ? a[i].value - value : a[i].value);
        key = a[i].key;
        value = a[i].value;
    }
    if (len && fwrite(out, 1, len, s->file) != len)
        return -1;
    *bytes = all + len;
    return 0;
}

/* The full buffer, sorted, as one more run. */
static int gt_xs_spill(struct gt_extsort *s)
{
    if (!s->file && !(s->file = gt_xs_tmpfile()))
        return -1;
    if (s->nruns == s->capruns) {
        size_t cap = s->capruns ? s->capruns * 2 : 16;
        uint64_t *r = realloc(s->run_start, (cap + 1) * sizeof(*r));
        if (!r)
            return -1;
        s->run_start = r;
        s->capruns = cap;
    }
    if (!s->nruns)
        s->run_start[0] = 0;
    gt_xs_sort_buffer(s);
    uint64_t wrote = s->n;
    if (s->keyed) {
        if (gt_xs_spill_keyed(s, &wrote) < 0)
            return -1;
    } else {
        size_t stride = gt_xs_stride(s);
        for (size_t i = 0; stride != s->size && i < s->n; i++)
            memmove(s->buf + i * s->size, s->buf + i * stride, s->size);
        if (fwrite(s->buf, s->size, s->n, s->file) != s->n)
            return -1;
    }
    s->run_start[s->nruns + 1] = s->run_start[s->nruns] + wrote;
    s->nruns++;
    s->n = 0;
    return 0;
}

void gt_xs_add(struct gt_extsort *s, const void *rec)
{
    if (s->failed)
        return;
    if (s->reading) {
        s->failed = 1;
        return;
    }
    if (!s->buf && !(s->buf = malloc(s->cap * gt_xs_stride(s)))) {
        gt_xs_fail(s, 0);
        return;
    }
    if (s->n == s->cap && gt_xs_spill(s) < 0) {
        gt_xs_fail(s, 1);
        return;
    }
    memcpy(s->buf + s->n * gt_xs_stride(s), rec, s->size);
    s->n++;
    s->total++;
}


static int gt_xs_pread(struct gt_extsort *s, unsigned char *to, size_t bytes, uint64_t off)
{
    for (size_t got = 0; got < bytes;) {
        ssize_t k = pread(fileno(s->file), to + got, bytes - got, (off_t)(off + got));
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        got += (size_t)k;
    }
    return 0;
}

/* A keyed run's next records, decoded from its bytes. */
static int gt_xs_fill_keyed(struct gt_extsort *s, struct gt_xs_run *r)
{
    size_t want = GT_XS_READ / sizeof(struct gt_xs_keyed);
    struct gt_xs_keyed *out = (struct gt_xs_keyed *)(void *)r->buf;
    r->have = r->at = 0;
    while (r->have < want) {
        /* a whole record (at most 15 bytes) ahead, or the run's end */
        if (r->raw_len - r->raw_at < 16 && r->next < r->end) {
            size_t keep = r->raw_len - r->raw_at;
            memmove(r->raw, r->raw + r->raw_at, keep);
            size_t more = GT_XS_READ - keep;
            if (more > r->end - r->next)
                more = (size_t)(r->end - r->next);
            if (gt_xs_pread(s, r->raw + keep, more, r->next) < 0)
                return -1;
            r->next += more;
            r->raw_len = keep + more;
            r->raw_at = 0;
        }
        if (r->raw_at == r->raw_len)
            break;
        uint64_t dk, v;
        if (gt_xs_get(r->raw, r->raw_len, &r->raw_at, &dk) < 0 || gt_xs_get(r->raw, r->raw_len, &r->raw_at, &v) < 0)
            return -1;
        r->value = dk ? v : r->value + v;
        r->key += (uint32_t)dk;
        out[r->have].key = r->key;
        out[r->have].pad = 0;
        out[r->have].value = r->value;
        r->have++;
    }
    return r->have ? 0 : -1;
}

static int gt_xs_fill(struct gt_extsort *s, struct gt_xs_run *r)
{
    if (s->keyed)
        return gt_xs_fill_keyed(s, r);
    size_t want = GT_XS_READ / s->size;
    if (want < 1)
        want = 1;
    if (want > r->end - r->next)
        want = (size_t)(r->end - r->next);
    if (gt_xs_pread(s, r->buf, want * s->size, r->next * s->size) < 0)
        return -1;
    r->next += want;
    r->have = want;
    r->at = 0;
    return 0;
}

/* Records of the run still to be read into its buffer. */
static int gt_xs_more(const struct gt_xs_run *r)
{
    return r->buf && (r->next < r->end || r->raw_at < r->raw_len);
}

static const void *gt_xs_cur(const struct gt_extsort *s, const struct gt_xs_run *r)
{
    return r->buf ? r->buf + r->at * s->size : s->buf + r->at * gt_xs_stride(s);
}

/* Run a before run b: by record, then by run (the earlier came first). */
static int gt_xs_before(const struct gt_extsort *s, const struct gt_xs_run *runs, size_t a, size_t b)
{
    int c = s->cmp(gt_xs_cur(s, &runs[a]), gt_xs_cur(s, &runs[b]), s->cmp_arg);
    return c ? c < 0 : a < b;
}

static void gt_xs_sift(const struct gt_extsort *s, const struct gt_xs_run *runs, size_t *heap, size_t n, size_t i)
{
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            return;
        if (c + 1 < n && gt_xs_before(s, runs, heap[c + 1], heap[c]))
            c++;
        if (!gt_xs_before(s, runs, heap[c], heap[i]))
            return;
        size_t t = heap[i];
        heap[i] = heap[c];
        heap[c] = t;
        i = c;
    }
}

int gt_xs_begin(struct gt_extsort *s)
{
    if (s->failed)
        return -1;
    s->reading = 1;
    gt_xs_sort_buffer(s);
    if (!s->nruns)
        return 0;
    if (fflush(s->file) != 0) {
        gt_xs_fail(s, 1);
        return -1;
    }
    size_t nr = s->nruns + (s->n > 0);
    s->runs = calloc(nr, sizeof(*s->runs));
    s->heap = malloc(nr * sizeof(*s->heap));
    if (!s->runs || !s->heap) {
        gt_xs_fail(s, 0);
        return -1;
    }
    s->nrunsread = nr;
    for (size_t i = 0; i < s->nruns; i++) {
        struct gt_xs_run *r = &s->runs[i];
        r->next = s->run_start[i];
        r->end = s->run_start[i + 1];
        size_t want = GT_XS_READ / s->size;
        if (!(r->buf = malloc((want ? want : 1) * s->size)) || (s->keyed && !(r->raw = malloc(GT_XS_READ))) ||
            gt_xs_fill(s, r) < 0) {
            gt_xs_fail(s, r->buf != NULL);
            return -1;
        }
        s->heap[s->nheap++] = i;
    }
    if (s->n) {
        s->runs[s->nruns].have = s->n;
        s->heap[s->nheap++] = s->nruns;
    }
    for (size_t i = s->nheap / 2; i-- > 0;)
        gt_xs_sift(s, s->runs, s->heap, s->nheap, i);
    return 0;
}

const void *gt_xs_next(struct gt_extsort *s)
{
    if (s->failed)
        return NULL;
    if (!s->nruns) {
        /* all in the buffer: the record after the one handed last */
        if (s->at >= s->n)
            return NULL;
        return s->buf + s->at++ * gt_xs_stride(s);
    }
    /* the run handed last moves on first: its record stays valid until now */
    if (s->pending) {
        s->pending = 0;
        struct gt_xs_run *r = &s->runs[s->heap[0]];
        if (++r->at == r->have) {
            if (gt_xs_more(r)) {
                if (gt_xs_fill(s, r) < 0) {
                    gt_xs_fail(s, 1);
                    return NULL;
                }
            } else {
                s->heap[0] = s->heap[--s->nheap];
            }
        }
        if (s->nheap)
            gt_xs_sift(s, s->runs, s->heap, s->nheap, 0);
    }
    if (!s->nheap)
        return NULL;
    s->pending = 1;
    return gt_xs_cur(s, &s->runs[s->heap[0]]);
}

int gt_xs_each(struct gt_extsort *s, int (*fn)(const void *rec, void *arg), void *arg)
{
    int rc = gt_xs_begin(s);
    for (const void *rec; rc == 0 && (rec = gt_xs_next(s));)
        rc = fn(rec, arg);
    if (rc == 0 && s->failed)
        rc = -1;
    gt_xs_free(s);
    return rc;
}

/* test_extsort.c: analyzer/base/gt_extsort.c against qsort: keyed records
 * of every width (values up to 64 bits, keys up to 32: packed radix, and
 * the qsort fallback when both are wide), and plain 24-byte records, with
 * buffers from 16 records (a run every 16, read back by merging hundreds
 * of runs) to all in memory. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/gt_extsort.h"
#include "unit.h"

static uint64_t rng = 88172645463325252ull;
static uint64_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static int keyed_qcmp(const void *a, const void *b)
{
    return gt_xs_keyed_cmp(a, b, NULL);
}

struct plain {
    uint64_t a;
    uint32_t b, c;
    uint64_t d;
};

static int plain_cmp(const void *x, const void *y, void *arg)
{
    (void)arg;
    const struct plain *p = x, *q = y;
    if (p->a != q->a)
        return p->a < q->a ? -1 : 1;
    if (p->b != q->b)
        return p->b < q->b ? -1 : 1;
    if (p->c != q->c)
        return p->c < q->c ? -1 : 1;
    return p->d < q->d ? -1 : p->d > q->d;
}

static int plain_qcmp(const void *x, const void *y)
{
    return plain_cmp(x, y, NULL);
}

static void keyed_case(size_t n, int kbits, int vbits, size_t mem)
{
    struct gt_xs_keyed *want = malloc((n + 1) * sizeof(*want));
    struct gt_extsort s;
    gt_xs_init_keyed(&s, mem);
    for (size_t i = 0; i < n; i++) {
        uint64_t v = next_rand(), k = next_rand();
        want[i].key = kbits ? (uint32_t)(k >> (64 - kbits)) : 0;
        want[i].pad = 0;
        want[i].value = vbits ? v >> (64 - vbits) : 0;
        /* runs of equal keys and values, as kernels and sites give */
        if (i && next_rand() % 3 == 0)
            want[i] = want[i - 1];
        gt_xs_add(&s, &want[i]);
    }
    qsort(want, n, sizeof(*want), keyed_qcmp);
    CHECK(gt_xs_begin(&s) == 0);
    size_t i = 0, bad = 0;
    for (const struct gt_xs_keyed *r; (r = gt_xs_next(&s)); i++)
        bad += i >= n || r->key != want[i].key || r->value != want[i].value;
    CHECK(!s.failed);
    CHECK(i == n);
    CHECK(bad == 0);
    if (bad || i != n)
        fprintf(stderr, "keyed n=%zu kbits=%d vbits=%d mem=%zu: %zu wrong, %zu read\n", n, kbits, vbits, mem, bad, i);
    gt_xs_free(&s);
    free(want);
}

static void plain_case(size_t n, size_t mem)
{
    struct plain *want = malloc((n + 1) * sizeof(*want));
    struct gt_extsort s;
    gt_xs_init(&s, sizeof(struct plain), plain_cmp, NULL, mem);
    for (size_t i = 0; i < n; i++) {
        want[i].a = next_rand() % 1000;
        want[i].b = (uint32_t)next_rand();
        want[i].c = (uint32_t)i;
        want[i].d = next_rand();
        gt_xs_add(&s, &want[i]);
    }
    qsort(want, n, sizeof(*want), plain_qcmp);
    size_t i = 0, bad = 0;
    CHECK(gt_xs_begin(&s) == 0);
    for (const struct plain *r; (r = gt_xs_next(&s)); i++)
        bad += i >= n || memcmp(r, &want[i], sizeof(*r)) != 0;
    CHECK(i == n && bad == 0 && !s.failed);
    gt_xs_free(&s);
    free(want);
}

int main(void)
{
    /* the tests set the buffer themselves */
    unsetenv("GPUTRACE_SORT_MEM");
    static const int widths[][2] = {{0, 0}, {1, 1}, {7, 10}, {9, 9}, {12, 20}, {20, 44}, {32, 32},
                                    {0, 64}, {1, 64}, {32, 64}, {16, 40}};
    static const size_t mems[] = {256, 4096, 65536, 1 << 24};
    static const size_t ns[] = {0, 1, 15, 16, 17, 1000, 20000};
    for (size_t w = 0; w < sizeof(widths) / sizeof(widths[0]); w++)
        for (size_t m = 0; m < sizeof(mems) / sizeof(mems[0]); m++)
            for (size_t k = 0; k < sizeof(ns) / sizeof(ns[0]); k++)
                keyed_case(ns[k], widths[w][0], widths[w][1], mems[m]);
    for (size_t m = 0; m < sizeof(mems) / sizeof(mems[0]); m++)
        for (size_t k = 0; k < sizeof(ns) / sizeof(ns[0]); k++)
            plain_case(ns[k], mems[m]);
    return unit_report("test_extsort");
}

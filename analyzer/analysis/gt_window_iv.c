/* gt_window_iv.c: a window's intervals (gt_window.h): lengths and
 * membership in O(log n), for the report's passes and sweep. No SQLite
 * here, so the timeline's unit test links it alone. */
#include <stdlib.h>
#include <string.h>

#include "analysis/gt_window.h"

/* Index of the last interval that starts at or before x; n: none. */
static size_t gt_window_at(const struct gt_window *w, uint64_t x)
{
    size_t lo = 0, hi = w->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (w->a[mid] <= x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo ? lo - 1 : w->n;
}

/* The length of (-inf, x) inside w. */
static uint64_t gt_window_cum(const struct gt_window *w, uint64_t x)
{
    size_t i = gt_window_at(w, x);
    if (i == w->n)
        return 0;
    return w->cum[i] + ((x < w->b[i] ? x : w->b[i]) - w->a[i]);
}

uint64_t gt_window_len(const struct gt_window *w, uint64_t x, uint64_t y)
{
    return y > x ? gt_window_cum(w, y) - gt_window_cum(w, x) : 0;
}

int gt_window_has(const struct gt_window *w, uint64_t x)
{
    size_t i = gt_window_at(w, x);
    return i < w->n && x < w->b[i];
}

int gt_window_inside(const struct gt_window *w, uint64_t x, uint64_t y)
{
    size_t i = gt_window_at(w, x);
    return i < w->n && x < w->b[i] && y <= w->b[i];
}

uint64_t gt_window_next(const struct gt_window *w, uint64_t x)
{
    size_t i = gt_window_at(w, x);
    if (i < w->n && x < w->b[i])
        return x;
    i = i == w->n ? 0 : i + 1;
    return i < w->n ? w->a[i] : UINT64_MAX;
}

void gt_window_free(struct gt_window *w)
{
    free(w->a);
    free(w->b);
    free(w->cum);
    memset(w, 0, sizeof(*w));
}

static int gt_iv_cmp(const void *x, const void *y)
{
    const uint64_t *a = x, *b = y;
    return a[0] < b[0] ? -1 : a[0] > b[0];
}

/* Intervals (pairs in iv, sorted or not) merged into out. -1: no memory. */
int gt_window_set(struct gt_window *out, uint64_t *iv, size_t n)
{
    qsort(iv, n, 2 * sizeof(*iv), gt_iv_cmp);
    out->a = malloc((n ? n : 1) * sizeof(*out->a));
    out->b = malloc((n ? n : 1) * sizeof(*out->b));
    out->cum = malloc((n ? n : 1) * sizeof(*out->cum));
    if (!out->a || !out->b || !out->cum)
        return -1;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t a = iv[2 * i], b = iv[2 * i + 1];
        if (b <= a)
            continue;
        if (k && a <= out->b[k - 1]) {
            if (b > out->b[k - 1])
                out->b[k - 1] = b;
            continue;
        }
        out->a[k] = a;
        out->b[k] = b;
        k++;
    }
    out->n = k;
    for (size_t i = 0; i < k; i++)
        out->cum[i] = i ? out->cum[i - 1] + (out->b[i - 1] - out->a[i - 1]) : 0;
    return 0;
}

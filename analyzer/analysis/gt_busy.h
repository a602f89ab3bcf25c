/* gt_busy.h: each GPU's busy share of each of `nb` equal slices of a
 * report's span (the HTML report's overview), from the busy runs of the
 * report's own sweep (gt_sweep_on_run): the same operations, merged the
 * same way, as the report's busy and idle figures. */
#ifndef GT_BUSY_H
#define GT_BUSY_H

#include <stddef.h>
#include <stdint.h>

#define GT_BUSY_MAX_DEVICES 16

struct gt_busy {
    int ndev;
    int dev[GT_BUSY_MAX_DEVICES];      /* the lowest device ids, ascending */
    float *frac[GT_BUSY_MAX_DEVICES];  /* per slice: busy ns / slice ns */
    size_t nb;
    uint64_t t0, span;                 /* the report's first_ns and span_ns */
    double w;                          /* a slice's ns */
};

/* Rows for the distinct devices among devs[0..n) (any order, repeats
 * allowed), the lowest GT_BUSY_MAX_DEVICES of them. 0, or -1 when out of
 * memory. */
int gt_busy_init(struct gt_busy *b, size_t nb, uint64_t t0, uint64_t span, const int64_t *devs, size_t n);
/* A busy run [start, end) of a device (a gt_tl_run_fn). */
void gt_busy_run(int64_t device, uint64_t start, uint64_t end, void *busy);
void gt_busy_free(struct gt_busy *b);

#endif

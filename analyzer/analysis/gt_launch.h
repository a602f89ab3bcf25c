/* gt_launch.h: launch overhead, per kernel and per launch site: each
 * launch's host time (sorted by kernel and by site in bounded memory for
 * the percentiles: gt_extsort, spilled to disk past GT_LAUNCH_MEM each),
 * its kernel's GPU time and queue delay, and which were launch-bound. */
#ifndef GT_LAUNCH_H
#define GT_LAUNCH_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/gt_analyze.h"
#include "analysis/gt_site.h"
#include "base/gt_extsort.h"

#define GT_LAUNCH_MEM (8u << 20)

/* Launches of one kernel from one site. */
struct gt_pair {
    uint32_t kernel, site;
    uint64_t count, api_total, api_max, gpu_total, queue_sum, gpu_n, bound;
};

struct gt_pairs {
    struct gt_pair *v;
    size_t n, cap;
    uint32_t *slot; /* hash -> index + 1 */
    size_t slots;
    size_t last;    /* the last pair found, + 1 */
    /* every launch's host time by kernel and by site (gt_launch_rows reads
     * each once); started by the first launch */
    struct gt_extsort by_kernel, by_site;
    int sorting;
};

/* The pair of (kernel index, site index); NULL when out of memory. */
struct gt_pair *gt_pair_of(struct gt_pairs *p, uint32_t kernel, uint32_t site);
/* One launch's host time. -1: out of memory, or a spill file failed. */
int gt_pair_launch(struct gt_pairs *p, struct gt_pair *x, uint64_t api_ns);
/* One GPU record of a launch: its kernel's duration and queue delay. */
void gt_pair_gpu(struct gt_pair *x, uint64_t gpu_ns, uint64_t queue_ns);
void gt_pairs_free(struct gt_pairs *p);

/* The nearest-rank percentile (docs/report.md) of a[0..n), which it
 * reorders; n > 0. */
uint64_t gt_percentile(uint64_t *a, size_t n, unsigned pct);

/* One row per kernel (by_site 0; names[kernel] its name, first_api[kernel]
 * its first launch's host time) or per site (1), most host time first;
 * each once (it reads that side's sort). Returns the row count; -1 when
 * out of memory. */
long gt_launch_rows(struct gt_pairs *p, struct gt_sites *sites, const char *const *names,
                    const uint64_t *first_api, int by_site, struct gt_launch_row **out);

#endif

/* gt_gaps.h: GPU busy time and idle gaps, and what the host was doing in
 * each gap, in bounded memory on traces of tens of millions of calls.
 *
 * Two passes: the GPU intervals first (gt_gaps_add), which give the gaps
 * (gt_gaps_merge); then every call once, in any order (gt_gaps_call),
 * which says what covered each gap and which call ended it. */
#ifndef GT_GAPS_H
#define GT_GAPS_H

#include <stdint.h>

#include "analysis/gt_analyze.h"
#include "analysis/gt_site.h"

struct gt_gaps;

struct gt_gaps *gt_gaps_new(void);
void gt_gaps_free(struct gt_gaps *g);
/* One interval the GPU was busy; end < start is ignored. -1: out of memory. */
int gt_gaps_add(struct gt_gaps *g, int64_t device, uint64_t start, uint64_t end);
/* Busy time (all devices merged, and per device) into r's summary and
 * devices; the gaps of min_gap_ns or more are the ones listed later.
 * -1: out of memory. */
int gt_gaps_merge(struct gt_gaps *g, uint64_t min_gap_ns, struct gt_report *r);
/* One call: cat is 0 other, 1 sync, 2 copy, 3 launch; site its canonical
 * site index (gt_site_index). */
void gt_gaps_call(struct gt_gaps *g, int cat, uint64_t start, uint64_t end, uint32_t site);
/* Each gap's cause, idle time by cause and by the site that ended it, and
 * the listed gaps with their sites, into r. -1: out of memory. */
int gt_gaps_report(struct gt_gaps *g, struct gt_sites *sites, struct gt_report *r);

#endif

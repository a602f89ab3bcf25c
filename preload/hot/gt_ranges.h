/* gt_ranges.h: the memory ranges the program allocated or registered through
 * CUDA, so a copy can tell pinned host memory from pageable. Lookups take no
 * lock (seqlock); updates are rare and serialized. */
#ifndef GT_RANGES_H
#define GT_RANGES_H

#include <stddef.h>
#include <stdint.h>

enum gt_range_kind { GT_RANGE_NONE = 0, GT_RANGE_DEVICE, GT_RANGE_PINNED, GT_RANGE_MANAGED, GT_RANGE_MAPPED };

void gt_ranges_add(uintptr_t base, size_t len, int kind);
void gt_ranges_remove(uintptr_t base);
int gt_ranges_find(uintptr_t p);
/* The range holding p, if of kind `from`, becomes of kind `to`. */
void gt_ranges_rekind(uintptr_t p, int from, int to);
void gt_ranges_fork_lock(void);
void gt_ranges_fork_unlock(void);

#endif

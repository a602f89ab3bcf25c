/* gt_flame.h: the tree behind the flame graph of GPU idle by host stack
 * (gt_analyze.h, struct gt_flame_node): nodes named by text under a
 * parent, time and samples added at a leaf and summed up to the root, then
 * laid out in preorder for the report. */
#ifndef GT_FLAME_H
#define GT_FLAME_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/gt_analyze.h"
#include "base/gt_map.h"

struct gt_flame_b {
    struct gt_fnode *v;             /* v[0]: the root */
    size_t n, cap;
    char *text;
    size_t tlen, tcap;
    struct gt_map child;            /* hash of (parent, name) -> index + 1 */
};

/* The root, named `name`: 0, or -1 out of memory. */
int gt_flame_init(struct gt_flame_b *f, const char *name);
/* The child of `parent` named `name` (made on first sight): its index, or
 * -1 out of memory. */
long gt_flame_child(struct gt_flame_b *f, uint32_t parent, const char *name, uint8_t kind);
/* Adds ns and samples to node and each of its ancestors. */
void gt_flame_add(struct gt_flame_b *f, uint32_t node, uint64_t ns, uint64_t samples);
/* Sets the root's time (the listed gaps', which the shares, rounded down,
 * may fall a few ns short of). */
void gt_flame_set_root(struct gt_flame_b *f, uint64_t ns);
/* Lays the tree out into r->flame (nodes of at least 1/GT_FLAME_MIN of the
 * root's time, children by time, most first) and hands it the names: 0, or
 * -1 out of memory. */
int gt_flame_finish(struct gt_flame_b *f, struct gt_report *r);
void gt_flame_free(struct gt_flame_b *f);

#endif

/* gt_ops.h: a GPU operation, 32 bytes, with what the analyses need of the
 * call it belongs to; the array holds the GPU records table's operations
 * and the call being read's (the rest wait in gt_opsort, on disk past a
 * fixed size: the packing keeps those files small). A duration or a
 * launch's slack that does not fit 32 bits goes to a side table, so every
 * time stays exact. */
#ifndef GT_OPS_H
#define GT_OPS_H

#include <stddef.h>
#include <stdint.h>

/* gt_op.flags */
enum {
    GT_OPF_LINKED = 1,       /* belongs to a recorded call */
    GT_OPF_GRAPH = 2,        /* run by a graph launch */
    GT_OPF_LB_CAND = 4,      /* a launch's kernel that may be launch-bound: not the kernel's first
                              * launch, and shorter than its launch call */
    GT_OPF_LONG = 8,         /* dur is an index into the long durations */
    GT_OPF_BIG_SLACK = 16,   /* slack is an index into the big slacks */
    GT_OPF_LAUNCH = 32,      /* made by a launch call (slack is set) */
    GT_OPF_DROP = 64,        /* outside a windowed report's window: removed before the sweep */
};

#define GT_OP_NO_API 0xffffu

struct gt_op {
    uint64_t start;
    uint32_t dur;            /* end - start, or an index (GT_OPF_LONG) */
    uint32_t site;           /* canonical site index of its call (gt_site_index) */
    uint32_t name;           /* kernels: kernel index; copies: enum gt_rec_copy; memsets: 0 */
    int32_t slack;           /* launches: the kernel's start minus its call's end, or an index
                              * (GT_OPF_BIG_SLACK) */
    uint16_t slot;           /* its device and stream (gt_ops_slot) */
    uint16_t api;            /* its call's entry point; GT_OP_NO_API: none */
    uint8_t kind;            /* enum gt_op_kind */
    uint8_t flags;
    uint16_t pad;
};

struct gt_ops {
    struct gt_op *v;
    size_t n, cap;
    uint64_t *long_dur;
    int64_t *big_slack;
    size_t nlong, nbig, caplong, capbig;
    /* (device, stream) of each slot */
    int64_t *slot_device, *slot_stream;
    size_t nslots, capslots;
    uint64_t *slot_key;      /* open addressing: device << 32 ^ stream, and slot + 1 */
    uint32_t *slot_idx;
    size_t slot_cap;
    size_t last_slot;        /* the last slot found, + 1 */
};

void gt_ops_free(struct gt_ops *o);
/* Appends an operation; returns its index, or -1 when out of memory (or
 * past 65535 streams). */
long gt_ops_add(struct gt_ops *o, int kind, int64_t device, int64_t stream, uint64_t start, uint64_t end);
static inline uint64_t gt_op_dur(const struct gt_ops *o, const struct gt_op *x)
{
    return x->flags & GT_OPF_LONG ? o->long_dur[x->dur] : x->dur;
}
static inline uint64_t gt_op_end(const struct gt_ops *o, const struct gt_op *x)
{
    return x->start + gt_op_dur(o, x);
}
/* Records a launch's call end, as the kernel's start minus it. -1: out of
 * memory. */
int gt_op_set_call_end(struct gt_ops *o, struct gt_op *x, uint64_t call_end);
static inline uint64_t gt_op_call_end(const struct gt_ops *o, const struct gt_op *x)
{
    int64_t slack = x->flags & GT_OPF_BIG_SLACK ? o->big_slack[x->slack] : x->slack;
    return x->start - (uint64_t)slack;
}

#endif

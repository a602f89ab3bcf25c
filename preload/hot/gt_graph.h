/* gt_graph.h: CUDA Graph construction: which nodes were made, of what
 * kind, running which kernel, by which call (and so from which site). */
#ifndef GT_GRAPH_H
#define GT_GRAPH_H

#include "base/gt_cuda.h"
#include "base/gt_event.h"

/* Readers (gt_hooks.def), after the real call. A node-adding call: the new
 * node (*out), the graph it went into, the kernel's name id (kernel nodes). */
void gt_rd_graph_node(struct gt_event *ev, int res, enum gt_gnode_kind kind, void *const *out, void *graph,
                      uint32_t name_id);
void gt_rd_graph_kernel_rt(struct gt_event *ev, int res, void *const *out, void *graph,
                           const struct cudaKernelNodeParams *p);
void gt_rd_graph_kernel_drv(struct gt_event *ev, int res, void *const *out, void *graph,
                            const CUDA_KERNEL_NODE_PARAMS *p);
/* A call that makes no node: `graph` (or *out when out is set and the call
 * succeeded) is the graph it is about. */
void gt_rd_graph_call(struct gt_event *ev, int res, void *const *out, void *graph);
/* A call that changes a node's parameters (cudaGraphExecKernelNodeSetParams...): the node it changed. */
void gt_rd_graph_update(struct gt_event *ev, int res, void *node);
/* cudaGraphClone/cuGraphClone: its nodes are recorded as clones at the end
 * of the call (gt_graph_emit). */
void gt_rd_graph_clone(struct gt_event *ev, int res, void *const *out, void *orig);

/* At the end of a recorded call, once its stacks are known: pushes the
 * graph node records the call made beside its own event (a captured
 * launch, copy, memset or host function's node; a clone's nodes). */
void gt_graph_emit(struct gt_event *ev, int category);

#endif

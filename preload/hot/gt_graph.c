/* gt_graph.c: what building a CUDA Graph made. Each node is named by
 * CUPTI's graphNodeId, the id CUPTI's records of its GPU work carry when a
 * launch of the graph replays it, so the writer can link that work back to
 * the call that made the node (docs/schema.md, graph_nodes). Node ids come
 * from CUPTI (gt_cupti_graph_node_id): with GPU timing off there is
 * nothing to link, and nodes are recorded with id 0. */
#include <stdatomic.h>
#include <string.h>

#include "cupti/gt_cupti.h"
#include "hot/gt_graph.h"
#include "hot/gt_names.h"
#include "hot/gt_ring.h"
#include "hot/gt_symbols_lookup.h"

/* Driver functions asked about a graph (not hooked: never recorded). */
typedef CUresult (*gt_capture_info_fn)(CUstream, CUstreamCaptureStatus *, cuuint64_t *, CUgraph *,
                                       const CUgraphNode **, const CUgraphEdgeData **, size_t *);
typedef CUresult (*gt_get_nodes_fn)(CUgraph, CUgraphNode *, size_t *);
typedef CUresult (*gt_find_in_clone_fn)(CUgraphNode *, CUgraphNode, CUgraph);

/* Looked up once; (void *)1: not there. */
static void *gt_driver_fn(_Atomic(void *) *slot, const char *name)
{
    void *p = atomic_load_explicit(slot, memory_order_acquire);
    if (!p) {
        p = gt_lookup_symbol(name);
        if (!p)
            p = (void *)1;
        atomic_store_explicit(slot, p, memory_order_release);
    }
    return p == (void *)1 ? NULL : p;
}

static _Atomic(void *) gt_capture_info, gt_get_nodes, gt_find_in_clone;

/* A clone's nodes are matched one by one (on the stack: no allocation);
 * nodes past this many are not linked. */
#define GT_CLONE_MAX 512

void gt_rd_graph_node(struct gt_event *ev, int res, enum gt_gnode_kind kind, void *const *out, void *graph,
                      uint32_t name_id)
{
    memset(&ev->u.gnode, 0, sizeof(ev->u.gnode));
    ev->u.gnode.kind = GT_GN_NONE;
    if (res != 0 || !out)
        return;
    ev->u.gnode.kind = (uint8_t)kind;
    ev->u.gnode.node = gt_cupti_graph_node_id(*out);
    ev->u.gnode.graph = gt_cupti_graph_id(graph);
    ev->u.gnode.name_id = name_id;
}

void gt_rd_graph_kernel_rt(struct gt_event *ev, int res, void *const *out, void *graph,
                           const struct cudaKernelNodeParams *p)
{
    uint32_t name = res == 0 && p ? gt_names_lookup(p->func, GT_NAME_HOSTFUN) : 0;
    gt_rd_graph_node(ev, res, GT_GN_KERNEL, out, graph, name);
}

void gt_rd_graph_kernel_drv(struct gt_event *ev, int res, void *const *out, void *graph,
                            const CUDA_KERNEL_NODE_PARAMS *p)
{
    uint32_t name = 0;
    if (res == 0 && p)
        name = gt_names_lookup(p->func ? (const void *)p->func : (const void *)p->kern, GT_NAME_DRV_FUNC);
    gt_rd_graph_node(ev, res, GT_GN_KERNEL, out, graph, name);
}

void gt_rd_graph_call(struct gt_event *ev, int res, void *const *out, void *graph)
{
    memset(&ev->u.gnode, 0, sizeof(ev->u.gnode));
    ev->u.gnode.kind = GT_GN_NONE;
    if (out && res == 0)
        graph = *out;
    else if (out)
        return;
    ev->u.gnode.graph = gt_cupti_graph_id(graph);
}

void gt_rd_graph_update(struct gt_event *ev, int res, void *node)
{
    memset(&ev->u.gnode, 0, sizeof(ev->u.gnode));
    ev->u.gnode.kind = GT_GN_NONE; /* the node was made before: no row of its own */
    if (res == 0 && node)
        ev->u.gnode.node = gt_cupti_graph_node_id(node);
}

void gt_rd_graph_clone(struct gt_event *ev, int res, void *const *out, void *orig)
{
    memset(&ev->u.gnode, 0, sizeof(ev->u.gnode));
    ev->u.gnode.kind = GT_GN_NONE;
    if (res != 0 || !out || !*out || !orig)
        return;
    /* Handles, kept until gt_graph_emit: the clone's nodes need the call's stacks. */
    ev->u.gnode.kind = GT_GN_CLONE;
    ev->u.gnode.node = (uint64_t)(uintptr_t)*out;
    ev->u.gnode.orig = (uint64_t)(uintptr_t)orig;
}

static void gt_push_node(const struct gt_event *call, enum gt_gnode_kind kind, uint64_t node, uint64_t orig,
                         uint32_t graph, uint32_t name_id)
{
    struct gt_event g = *call;
    g.api = GT_API_GRAPH_NODE;
    g.corr = 0;
    memset(&g.u, 0, sizeof(g.u));
    g.u.gnode.node = node;
    g.u.gnode.orig = orig;
    g.u.gnode.graph = graph;
    g.u.gnode.name_id = name_id;
    g.u.gnode.api = call->api;
    g.u.gnode.kind = (uint8_t)kind;
    gt_ring_push(&g);
}

/* The kind of node a captured call makes; GT_GN_NONE: it makes none (an
 * event record, a wait on an event: they only change what the stream's
 * next node depends on, and must not be taken for the node before them). */
static enum gt_gnode_kind gt_captured_kind(int category)
{
    switch (category) {
    case GT_CAT_LAUNCH: return GT_GN_KERNEL;
    case GT_CAT_MEMCPY: return GT_GN_MEMCPY;
    case GT_CAT_MEMSET: return GT_GN_MEMSET;
    case GT_CAT_OTHER: return GT_GN_HOST;  /* host functions, stream callbacks: the only such calls with a stream */
    case GT_CAT_ALLOC: return GT_GN_MEM_ALLOC;
    case GT_CAT_FREE: return GT_GN_MEM_FREE;
    case GT_CAT_GRAPH: return GT_GN_OTHER;  /* a graph launched into a capture: a child graph node */
    default: return GT_GN_NONE;
    }
}

/* The node a captured call just added: right after it, the stream's
 * capture dependency set is that node alone (on a stream forked into the
 * capture too: the set is per stream). When it is not one node, the node
 * is not known and is not recorded. */
static void gt_emit_captured(struct gt_event *ev, int category)
{
    enum gt_gnode_kind kind = gt_captured_kind(category);
    if (kind == GT_GN_NONE)
        return;
    gt_capture_info_fn info = (gt_capture_info_fn)gt_driver_fn(&gt_capture_info, "cuStreamGetCaptureInfo_v3");
    if (!info)
        return;
    CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
    CUgraph graph = NULL;
    const CUgraphNode *deps = NULL;
    size_t ndeps = 0;
    if (info((CUstream)(uintptr_t)ev->stream, &st, NULL, &graph, &deps, NULL, &ndeps) != CUDA_SUCCESS ||
        st != CU_STREAM_CAPTURE_STATUS_ACTIVE || ndeps != 1 || !deps || !deps[0])
        return;
    uint64_t node = gt_cupti_graph_node_id(deps[0]);
    if (!node)
        return;
    gt_push_node(ev, kind, node, 0, gt_cupti_graph_id(graph), category == GT_CAT_LAUNCH ? ev->u.launch.name_id : 0);
}

static void gt_emit_clone(struct gt_event *ev)
{
    CUgraph clone = (CUgraph)(uintptr_t)ev->u.gnode.node, orig = (CUgraph)(uintptr_t)ev->u.gnode.orig;
    memset(&ev->u.gnode, 0, sizeof(ev->u.gnode));
    ev->u.gnode.kind = GT_GN_NONE;
    ev->u.gnode.graph = gt_cupti_graph_id(clone);
    gt_get_nodes_fn get = (gt_get_nodes_fn)gt_driver_fn(&gt_get_nodes, "cuGraphGetNodes");
    gt_find_in_clone_fn find = (gt_find_in_clone_fn)gt_driver_fn(&gt_find_in_clone, "cuGraphNodeFindInClone");
    if (!get || !find || !ev->u.gnode.graph)
        return;
    CUgraphNode nodes[GT_CLONE_MAX];
    size_t n = GT_CLONE_MAX;
    if (get(orig, nodes, &n) != CUDA_SUCCESS)
        return;
    if (n > GT_CLONE_MAX)
        n = GT_CLONE_MAX;
    for (size_t i = 0; i < n; i++) {
        CUgraphNode c = NULL;
        if (!nodes[i] || find(&c, nodes[i], clone) != CUDA_SUCCESS || !c)
            continue;
        uint64_t from = gt_cupti_graph_node_id(nodes[i]), to = gt_cupti_graph_node_id(c);
        if (from && to)
            gt_push_node(ev, GT_GN_CLONE, to, from, ev->u.gnode.graph, 0);
    }
}

void gt_graph_emit(struct gt_event *ev, int category)
{
    if (ev->result != 0)
        return;
    if (category == GT_CAT_GRAPH_BUILD) {
        if (ev->u.gnode.kind == GT_GN_CLONE)
            gt_emit_clone(ev);
        return;
    }
    if (ev->captured)
        gt_emit_captured(ev, category);
}

/* fk_graph_update.c: changing the copy, memset and host nodes of an
 * instantiated graph (cuGraphExec*NodeSetParams), as the driver's API
 * reference describes: the node must be of that kind in the graph the
 * exec was instantiated from, and only the exec's copy of it changes; its
 * next launches run the new parameters under the node's own id. (Kernel
 * nodes: fk_graph_build.c.) */
#include "fk_driver.h"

/* The exec's copy of node n, when n is of `kind` there. fk_lock held. */
static struct fk_exec_node *fk_exec_node_of(CUgraphExec e, CUgraphNode n, int kind)
{
    if (!e || e->magic != FK_MAGIC_GEXEC || !fk_graph_node_ok(n) || n->index >= e->count ||
        e->nodes[n->index].id != n->id || e->nodes[n->index].work.kind != kind)
        return NULL;
    return &e->nodes[n->index];
}

static CUresult fk_exec_set(CUgraphExec e, CUgraphNode n, const struct fk_node *w)
{
    pthread_mutex_lock(&fk_lock);
    struct fk_exec_node *x = fk_exec_node_of(e, n, w->kind);
    if (x)
        x->work = *w;
    pthread_mutex_unlock(&fk_lock);
    return x ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

FK_API CUresult cuGraphExecMemcpyNodeSetParams(CUgraphExec e, CUgraphNode n, const CUDA_MEMCPY3D *p, CUcontext ctx)
{
    (void)ctx;
    struct fk_node w;
    CUresult r = fk_node_from_3d(p, &w);
    if (r == CUDA_SUCCESS)
        w.blocking = 0;
    return r == CUDA_SUCCESS ? fk_exec_set(e, n, &w) : r;
}

FK_API CUresult cuGraphExecMemsetNodeSetParams(CUgraphExec e, CUgraphNode n, const CUDA_MEMSET_NODE_PARAMS *p,
                                               CUcontext ctx)
{
    (void)ctx;
    struct fk_node w;
    CUresult r = fk_memset_work(p, &w);
    return r == CUDA_SUCCESS ? fk_exec_set(e, n, &w) : r;
}

FK_API CUresult cuGraphExecHostNodeSetParams(CUgraphExec e, CUgraphNode n, const CUDA_HOST_NODE_PARAMS *p)
{
    if (!p || !p->fn)
        return CUDA_ERROR_INVALID_VALUE;
    struct fk_node w = {.kind = FK_NODE_HOST, .fn = p->fn, .data = p->userData};
    return fk_exec_set(e, n, &w);
}

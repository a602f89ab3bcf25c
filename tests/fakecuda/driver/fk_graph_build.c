/* fk_graph_build.c: CUDA Graphs built node by node, as XLA and other
 * frameworks build them (cuGraphCreate, cuGraphAdd*Node, cuGraphClone,
 * cuGraphGetNodes, cuGraphExecUpdate...), and the copy an instantiated
 * graph keeps of its nodes. A node's dependencies are nodes already in its
 * graph, so the order nodes are added in is an order they can run in. */
#include <stdlib.h>
#include <string.h>

#include "fk_driver.h"

static uint32_t fk_next_graph_id;
static uint64_t fk_next_node_id;

struct CUgraph_st *fk_graph_new(void)
{
    struct CUgraph_st *g = calloc(1, sizeof(*g));
    if (!g)
        return NULL;
    g->magic = FK_MAGIC_GRAPH;
    pthread_mutex_lock(&fk_lock);
    g->id = ++fk_next_graph_id;
    pthread_mutex_unlock(&fk_lock);
    return g;
}

int fk_graph_ok(CUgraph g)
{
    return g && g->magic == FK_MAGIC_GRAPH;
}

int fk_graph_node_ok(CUgraphNode n)
{
    return n && n->magic == FK_MAGIC_GNODE;
}

struct CUgraphNode_st *fk_graph_add_locked(struct CUgraph_st *g, const struct fk_node *w,
                                          struct CUgraphNode_st *const *deps, size_t ndeps)
{
    if (g->count == g->cap) {
        size_t cap = g->cap ? g->cap * 2 : 16;
        struct CUgraphNode_st **v = realloc(g->nodes, cap * sizeof(*v));
        if (!v)
            return NULL;
        g->nodes = v;
        g->cap = cap;
    }
    struct CUgraphNode_st *n = calloc(1, sizeof(*n));
    if (!n || (ndeps && !(n->deps = malloc(ndeps * sizeof(*n->deps))))) {
        free(n);
        return NULL;
    }
    n->magic = FK_MAGIC_GNODE;
    n->id = ++fk_next_node_id;
    n->graph = g;
    n->work = *w;
    n->work.blocking = 0;
    if (ndeps)
        memcpy(n->deps, deps, ndeps * sizeof(*deps));
    n->ndeps = ndeps;
    n->index = g->count;
    g->nodes[g->count++] = n;
    return n;
}

CUresult fk_exec_build(struct CUgraphExec_st *e, const struct CUgraph_st *g)
{
    pthread_mutex_lock(&fk_lock);
    e->graph_id = g->id;
    e->count = g->count;
    e->nodes = g->count ? calloc(g->count, sizeof(*e->nodes)) : NULL;
    CUresult r = g->count && !e->nodes ? CUDA_ERROR_OUT_OF_MEMORY : CUDA_SUCCESS;
    for (size_t i = 0; i < g->count && r == CUDA_SUCCESS; i++) {
        const struct CUgraphNode_st *n = g->nodes[i];
        struct fk_exec_node *x = &e->nodes[i];
        x->work = n->work;
        x->id = n->id;
        x->ndeps = n->ndeps;
        if (n->ndeps && !(x->deps = malloc(n->ndeps * sizeof(*x->deps))))
            r = CUDA_ERROR_OUT_OF_MEMORY;
        for (size_t d = 0; d < n->ndeps && x->deps; d++)
            x->deps[d] = n->deps[d]->index;
    }
    pthread_mutex_unlock(&fk_lock);
    if (r != CUDA_SUCCESS) {
        for (size_t i = 0; e->nodes && i < e->count; i++)
            free(e->nodes[i].deps);
        free(e->nodes);
        e->nodes = NULL;
        e->count = 0;
    }
    return r;
}

/* ---- construction ---- */

FK_API CUresult cuGraphCreate(CUgraph *out, unsigned int flags)
{
    CHECK_CTX();
    if (!out || flags)
        return CUDA_ERROR_INVALID_VALUE;
    *out = fk_graph_new();
    return *out ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

/* Adds a node: its dependencies must be distinct nodes of the same graph. */
CUresult fk_add(CUgraphNode *out, CUgraph g, const CUgraphNode *deps, size_t ndeps, const struct fk_node *w)
{
    if (!out || !fk_graph_ok(g) || (ndeps && !deps))
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = CUDA_SUCCESS;
    pthread_mutex_lock(&fk_lock);
    for (size_t i = 0; i < ndeps && r == CUDA_SUCCESS; i++) {
        if (!fk_graph_node_ok(deps[i]) || deps[i]->graph != g)
            r = CUDA_ERROR_INVALID_VALUE;
        for (size_t j = 0; j < i && r == CUDA_SUCCESS; j++)
            if (deps[j] == deps[i])
                r = CUDA_ERROR_INVALID_VALUE;
    }
    struct CUgraphNode_st *n = r == CUDA_SUCCESS ? fk_graph_add_locked(g, w, deps, ndeps) : NULL;
    pthread_mutex_unlock(&fk_lock);
    if (r != CUDA_SUCCESS)
        return r;
    if (!n)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *out = n;
    return CUDA_SUCCESS;
}

static CUresult fk_kernel_work(const CUDA_KERNEL_NODE_PARAMS *p, struct fk_node *w)
{
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    struct CUfunc_st *f = p->func ? p->func : (struct CUfunc_st *)p->kern;
    if (!f || f->magic != FK_MAGIC_FUNC)
        return CUDA_ERROR_INVALID_VALUE;
    if (!p->gridDimX || !p->gridDimY || !p->gridDimZ || !p->blockDimX || !p->blockDimY || !p->blockDimZ ||
        (uint64_t)p->blockDimX * p->blockDimY * p->blockDimZ > 1024)
        return CUDA_ERROR_INVALID_VALUE;
    *w = (struct fk_node){.kind = FAKECUDA_ACT_KERNEL, .f = f, .grid = {p->gridDimX, p->gridDimY, p->gridDimZ},
                          .block = {p->blockDimX, p->blockDimY, p->blockDimZ}, .shm = p->sharedMemBytes};
    return CUDA_SUCCESS;
}

FK_API CUresult cuGraphAddKernelNode_v2(CUgraphNode *out, CUgraph g, const CUgraphNode *deps, size_t ndeps,
                                        const CUDA_KERNEL_NODE_PARAMS *p)
{
    CHECK_CTX();
    struct fk_node w;
    CUresult r = fk_kernel_work(p, &w);
    return r == CUDA_SUCCESS ? fk_add(out, g, deps, ndeps, &w) : r;
}

FK_API CUresult cuGraphAddMemcpyNode(CUgraphNode *out, CUgraph g, const CUgraphNode *deps, size_t ndeps,
                                     const CUDA_MEMCPY3D *p, CUcontext ctx)
{
    (void)ctx;
    CHECK_CTX();
    struct fk_node w;
    CUresult r = fk_node_from_3d(p, &w);
    return r == CUDA_SUCCESS ? fk_add(out, g, deps, ndeps, &w) : r;
}

CUresult fk_memset_work(const CUDA_MEMSET_NODE_PARAMS *p, struct fk_node *w)
{
    if (!p || !p->dst || (p->elementSize != 1 && p->elementSize != 2 && p->elementSize != 4) || !p->width)
        return CUDA_ERROR_INVALID_VALUE;
    size_t rows = p->height ? p->height : 1;
    if (rows > 1 && p->pitch < p->width * p->elementSize)
        return CUDA_ERROR_INVALID_VALUE;
    size_t span = rows > 1 ? p->pitch * (rows - 1) + p->width * p->elementSize : p->width * p->elementSize;
    if (fk_mem_kind(p->dst) == FK_MEM_PAGEABLE || !fk_mem_fits(p->dst, span))
        return CUDA_ERROR_INVALID_VALUE;
    *w = (struct fk_node){.kind = FAKECUDA_ACT_MEMSET, .dst = (void *)p->dst,
                          .bytes = (uint64_t)p->width * p->elementSize * rows, .value = p->value,
                          .esz = p->elementSize, .n = p->width, .pitch = rows > 1 ? p->pitch : 0, .rows = rows,
                          .dst_kind = fk_mem_kind(p->dst)};
    return CUDA_SUCCESS;
}

FK_API CUresult cuGraphAddMemsetNode(CUgraphNode *out, CUgraph g, const CUgraphNode *deps, size_t ndeps,
                                     const CUDA_MEMSET_NODE_PARAMS *p, CUcontext ctx)
{
    (void)ctx;
    CHECK_CTX();
    struct fk_node w;
    CUresult r = fk_memset_work(p, &w);
    return r == CUDA_SUCCESS ? fk_add(out, g, deps, ndeps, &w) : r;
}

FK_API CUresult cuGraphAddHostNode(CUgraphNode *out, CUgraph g, const CUgraphNode *deps, size_t ndeps,
                                   const CUDA_HOST_NODE_PARAMS *p)
{
    CHECK_CTX();
    if (!p || !p->fn)
        return CUDA_ERROR_INVALID_VALUE;
    struct fk_node w = {.kind = FK_NODE_HOST, .fn = p->fn, .data = p->userData};
    return fk_add(out, g, deps, ndeps, &w);
}

FK_API CUresult cuGraphAddEmptyNode(CUgraphNode *out, CUgraph g, const CUgraphNode *deps, size_t ndeps)
{
    CHECK_CTX();
    struct fk_node w = {.kind = FK_NODE_EMPTY};
    return fk_add(out, g, deps, ndeps, &w);
}

FK_API CUresult cuGraphKernelNodeGetParams_v2(CUgraphNode n, CUDA_KERNEL_NODE_PARAMS *p)
{
    if (!fk_graph_node_ok(n) || !p || n->work.kind != FAKECUDA_ACT_KERNEL)
        return CUDA_ERROR_INVALID_VALUE;
    memset(p, 0, sizeof(*p));
    p->func = n->work.f;
    p->gridDimX = n->work.grid[0];
    p->gridDimY = n->work.grid[1];
    p->gridDimZ = n->work.grid[2];
    p->blockDimX = n->work.block[0];
    p->blockDimY = n->work.block[1];
    p->blockDimZ = n->work.block[2];
    p->sharedMemBytes = n->work.shm;
    return CUDA_SUCCESS;
}

FK_API CUresult cuGraphKernelNodeSetParams_v2(CUgraphNode n, const CUDA_KERNEL_NODE_PARAMS *p)
{
    if (!fk_graph_node_ok(n) || n->work.kind != FAKECUDA_ACT_KERNEL)
        return CUDA_ERROR_INVALID_VALUE;
    struct fk_node w;
    CUresult r = fk_kernel_work(p, &w);
    if (r == CUDA_SUCCESS) {
        pthread_mutex_lock(&fk_lock);
        n->work = w;
        pthread_mutex_unlock(&fk_lock);
    }
    return r;
}

/* Changes one kernel node of an instantiated graph, not its graph. */
FK_API CUresult cuGraphExecKernelNodeSetParams_v2(CUgraphExec e, CUgraphNode n, const CUDA_KERNEL_NODE_PARAMS *p)
{
    if (!e || e->magic != FK_MAGIC_GEXEC || !fk_graph_node_ok(n) || n->index >= e->count ||
        e->nodes[n->index].work.kind != FAKECUDA_ACT_KERNEL)
        return CUDA_ERROR_INVALID_VALUE;
    struct fk_node w;
    CUresult r = fk_kernel_work(p, &w);
    if (r == CUDA_SUCCESS) {
        pthread_mutex_lock(&fk_lock);
        e->nodes[n->index].work = w;
        pthread_mutex_unlock(&fk_lock);
    }
    return r;
}

/* ---- queries and copies of graphs ---- */

FK_API CUresult cuGraphNodeGetType(CUgraphNode n, CUgraphNodeType *type)
{
    if (!fk_graph_node_ok(n) || !type)
        return CUDA_ERROR_INVALID_VALUE;
    switch (n->work.kind) {
    case FAKECUDA_ACT_KERNEL: *type = CU_GRAPH_NODE_TYPE_KERNEL; break;
    case FAKECUDA_ACT_MEMCPY: *type = CU_GRAPH_NODE_TYPE_MEMCPY; break;
    case FAKECUDA_ACT_MEMSET: *type = CU_GRAPH_NODE_TYPE_MEMSET; break;
    case FK_NODE_HOST: *type = CU_GRAPH_NODE_TYPE_HOST; break;
    default: *type = CU_GRAPH_NODE_TYPE_EMPTY; break;
    }
    return CUDA_SUCCESS;
}

/* With nodes NULL, the count; else up to *num nodes (the rest NULL) and
 * the count. */
FK_API CUresult cuGraphGetNodes(CUgraph g, CUgraphNode *nodes, size_t *num)
{
    if (!fk_graph_ok(g) || !num)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&fk_lock);
    if (nodes)
        for (size_t i = 0; i < *num; i++)
            nodes[i] = i < g->count ? g->nodes[i] : NULL;
    *num = g->count;
    pthread_mutex_unlock(&fk_lock);
    return CUDA_SUCCESS;
}

FK_API CUresult cuGraphClone(CUgraph *out, CUgraph orig)
{
    CHECK_CTX();
    if (!out || !fk_graph_ok(orig))
        return CUDA_ERROR_INVALID_VALUE;
    struct CUgraph_st *g = fk_graph_new();
    if (!g)
        return CUDA_ERROR_OUT_OF_MEMORY;
    CUresult r = CUDA_SUCCESS;
    pthread_mutex_lock(&fk_lock);
    for (size_t i = 0; i < orig->count && r == CUDA_SUCCESS; i++) {
        const struct CUgraphNode_st *n = orig->nodes[i];
        struct CUgraphNode_st *deps[n->ndeps ? n->ndeps : 1];
        for (size_t d = 0; d < n->ndeps; d++)
            deps[d] = g->nodes[n->deps[d]->index];
        if (!fk_graph_add_locked(g, &n->work, deps, n->ndeps))
            r = CUDA_ERROR_OUT_OF_MEMORY;
    }
    pthread_mutex_unlock(&fk_lock);
    if (r != CUDA_SUCCESS)
        return r;
    *out = g;
    return CUDA_SUCCESS;
}

/* An instantiated graph takes its graph's parameters when their shapes
 * match: the same nodes, of the same types, with the same dependencies. */
FK_API CUresult cuGraphExecUpdate_v2(CUgraphExec e, CUgraph g, CUgraphExecUpdateResultInfo *info)
{
    CHECK_CTX();
    if (!e || e->magic != FK_MAGIC_GEXEC || !fk_graph_ok(g))
        return CUDA_ERROR_INVALID_VALUE;
    CUgraphExecUpdateResult res = CU_GRAPH_EXEC_UPDATE_SUCCESS;
    CUgraphNode bad = NULL;
    pthread_mutex_lock(&fk_lock);
    if (g->count != e->count)
        res = CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED;
    for (size_t i = 0; i < g->count && res == CU_GRAPH_EXEC_UPDATE_SUCCESS; i++) {
        const struct CUgraphNode_st *n = g->nodes[i];
        const struct fk_exec_node *x = &e->nodes[i];
        if (n->work.kind != x->work.kind)
            res = CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED;
        else if (n->ndeps != x->ndeps)
            res = CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED;
        for (size_t d = 0; d < n->ndeps && res == CU_GRAPH_EXEC_UPDATE_SUCCESS; d++)
            if (n->deps[d]->index != x->deps[d])
                res = CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED;
        if (res != CU_GRAPH_EXEC_UPDATE_SUCCESS)
            bad = g->nodes[i];
    }
    if (res == CU_GRAPH_EXEC_UPDATE_SUCCESS)
        for (size_t i = 0; i < g->count; i++)
            e->nodes[i].work = g->nodes[i]->work;
    pthread_mutex_unlock(&fk_lock);
    if (info) {
        info->result = res;
        info->errorNode = bad;
        info->errorFromNode = NULL;
    }
    return res == CU_GRAPH_EXEC_UPDATE_SUCCESS ? CUDA_SUCCESS : CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
}

/* A clone's nodes are its original's, in the same order. */
FK_API CUresult cuGraphNodeFindInClone(CUgraphNode *out, CUgraphNode orig, CUgraph clone)
{
    if (!out || !fk_graph_node_ok(orig) || !fk_graph_ok(clone))
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&fk_lock);
    CUgraphNode n = orig->index < clone->count ? clone->nodes[orig->index] : NULL;
    pthread_mutex_unlock(&fk_lock);
    *out = n;
    return n ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* CUPTI's ids of nodes and graphs (the simulated CUPTI's cuptiGetGraphNodeId
 * and cuptiGetGraphId ask here). */
FK_API int fakecuda_graph_node_id(CUgraphNode n, uint64_t *id)
{
    if (!fk_graph_node_ok(n) || !id)
        return -1;
    *id = n->id;
    return 0;
}

FK_API int fakecuda_graph_id(CUgraph g, uint32_t *id)
{
    if (!fk_graph_ok(g) || !id)
        return -1;
    *id = g->id;
    return 0;
}

/* fk_graph.c: stream capture and CUDA Graphs. Work submitted to a capturing
 * stream becomes nodes instead of running; each launch of the instantiated
 * graph runs them in order on the launch's stream, all under the graph
 * launch's correlation id (as CUPTI reports graph work). */
#include <stdlib.h>
#include <string.h>

#include "fk_driver.h"

uint64_t fk_node_ns(const struct fk_node *n)
{
    if (n->kind == FAKECUDA_ACT_KERNEL)
        return fk_kernel_duration(n->f);
    /* the host side of the copy decides: HtoD and HtoH read it, DtoH writes it */
    int host = n->copy_kind == 2 ? n->dst_kind : n->src_kind;
    double bw = n->kind == FAKECUDA_ACT_MEMSET || n->copy_kind == 8 || n->copy_kind == 10 ? fk_cfg.dtod_bw
                : host == FK_MEM_PINNED                                                 ? fk_cfg.pinned_bw
                                                                                        : fk_cfg.pageable_bw;
    double t = (double)n->bytes / bw;
    uint64_t ns = (uint64_t)t;
    if ((double)ns < t)
        ns++;
    return ns + fk_cfg.copy_latency_ns;
}

uint64_t fk_run_node(struct CUstream_st *s, const struct fk_node *n, uint32_t corr, uint64_t *ticket)
{
    uint64_t start, end = fk_submit(s, fk_node_ns(n), &start);
    if (n->kind == FAKECUDA_ACT_MEMCPY || n->kind == FAKECUDA_ACT_MEMSET) {
        uint64_t t = fk_effect_post(n);
        atomic_store(&s->last_effect, t);
        if (ticket)
            *ticket = t;
    }
    struct fakecuda_activity a = {.kind = n->kind, .correlation_id = corr, .context_id = 1, .stream_id = s->id,
                                  .start_ns = start, .end_ns = end, .bytes = n->bytes,
                                  .copy_kind = n->copy_kind, .src_kind = n->src_kind, .dst_kind = n->dst_kind,
                                  .memset_value = (int)n->value};
    if (n->kind == FAKECUDA_ACT_KERNEL) {
        a.name = n->f->name;
        memcpy(a.grid, n->grid, sizeof(a.grid));
        memcpy(a.block, n->block, sizeof(a.block));
        a.shared_mem = n->shm;
        a.bytes = 0;
    }
    fk_activity_emit(&a);
    return end;
}

int fk_capture(struct CUstream_st *s, const struct fk_node *node)
{
    pthread_mutex_lock(&fk_lock);
    struct CUgraph_st *g = s->capture;
    if (g) {
        if (g->count == g->cap) {
            size_t cap = g->cap ? g->cap * 2 : 16;
            struct fk_node *n = realloc(g->nodes, cap * sizeof(*n));
            if (n) {
                g->nodes = n;
                g->cap = cap;
            }
        }
        if (g->count < g->cap)
            g->nodes[g->count++] = *node;
    }
    pthread_mutex_unlock(&fk_lock);
    return g != NULL;
}

static CUresult fk_begin_capture(CUstream hs, int pt)
{
    CHECK_CTX();
    if (!fk_stream_valid(hs))
        return CUDA_ERROR_INVALID_HANDLE;
    struct CUstream_st *s = fk_stream(hs, pt);
    if (s->legacy)
        return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    struct CUgraph_st *g = calloc(1, sizeof(*g));
    if (!g)
        return CUDA_ERROR_OUT_OF_MEMORY;
    g->magic = FK_MAGIC_GRAPH;
    pthread_mutex_lock(&fk_lock);
    CUresult r = CUDA_SUCCESS;
    if (s->capture)
        r = CUDA_ERROR_ILLEGAL_STATE;
    else
        s->capture = g;
    pthread_mutex_unlock(&fk_lock);
    if (r != CUDA_SUCCESS)
        free(g);
    return r;
}

FK_API CUresult cuStreamBeginCapture_v2(CUstream s, CUstreamCaptureMode mode) { (void)mode; return fk_begin_capture(s, 0); }
FK_API CUresult cuStreamBeginCapture_v2_ptsz(CUstream s, CUstreamCaptureMode mode) { (void)mode; return fk_begin_capture(s, 1); }

static CUresult fk_end_capture(CUstream hs, CUgraph *out, int pt)
{
    CHECK_CTX();
    if (!out || !fk_stream_valid(hs))
        return CUDA_ERROR_INVALID_VALUE;
    struct CUstream_st *s = fk_stream(hs, pt);
    pthread_mutex_lock(&fk_lock);
    struct CUgraph_st *g = s->capture;
    s->capture = NULL;
    pthread_mutex_unlock(&fk_lock);
    if (!g)
        return CUDA_ERROR_ILLEGAL_STATE;
    *out = g;
    return CUDA_SUCCESS;
}

FK_API CUresult cuStreamEndCapture(CUstream s, CUgraph *g) { return fk_end_capture(s, g, 0); }
FK_API CUresult cuStreamEndCapture_ptsz(CUstream s, CUgraph *g) { return fk_end_capture(s, g, 1); }

static CUresult fk_is_capturing(CUstream hs, CUstreamCaptureStatus *st, int pt)
{
    if (!st || !fk_stream_valid(hs))
        return CUDA_ERROR_INVALID_VALUE;
    *st = fk_stream(hs, pt)->capture ? CU_STREAM_CAPTURE_STATUS_ACTIVE : CU_STREAM_CAPTURE_STATUS_NONE;
    return CUDA_SUCCESS;
}

FK_API CUresult cuStreamIsCapturing(CUstream s, CUstreamCaptureStatus *st) { return fk_is_capturing(s, st, 0); }
FK_API CUresult cuStreamIsCapturing_ptsz(CUstream s, CUstreamCaptureStatus *st) { return fk_is_capturing(s, st, 1); }

FK_API CUresult cuGraphInstantiateWithFlags(CUgraphExec *out, CUgraph g, unsigned long long flags)
{
    (void)flags;
    CHECK_CTX();
    if (!out || !g || g->magic != FK_MAGIC_GRAPH)
        return CUDA_ERROR_INVALID_VALUE;
    struct CUgraphExec_st *e = calloc(1, sizeof(*e));
    if (!e)
        return CUDA_ERROR_OUT_OF_MEMORY;
    e->magic = FK_MAGIC_GEXEC;
    e->graph = g;
    *out = e;
    return CUDA_SUCCESS;
}

static CUresult fk_graph_launch(CUgraphExec e, CUstream hs, int pt)
{
    CHECK_CTX();
    if (!e || e->magic != FK_MAGIC_GEXEC || !fk_stream_valid(hs))
        return CUDA_ERROR_INVALID_HANDLE;
    uint32_t corr = fk_api_enter("cuGraphLaunch");
    struct CUstream_st *s = fk_stream(hs, pt);
    const struct CUgraph_st *g = e->graph;
    for (size_t i = 0; i < g->count; i++)
        fk_run_node(s, &g->nodes[i], corr, NULL);
    return CUDA_SUCCESS;
}

FK_API CUresult cuGraphLaunch(CUgraphExec e, CUstream s) { return fk_graph_launch(e, s, 0); }
FK_API CUresult cuGraphLaunch_ptsz(CUgraphExec e, CUstream s) { return fk_graph_launch(e, s, 1); }

FK_API CUresult cuGraphExecDestroy(CUgraphExec e)
{
    if (!e || e->magic != FK_MAGIC_GEXEC)
        return CUDA_ERROR_INVALID_VALUE;
    e->magic = 0;
    free(e);
    return CUDA_SUCCESS;
}

FK_API CUresult cuGraphDestroy(CUgraph g)
{
    if (!g || g->magic != FK_MAGIC_GRAPH)
        return CUDA_ERROR_INVALID_VALUE;
    /* Instantiated graphs keep using the nodes: they are not freed. */
    g->magic = 0;
    return CUDA_SUCCESS;
}

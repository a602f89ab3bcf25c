/* fk_graph.c: running work and graph launches (stream capture:
 * fk_capture.c). Each launch of an instantiated graph runs
 * every node on the launch's stream, each once its dependencies have
 * ended, all under the launch's correlation id and with the graph's and
 * node's ids in their records, as CUPTI reports graph work. (Graphs built
 * node by node: fk_graph_build.c.) */
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

void fk_emit_work(struct CUstream_st *s, const struct fk_node *n, uint32_t corr, uint64_t start, uint64_t end,
                  uint32_t graph_id, uint64_t node_id)
{
    if (n->kind != FAKECUDA_ACT_KERNEL && n->kind != FAKECUDA_ACT_MEMCPY && n->kind != FAKECUDA_ACT_MEMSET)
        return;
    struct fakecuda_activity a = {.kind = n->kind, .correlation_id = corr, .device = (uint32_t)s->device,
                                  .context_id = (uint32_t)s->device + 1, .stream_id = s->id,
                                  .start_ns = start, .end_ns = end, .bytes = n->bytes,
                                  .copy_kind = n->copy_kind, .src_kind = n->src_kind, .dst_kind = n->dst_kind,
                                  .memset_value = (int)n->value, .graph_id = graph_id, .graph_node_id = node_id};
    if (n->kind == FAKECUDA_ACT_KERNEL) {
        a.name = n->f->name;
        memcpy(a.grid, n->grid, sizeof(a.grid));
        memcpy(a.block, n->block, sizeof(a.block));
        a.shared_mem = n->shm;
        a.bytes = 0;
    }
    fk_activity_emit(&a);
}

uint64_t fk_run_node(struct CUstream_st *s, const struct fk_node *n, uint32_t corr, uint64_t *ticket)
{
    /* A call that blocks for its copy has the bytes moved first, so that it
     * returns when the copy ends on the GPU, not later (a tracer may see
     * the GPU's record before the call returns otherwise). */
    uint64_t early = 0;
    if (n->blocking && (n->kind == FAKECUDA_ACT_MEMCPY || n->kind == FAKECUDA_ACT_MEMSET)) {
        early = fk_effect_post(n);
        fk_effect_wait(early);
    }
    if (n->kind == FAKECUDA_ACT_KERNEL && fk_coll_is(n->f))
        return fk_coll_launch(s, n, corr);
    uint64_t start, end = fk_submit(s, fk_node_ns(n), &start);
    int fault = n->kind == FAKECUDA_ACT_KERNEL ? fk_function_fault(n->f) : 0;
    if (fault)
        fk_fault_at(s->device, end, fault);
    if (n->kind == FAKECUDA_ACT_MEMCPY || n->kind == FAKECUDA_ACT_MEMSET) {
        uint64_t t = early ? early : fk_effect_post(n);
        atomic_store(&s->last_effect, t);
        if (ticket)
            *ticket = t;
    }
    fk_emit_work(s, n, corr, start, end, 0, 0);
    return end;
}

FK_API CUresult cuGraphInstantiateWithFlags(CUgraphExec *out, CUgraph g, unsigned long long flags)
{
    CHECK_CTX();
    if (!out || !fk_graph_ok(g) || (flags & ~0xfull))
        return CUDA_ERROR_INVALID_VALUE;
    struct CUgraphExec_st *e = calloc(1, sizeof(*e));
    if (!e)
        return CUDA_ERROR_OUT_OF_MEMORY;
    CUresult r = fk_exec_build(e, g);
    if (r != CUDA_SUCCESS) {
        free(e);
        return r;
    }
    e->magic = FK_MAGIC_GEXEC;
    *out = e;
    return CUDA_SUCCESS;
}

/* Every node starts once the launch may start and its dependencies have
 * ended; independent branches overlap, as on a real GPU. */
static void fk_graph_run(const struct CUgraphExec_st *e, struct CUstream_st *s, uint32_t corr)
{
    uint64_t base = fk_graph_open(s), last = base;
    uint64_t *ends = e->count ? malloc(e->count * sizeof(*ends)) : NULL;
    for (size_t i = 0; i < e->count && ends; i++) {
        const struct fk_exec_node *x = &e->nodes[i];
        uint64_t start = base;
        for (size_t d = 0; d < x->ndeps; d++)
            if (ends[x->deps[d]] > start)
                start = ends[x->deps[d]];
        int gpu = x->work.kind == FAKECUDA_ACT_KERNEL || x->work.kind == FAKECUDA_ACT_MEMCPY ||
                  x->work.kind == FAKECUDA_ACT_MEMSET;
        uint64_t end = start + (gpu ? fk_node_ns(&x->work) : 0);
        ends[i] = end;
        if (end > last)
            last = end;
        if (x->work.kind == FAKECUDA_ACT_KERNEL) {
            int fault = fk_function_fault(x->work.f);
            if (fault)
                fk_fault_at(s->device, end, fault);
        } else if (x->work.kind == FAKECUDA_ACT_MEMCPY || x->work.kind == FAKECUDA_ACT_MEMSET) {
            atomic_store(&s->last_effect, fk_effect_post(&x->work));
        } else if (x->work.kind == FK_NODE_HOST) {
            fk_host_call(s, start, x->work.fn, NULL, NULL, x->work.data);
        }
        fk_emit_work(s, &x->work, corr, start, end, e->graph_id, x->id);
    }
    free(ends);
    fk_graph_close(s, last);
}

static CUresult fk_graph_launch(CUgraphExec e, CUstream hs, int pt)
{
    CHECK_CTX();
    if (!e || e->magic != FK_MAGIC_GEXEC || !fk_stream_valid(hs))
        return CUDA_ERROR_INVALID_HANDLE;
    uint32_t corr = fk_api_enter("cuGraphLaunch");
    fk_graph_run(e, fk_stream(hs, pt), corr);
    return CUDA_SUCCESS;
}

FK_API CUresult cuGraphLaunch(CUgraphExec e, CUstream s) { return fk_graph_launch(e, s, 0); }
FK_API CUresult cuGraphLaunch_ptsz(CUgraphExec e, CUstream s) { return fk_graph_launch(e, s, 1); }

/* Uploading makes the first launch cheaper on a real GPU; here launches
 * cost nothing to prepare, so it only checks its arguments. */
static CUresult fk_graph_upload(CUgraphExec e, CUstream hs)
{
    CHECK_CTX();
    if (!e || e->magic != FK_MAGIC_GEXEC || !fk_stream_valid(hs))
        return CUDA_ERROR_INVALID_HANDLE;
    return CUDA_SUCCESS;
}

FK_API CUresult cuGraphUpload(CUgraphExec e, CUstream s) { return fk_graph_upload(e, s); }
FK_API CUresult cuGraphUpload_ptsz(CUgraphExec e, CUstream s) { return fk_graph_upload(e, s); }

FK_API CUresult cuGraphExecDestroy(CUgraphExec e)
{
    if (!e || e->magic != FK_MAGIC_GEXEC)
        return CUDA_ERROR_INVALID_VALUE;
    e->magic = 0;
    for (size_t i = 0; i < e->count; i++)
        free(e->nodes[i].deps);
    free(e->nodes);
    free(e);
    return CUDA_SUCCESS;
}

FK_API CUresult cuGraphDestroy(CUgraph g)
{
    if (!fk_graph_ok(g))
        return CUDA_ERROR_INVALID_VALUE;
    /* Not freed: a program may still hold its node handles, which then
     * fail their magic check. */
    pthread_mutex_lock(&fk_lock);
    for (size_t i = 0; i < g->count; i++)
        g->nodes[i]->magic = 0;
    g->magic = 0;
    pthread_mutex_unlock(&fk_lock);
    return CUDA_SUCCESS;
}

/* fk_capture.c: stream capture. Work submitted to a capturing stream
 * becomes a node of the capture's graph, after the nodes the stream
 * depends on, instead of running. Other streams take part as NVIDIA's
 * programming guide describes (cross-stream dependencies): an event
 * recorded on a capturing stream holds that stream's dependencies; a
 * stream that waits on it joins the capture (fork) or adds them to its own
 * (join). Ending the capture on the stream it began on ends it for every
 * stream joined to it; it fails with CUDA_ERROR_STREAM_CAPTURE_UNJOINED
 * when a joined stream's last work was not joined back into that stream,
 * and on any other stream with CUDA_ERROR_STREAM_CAPTURE_UNMATCHED. */
#include <stdlib.h>
#include <string.h>

#include "fk_driver.h"

/* fk_lock held for all below. */
static int fk_deps_set(struct fk_capdeps *d, struct CUgraphNode_st *const *v, size_t n)
{
    if (n > d->room) {
        struct CUgraphNode_st **m = realloc(d->v, n * sizeof(*m));
        if (!m)
            return -1;
        d->v = m;
        d->room = n;
    }
    if (n)
        memcpy(d->v, v, n * sizeof(*v));
    d->n = n;
    return 0;
}

static int fk_deps_add(struct fk_capdeps *d, struct CUgraphNode_st *node)
{
    for (size_t i = 0; i < d->n; i++)
        if (d->v[i] == node)
            return 0;
    if (d->n == d->room) {
        size_t room = d->room ? d->room * 2 : 4;
        struct CUgraphNode_st **m = realloc(d->v, room * sizeof(*m));
        if (!m)
            return -1;
        d->v = m;
        d->room = room;
    }
    d->v[d->n++] = node;
    return 0;
}

int fk_capture(struct CUstream_st *s, const struct fk_node *node)
{
    pthread_mutex_lock(&fk_lock);
    struct CUgraph_st *g = s->capture;
    if (g) {
        struct CUgraphNode_st *n = fk_graph_add_locked(g, node, s->cap_deps.v, s->cap_deps.n);
        if (n)
            fk_deps_set(&s->cap_deps, &n, 1);
    }
    pthread_mutex_unlock(&fk_lock);
    return g != NULL;
}

int fk_capture_event_record(struct CUevent_st *e, struct CUstream_st *s)
{
    pthread_mutex_lock(&fk_lock);
    struct CUgraph_st *g = s->capture;
    if (g) {
        e->cap_graph = g;
        fk_deps_set(&e->cap_deps, s->cap_deps.v, s->cap_deps.n);
    } else {
        e->cap_graph = NULL; /* an ordinary record from now on */
    }
    pthread_mutex_unlock(&fk_lock);
    return g != NULL;
}

int fk_capture_wait_event(struct CUstream_st *s, struct CUevent_st *e)
{
    pthread_mutex_lock(&fk_lock);
    struct CUgraph_st *g = e->cap_graph;
    int handled = 0;
    if (g && g->magic == FK_MAGIC_GRAPH && g->capturing && !s->legacy) {
        handled = 1;
        if (!s->capture) {
            /* a fork: s joins the capture, depending on what the event holds */
            struct CUstream_st **j = realloc(g->joined, (g->njoined + 1) * sizeof(*j));
            if (j) {
                g->joined = j;
                g->joined[g->njoined++] = s;
                s->capture = g;
                fk_deps_set(&s->cap_deps, e->cap_deps.v, e->cap_deps.n);
            }
        } else if (s->capture == g) {
            for (size_t i = 0; i < e->cap_deps.n; i++)
                fk_deps_add(&s->cap_deps, e->cap_deps.v[i]);
        }
    } else if (s->capture) {
        handled = 1; /* an event from outside the capture: no edge in the graph */
    }
    pthread_mutex_unlock(&fk_lock);
    return handled;
}

static CUresult fk_begin_capture(CUstream hs, int pt)
{
    CHECK_CTX();
    if (!fk_stream_valid(hs))
        return CUDA_ERROR_INVALID_HANDLE;
    struct CUstream_st *s = fk_stream(hs, pt);
    if (s->legacy)
        return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    struct CUgraph_st *g = fk_graph_new();
    if (!g)
        return CUDA_ERROR_OUT_OF_MEMORY;
    pthread_mutex_lock(&fk_lock);
    CUresult r = CUDA_SUCCESS;
    if (s->capture) {
        r = CUDA_ERROR_ILLEGAL_STATE;
    } else {
        s->capture = g;
        s->cap_deps.n = 0;
        g->capturing = 1;
        g->origin = s;
    }
    pthread_mutex_unlock(&fk_lock);
    if (r != CUDA_SUCCESS)
        free(g);
    return r;
}

FK_API CUresult cuStreamBeginCapture_v2(CUstream s, CUstreamCaptureMode mode) { (void)mode; return fk_begin_capture(s, 0); }
FK_API CUresult cuStreamBeginCapture_v2_ptsz(CUstream s, CUstreamCaptureMode mode) { (void)mode; return fk_begin_capture(s, 1); }

/* Marks n and every node it depends on. */
static void fk_mark_ancestors(const struct CUgraphNode_st *n, unsigned char *seen)
{
    if (seen[n->index])
        return;
    seen[n->index] = 1;
    for (size_t i = 0; i < n->ndeps; i++)
        fk_mark_ancestors(n->deps[i], seen);
}

/* Every joined stream's dependencies lie behind the origin's: it was joined back. */
static int fk_all_joined(const struct CUgraph_st *g)
{
    if (!g->njoined)
        return 1;
    unsigned char *seen = calloc(g->count ? g->count : 1, 1);
    if (!seen)
        return 1;
    for (size_t i = 0; i < g->origin->cap_deps.n; i++)
        fk_mark_ancestors(g->origin->cap_deps.v[i], seen);
    int ok = 1;
    for (size_t j = 0; j < g->njoined && ok; j++) {
        const struct CUstream_st *s = g->joined[j];
        for (size_t i = 0; i < s->cap_deps.n && ok; i++)
            ok = seen[s->cap_deps.v[i]->index];
    }
    free(seen);
    return ok;
}

static CUresult fk_end_capture(CUstream hs, CUgraph *out, int pt)
{
    CHECK_CTX();
    if (!out || !fk_stream_valid(hs))
        return CUDA_ERROR_INVALID_VALUE;
    struct CUstream_st *s = fk_stream(hs, pt);
    pthread_mutex_lock(&fk_lock);
    struct CUgraph_st *g = s->capture;
    CUresult r = !g ? CUDA_ERROR_ILLEGAL_STATE
               : g->origin != s ? CUDA_ERROR_STREAM_CAPTURE_UNMATCHED
               : fk_all_joined(g) ? CUDA_SUCCESS : CUDA_ERROR_STREAM_CAPTURE_UNJOINED;
    if (g && g->origin == s) {
        /* ended (or invalidated) for every stream taking part */
        for (size_t j = 0; j < g->njoined; j++) {
            g->joined[j]->capture = NULL;
            g->joined[j]->cap_deps.n = 0;
        }
        free(g->joined);
        g->joined = NULL;
        g->njoined = 0;
        g->capturing = 0;
        s->capture = NULL;
        s->cap_deps.n = 0;
    }
    pthread_mutex_unlock(&fk_lock);
    if (r != CUDA_SUCCESS)
        return r;
    *out = g;
    return CUDA_SUCCESS;
}

FK_API CUresult cuStreamEndCapture(CUstream s, CUgraph *g) { return fk_end_capture(s, g, 0); }
FK_API CUresult cuStreamEndCapture_ptsz(CUstream s, CUgraph *g) { return fk_end_capture(s, g, 1); }

static CUresult fk_is_capturing(CUstream hs, CUstreamCaptureStatus *st, int pt)
{
    if (!st || !fk_stream_valid(hs))
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&fk_lock);
    *st = fk_stream(hs, pt)->capture ? CU_STREAM_CAPTURE_STATUS_ACTIVE : CU_STREAM_CAPTURE_STATUS_NONE;
    pthread_mutex_unlock(&fk_lock);
    return CUDA_SUCCESS;
}

FK_API CUresult cuStreamIsCapturing(CUstream s, CUstreamCaptureStatus *st) { return fk_is_capturing(s, st, 0); }
FK_API CUresult cuStreamIsCapturing_ptsz(CUstream s, CUstreamCaptureStatus *st) { return fk_is_capturing(s, st, 1); }

/* The capture's state and the nodes the stream's next captured work will
 * depend on (right after a captured call: the node it made). The array
 * stays valid until the stream's next capture call, as the driver's does. */
static CUresult fk_capture_info(CUstream hs, CUstreamCaptureStatus *st, cuuint64_t *id, CUgraph *graph,
                                const CUgraphNode **deps, const CUgraphEdgeData **edges, size_t *ndeps, int pt)
{
    if (!st || !fk_stream_valid(hs))
        return CUDA_ERROR_INVALID_VALUE;
    struct CUstream_st *s = fk_stream(hs, pt);
    pthread_mutex_lock(&fk_lock);
    struct CUgraph_st *g = s->capture;
    *st = g ? CU_STREAM_CAPTURE_STATUS_ACTIVE : CU_STREAM_CAPTURE_STATUS_NONE;
    if (g) {
        if (id)
            *id = g->id;
        if (graph)
            *graph = g;
        if (deps)
            *deps = s->cap_deps.n ? (const CUgraphNode *)s->cap_deps.v : NULL;
        if (edges)
            *edges = NULL;
        if (ndeps)
            *ndeps = s->cap_deps.n;
    }
    pthread_mutex_unlock(&fk_lock);
    return CUDA_SUCCESS;
}

FK_API CUresult cuStreamGetCaptureInfo_v3(CUstream s, CUstreamCaptureStatus *st, cuuint64_t *id, CUgraph *graph,
                                          const CUgraphNode **deps, const CUgraphEdgeData **edges, size_t *ndeps)
{
    return fk_capture_info(s, st, id, graph, deps, edges, ndeps, 0);
}
FK_API CUresult cuStreamGetCaptureInfo_v3_ptsz(CUstream s, CUstreamCaptureStatus *st, cuuint64_t *id,
                                               CUgraph *graph, const CUgraphNode **deps,
                                               const CUgraphEdgeData **edges, size_t *ndeps)
{
    return fk_capture_info(s, st, id, graph, deps, edges, ndeps, 1);
}

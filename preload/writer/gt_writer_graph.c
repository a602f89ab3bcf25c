/* gt_writer_graph.c: CUDA Graph nodes into graph_node_rows, on the writer
 * thread. A node is keyed by CUPTI's graphNodeId, the id the GPU records
 * of its replays carry (gpu_ops.graph_node_id), so its row tells where the
 * work a graph launch ran was made. */
#include "base/gt_event.h"
#include "writer/gt_writer_int.h"

void gt_write_graph_node(struct gt_writer *w, const struct gt_event *e)
{
    if (e->result != 0 || !e->u.gnode.node || e->u.gnode.kind == GT_GN_NONE)
        return; /* no node, or none CUPTI named (GPU timing off): nothing would link to it */
    uint32_t api = e->api == GT_API_GRAPH_NODE ? e->u.gnode.api : e->api;
    if (e->api == GT_API_GRAPH_NODE) {
        /* A record of its own: what it refers to is written here. */
        gt_emit_stack(w, e->stack_id);
        gt_emit_pystack(w, e->pystack_id);
    }
    if (e->u.gnode.kind == GT_GN_CLONE) {
        sqlite3_stmt *s = w->st[ST_GNODE_CLONE];
        sqlite3_bind_int64(s, 1, (int64_t)e->u.gnode.node);
        sqlite3_bind_int64(s, 2, e->u.gnode.graph);
        sqlite3_bind_int64(s, 3, (int64_t)e->u.gnode.orig);
        if (gt_step(w, ST_GNODE_CLONE) < 0 || sqlite3_changes(w->db) > 0)
            return;
        /* Its original was made before the trace began: the clone's own call is its site. */
    } else if (e->u.gnode.name_id) {
        gt_emit_name(w, e->u.gnode.name_id);
    }
    sqlite3_stmt *s = w->st[ST_GNODE];
    int kind = e->u.gnode.kind == GT_GN_CLONE ? GT_GN_OTHER : e->u.gnode.kind;
    sqlite3_bind_int64(s, 1, (int64_t)e->u.gnode.node);
    sqlite3_bind_int64(s, 2, e->u.gnode.graph);
    sqlite3_bind_int64(s, 3, kind);
    if (e->u.gnode.name_id && kind == GT_GN_KERNEL)
        sqlite3_bind_int64(s, 4, e->u.gnode.name_id);
    sqlite3_bind_int64(s, 5, api);
    sqlite3_bind_int64(s, 6, e->tid);
    sqlite3_bind_int64(s, 7, (int64_t)e->start_ns);
    if (e->stack_id)
        sqlite3_bind_int64(s, 8, e->stack_id);
    if (e->pystack_id)
        sqlite3_bind_int64(s, 9, e->pystack_id);
    if (e->u.gnode.kind == GT_GN_CLONE)
        sqlite3_bind_int64(s, 10, (int64_t)e->u.gnode.orig);
    gt_step(w, ST_GNODE);
}

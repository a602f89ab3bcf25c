/* gt_gnodes.c: the report's "graph nodes" section (docs/report.md, Graph
 * nodes): each kernel, copy and memset a CUDA Graph launch ran, by the node
 * it ran as, and every node that ran no GPU work (host functions, empty
 * and memory nodes, nodes of graphs never launched), attributed to the site of the call that made the node (a
 * captured launch, cudaGraphAddKernelNode...; a clone's node, its
 * original's) and to the site of the graph launch.
 *
 * Read with SQL apart from the main passes, from the storage tables: the
 * graph launches' calls are read in one pass over events (their corr to
 * their site) and joined to the graph work grouped by node and launch, so
 * a trace without its indexes (a process that died) costs no more.
 * Traces written before graph nodes were recorded have none. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/gt_analyze.h"
#include "analysis/gt_site.h"

/* graph_node_rows.kind, as the graph_nodes view spells it. */
static const char *const gt_gnode_kinds[] = {"kernel", "memcpy", "memset", "host", "empty", "other",
                                             "mem_alloc", "mem_free"};
#define GT_GNODE_KINDS (int)(sizeof(gt_gnode_kinds) / sizeof(gt_gnode_kinds[0]))

static int gt_gnode_by_gpu(const void *a, const void *b)
{
    const struct gt_gnode_row *x = a, *y = b;
    if (x->gpu_ns != y->gpu_ns)
        return x->gpu_ns > y->gpu_ns ? -1 : 1;
    if (x->runs != y->runs)
        return x->runs > y->runs ? -1 : 1;
    int c = strcmp(x->kernel, y->kernel);
    if (c)
        return c;
    c = strcmp(x->created.text, y->created.text);
    return c ? c : strcmp(x->launched.text, y->launched.text);
}

/* Rows are few (nodes x launch sites): found by a linear search. */
struct gt_gkey {
    int kind;
    uint32_t created, launched;
};

int gt_graph_nodes(struct gt_trace *t, struct gt_sites *sites, uint32_t nocall, struct gt_report *r)
{
    int64_t has = 0;
    if (gt_trace_int(t, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'graph_node_rows'",
                     &has) < 0)
        return -1;
    if (!has)
        return 0;
    if (gt_trace_int(t, "SELECT EXISTS (SELECT 1 FROM graph_node_rows)", &has) < 0)
        return -1;
    if (!has)
        return 0;
    static const char sql[] =
        "WITH launch(corr, site) AS MATERIALIZED ("
        "  SELECT corr, COALESCE(stack_id, 0) | (COALESCE(pystack_id, 0) << 32) FROM events"
        "  WHERE api_id IN (SELECT id FROM api_names WHERE category = 'graph_launch') AND corr IS NOT NULL) "
        "SELECT n.kind, COALESCE(s.demangled, s.value), COALESCE(n.stack_id, 0) | (COALESCE(n.pystack_id, 0) << 32),"
        "       l.corr IS NOT NULL, l.site, g.runs, g.ns, g.graph_node_id "
        "FROM (SELECT graph_node_id, corr, name_id, count(*) AS runs, sum(dur_ns) AS ns FROM gpu_ops"
        "      WHERE graph_node_id IS NOT NULL AND kind < 3 GROUP BY 1, 2, 3) g "
        "JOIN graph_node_rows n ON n.node_id = g.graph_node_id "
        "LEFT JOIN launch l ON l.corr = g.corr LEFT JOIN strings s ON s.id = g.name_id "
        /* nodes that ran no GPU work (host, empty, memory nodes; graphs never
         * launched): shown too, with no launch and no runs */
        "UNION ALL SELECT n.kind, COALESCE(s.demangled, s.value), COALESCE(n.stack_id, 0) | (COALESCE(n.pystack_id, 0) << 32), 0, 0, 0, 0,"
        "       n.node_id FROM graph_node_rows n LEFT JOIN strings s ON s.id = n.name_id"
        "  WHERE n.node_id NOT IN (SELECT graph_node_id FROM gpu_ops WHERE graph_node_id IS NOT NULL AND kind < 3) "
        "ORDER BY 8";
    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(t->db, sql, -1, &q, NULL) != SQLITE_OK) {
        gt_trace_sql_error(t, "graph nodes");
        return -1;
    }
    struct gt_gkey *keys = NULL;
    int64_t *last_node = NULL; /* per row: the last node counted in it (rows come by node) */
    size_t n = 0, cap = 0;
    int rc, failed = 0;
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        int kind = sqlite3_column_int(q, 0);
        if (kind < 0 || kind >= GT_GNODE_KINDS)
            kind = 5; /* other */
        const char *kernel = kind == 0 ? (const char *)sqlite3_column_text(q, 1) : NULL;
        uint32_t created = gt_site_index(sites, sqlite3_column_int64(q, 2));
        uint32_t launched = sqlite3_column_int(q, 3) ? gt_site_index(sites, sqlite3_column_int64(q, 4)) : nocall;
        if (created == UINT32_MAX || launched == UINT32_MAX) {
            failed = 1;
            break;
        }
        size_t i = 0;
        for (; i < n; i++)
            if (keys[i].kind == kind && keys[i].created == created && keys[i].launched == launched &&
                !strcmp(r->gnodes[i].kernel, kernel ? kernel : ""))
                break;
        if (i == n) {
            if (n == cap) {
                size_t c = cap ? cap * 2 : 16;
                struct gt_gkey *k = realloc(keys, c * sizeof(*k));
                int64_t *l = k ? realloc(last_node, c * sizeof(*l)) : NULL;
                struct gt_gnode_row *g = l ? realloc(r->gnodes, c * sizeof(*g)) : NULL;
                if (k)
                    keys = k;
                if (l)
                    last_node = l;
                if (!g) {
                    failed = 1;
                    break;
                }
                r->gnodes = g;
                cap = c;
            }
            keys[n] = (struct gt_gkey){kind, created, launched};
            last_node[n] = -1;
            struct gt_gnode_row *row = &r->gnodes[n];
            memset(row, 0, sizeof(*row));
            snprintf(row->kind, sizeof(row->kind), "%s", gt_gnode_kinds[kind]);
            snprintf(row->kernel, sizeof(row->kernel), "%s", kernel ? kernel : "");
            row->created = *gt_site_by_index(sites, created);
            row->launched = *gt_site_by_index(sites, launched);
            n++;
        }
        struct gt_gnode_row *row = &r->gnodes[i];
        int64_t node = sqlite3_column_int64(q, 7);
        row->nodes += last_node[i] != node;
        last_node[i] = node;
        row->runs += (uint64_t)sqlite3_column_int64(q, 5);
        row->gpu_ns += (uint64_t)sqlite3_column_int64(q, 6);
    }
    if (!failed && rc != SQLITE_DONE) {
        gt_trace_sql_error(t, "graph nodes");
        failed = 2;
    }
    sqlite3_finalize(q);
    free(keys);
    free(last_node);
    r->ngnodes = n;
    if (failed == 1)
        fprintf(stderr, "gputrace: %s: out of memory\n", t->path);
    if (failed)
        return -1;
    if (n > 1)
        qsort(r->gnodes, n, sizeof(*r->gnodes), gt_gnode_by_gpu);
    return 0;
}

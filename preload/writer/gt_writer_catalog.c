/* gt_writer_catalog.c: the tables every trace of a build holds the same:
 * api_names (the hook table) and result_names (NVIDIA's names for the
 * runtime's and the driver's result codes, generated from the toolkit's
 * own headers into build/gen/gt_error_names.h). Writer only. */
#include <sqlite3.h>

#include "base/gt_event.h"
#include "hot/gt_hooks.h"
#include "writer/gt_writer_int.h"
#include "gt_error_names.h"

static const char *const gt_category_names[GT_CAT_COUNT] = {
    [GT_CAT_NONE] = "none", [GT_CAT_LAUNCH] = "launch", [GT_CAT_MEMCPY] = "memcpy", [GT_CAT_MEMSET] = "memset",
    [GT_CAT_SYNC] = "sync", [GT_CAT_ALLOC] = "alloc", [GT_CAT_FREE] = "free", [GT_CAT_STREAM] = "stream",
    [GT_CAT_EVENT] = "event", [GT_CAT_OTHER] = "other", [GT_CAT_GRAPH] = "graph_launch",
    [GT_CAT_GRAPH_BUILD] = "graph_build", [GT_CAT_QUERY] = "sync", [GT_CAT_MODULE] = "module",
};

/* api_names.lib and result_names.lib: which enum a hook's result is. */
static const char *gt_lib_name(int lib)
{
    return lib == GT_LIB_DRV ? "driver" : lib == GT_LIB_CUPTI ? "cupti" : "runtime";
}

int gt_write_api_names(struct gt_writer *w)
{
    sqlite3_stmt *s = NULL;
    int rc = sqlite3_prepare_v2(w->db, "INSERT INTO api_names VALUES(?,?,?,?)", -1, &s, NULL);
    for (uint32_t i = 0; rc == SQLITE_OK && i < GT_API_COUNT; i++) {
        sqlite3_bind_int64(s, 1, i);
        sqlite3_bind_text(s, 2, gt_hooks[i].name, -1, SQLITE_STATIC);
        sqlite3_bind_text(s, 3, gt_category_names[gt_hooks[i].category], -1, SQLITE_STATIC);
        sqlite3_bind_text(s, 4, gt_lib_name(gt_hooks[i].lib), -1, SQLITE_STATIC);
        rc = sqlite3_step(s) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
        sqlite3_reset(s);
    }
    sqlite3_finalize(s);
    return rc;
}

static void gt_write_names(struct gt_writer *w, int lib, const struct gt_error_name *names, int n)
{
    for (int i = 0; i < n && !w->failed; i++) {
        sqlite3_bind_text(w->st[ST_RESULT_NAME], 1, gt_lib_name(lib), -1, SQLITE_STATIC);
        sqlite3_bind_int64(w->st[ST_RESULT_NAME], 2, names[i].code);
        sqlite3_bind_text(w->st[ST_RESULT_NAME], 3, names[i].name, -1, SQLITE_STATIC);
        gt_step(w, ST_RESULT_NAME);
    }
}

void gt_write_result_names(struct gt_writer *w)
{
    if (w->result_names_done || gt_begin_txn(w) < 0)
        return;
    w->result_names_done = 1;
    gt_write_names(w, GT_LIB_RT, gt_rt_error_names, GT_RT_ERROR_NAMES_N);
    gt_write_names(w, GT_LIB_DRV, gt_drv_error_names, GT_DRV_ERROR_NAMES_N);
}

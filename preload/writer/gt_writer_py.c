/* gt_writer_py.c: Python stacks into py_stacks, py_frames and py_code.
 * Each code object is stored once; each (code, instruction) position once,
 * its line resolved here from the copied line table. Writer thread only. */
#include "hot/gt_python.h"
#include "writer/gt_pylines.h"
#include "writer/gt_writer_int.h"

static void gt_emit_pycode(struct gt_writer *w, uint32_t code_id, const struct gt_pycode *c)
{
    if (gt_bit_test_set(w->pycode_done, code_id))
        return;
    sqlite3_stmt *s = w->st[ST_PYCODE];
    sqlite3_bind_int64(s, 1, code_id);
    sqlite3_bind_text(s, 2, c->file, -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 3, c->name, -1, SQLITE_STATIC);
    sqlite3_bind_int64(s, 4, c->first_line);
    gt_step(w, ST_PYCODE);
}

/* The py_frames row of one raw frame, written the first time it is seen.
 * The key is never 0: code ids start at 1. */
static int64_t gt_pyframe_id(struct gt_writer *w, uint64_t raw)
{
    uint32_t code_id = (uint32_t)(raw >> 32);
    int lasti = (int)(uint32_t)raw;
    struct gt_pycode c;
    if (gt_pycode_get(code_id, &c) < 0)
        return 0;
    int added;
    int64_t id = gt_idmap_get(&w->pyframes, raw, &added);
    if (!added)
        return id;
    gt_emit_pycode(w, code_id, &c);
    int line = gt_py_line(gt_python_minor(), c.linetable, c.linetable_len, c.first_line, lasti);
    sqlite3_stmt *s = w->st[ST_PYFRAME];
    sqlite3_bind_int64(s, 1, id);
    sqlite3_bind_int64(s, 2, code_id);
    sqlite3_bind_int64(s, 3, lasti);
    if (line >= 0)
        sqlite3_bind_int64(s, 4, line);
    else
        sqlite3_bind_null(s, 4);
    gt_step(w, ST_PYFRAME);
    return id;
}

void gt_emit_pystack(struct gt_writer *w, uint32_t pystack_id)
{
    if (!pystack_id || pystack_id >= (1u << 16) || gt_bit_test_set(w->pystack_done, pystack_id))
        return;
    const uint64_t *frames;
    uint32_t n = gt_pystack_frames(pystack_id, &frames);
    for (uint32_t d = 0; d < n; d++) {
        int64_t fid = gt_pyframe_id(w, frames[d]);
        if (!fid)
            continue;
        sqlite3_bind_int64(w->st[ST_PYSTACK], 1, pystack_id);
        sqlite3_bind_int64(w->st[ST_PYSTACK], 2, d);
        sqlite3_bind_int64(w->st[ST_PYSTACK], 3, fid);
        gt_step(w, ST_PYSTACK);
    }
}

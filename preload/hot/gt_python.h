/* gt_python.h: the Python stack of the thread making a CUDA call, read from
 * the interpreter's own structures without the GIL: a thread inside a CUDA
 * call is not running Python, so its frames hold still. Frames are recorded
 * raw, as (code object, instruction offset); each code object's file, name
 * and line table are copied once, and lines are resolved by the writer. */
#ifndef GT_PYTHON_H
#define GT_PYTHON_H

#include <stddef.h>
#include <stdint.h>

#define GT_PY_MAX_STR    4096         /* characters kept of a file or name */
#define GT_PY_MAX_TABLE  (1u << 20)   /* bytes of a line table */

/* Looks for a supported CPython in the process. Returns 1 when Python
 * stacks will be recorded; 0 with a reason in `why` ("" when the process
 * has no Python at all, which deserves no warning). */
int gt_python_init(int depth, char *why, size_t why_len);
/* "3.11" and the like; "" when Python stacks are off. */
const char *gt_python_version(void);

/* The calling thread's Python stack as an id; 0 when it runs no Python. */
uint32_t gt_python_capture(void);

/* A frame is (code id << 32) | instruction offset in code units. */
uint32_t gt_pystack_frames(uint32_t id, const uint64_t **frames);

struct gt_pycode {
    const char *file, *name;  /* UTF-8, NUL-terminated */
    const uint8_t *linetable;
    uint32_t linetable_len;
    int32_t first_line;
};
/* A code object's copy. 0, or -1 for an unknown id. */
int gt_pycode_get(uint32_t id, struct gt_pycode *out);
/* The minor version whose line table format the copies use. */
int gt_python_minor(void);

uint64_t gt_python_dropped(void);

/* ---- for the sampler (preload/sampler/), which reads other threads'
 * frames through copies that cannot fault ---- */
struct gt_py_layout;
/* The layout in use; NULL when Python stacks are off. */
const struct gt_py_layout *gt_python_layout(void);
void gt_python_types(uintptr_t *code, uintptr_t *str, uintptr_t *bytes);
/* 1 while the interpreter runs (initialized, not finalizing). */
int gt_python_live(void);
int gt_python_depth(void);
/* Copies the object at `addr` (a str, GT_PYOBJ_STR, or a bytes,
 * GT_PYOBJ_BYTES) whole into memory of the caller's, checked to be of that
 * type; returns the copy's address, 0 when it cannot be had. */
enum { GT_PYOBJ_STR, GT_PYOBJ_BYTES };
typedef uintptr_t (*gt_py_fetch_fn)(uintptr_t addr, int kind, void *ctx);
/* The id of the code object at `code`, its first bytes copied at `img`
 * (checked to be a code object); what it points to read through fetch. */
uint32_t gt_python_code_id_copied(uintptr_t code, const void *img, gt_py_fetch_fn fetch, void *ctx);
/* A stack of frames as gt_pystack_frames gives them; 0 when full. */
uint32_t gt_python_intern(const uint64_t *frames, uint32_t n);

#endif

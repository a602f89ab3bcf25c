/* gt_py_layouts.h: where CPython keeps what the Python stack walker reads,
 * per minor version, for x86-64 release builds (not debug, not
 * free-threaded). Rows are printed by scripts/py_layout.c from each
 * interpreter's own headers; tests/test_python.py checks them against every
 * interpreter it finds. 3.13 and later also publish these offsets in
 * _PyRuntime.debug_offsets, which win where they exist. */
#ifndef GT_PY_LAYOUTS_H
#define GT_PY_LAYOUTS_H

#include <stdint.h>

#define GT_PY_NONE 0xffffffffu

struct gt_py_layout {
    uint32_t minor;
    uint32_t ts_frame;        /* 3.10 PyThreadState.frame, 3.11-3.12 .cframe, 3.13 .current_frame */
    uint32_t cframe_current;  /* 3.11-3.12 _PyCFrame.current_frame */
    uint32_t fr_back;         /* PyFrameObject.f_back (3.10), _PyInterpreterFrame.previous */
    uint32_t fr_code;         /* f_code, or f_executable (3.13) */
    uint32_t fr_instr;        /* int f_lasti (3.10), prev_instr (3.11-3.12), instr_ptr (3.13) */
    uint32_t fr_owner;        /* 3.11 and later */
    uint32_t co_filename, co_name, co_qualname, co_linetable, co_firstlineno;
    uint32_t co_code;         /* co_code_adaptive, 3.11 and later */
    uint32_t ob_type, var_size, bytes_sval;
    uint32_t str_length, str_state, str_ascii_size, str_compact_size;
};

static const struct gt_py_layout gt_py_layouts[] = {
    {10, 24, GT_PY_NONE, 24, 32, 96, GT_PY_NONE, 104, 112, 112, 120, 40, GT_PY_NONE, 8, 16, 32, 16, 32, 48, 72},
    {11, 56, 8, 48, 32, 56, 69, 112, 120, 128, 136, 72, 184, 8, 16, 32, 16, 32, 48, 72},
    {12, 56, 0, 8, 0, 56, 70, 112, 120, 128, 136, 68, 192, 8, 16, 32, 16, 32, 40, 56},
    {13, 72, GT_PY_NONE, 8, 0, 56, 70, 112, 120, 128, 136, 68, 200, 8, 16, 32, 16, 32, 40, 56},
};

/* Where the sampler finds every Python thread's state (sampler/gt_sampler_pyts.c),
 * printed by `py_layout threads`: PyInterpreterState.threads.head,
 * PyThreadState.next, .interp, .native_thread_id (3.11 and later; 3.13
 * takes them from _PyRuntime.debug_offsets). A version whose row is
 * GT_PY_NONE (3.10 has no native thread id) samples the Python stacks of
 * threads that called CUDA alone. */
struct gt_py_thread_layout {
    uint32_t minor, interp_threads_head, ts_next, ts_interp, ts_native_tid;
};

static const struct gt_py_thread_layout gt_py_thread_layouts[] = {
    {10, GT_PY_NONE, GT_PY_NONE, GT_PY_NONE, GT_PY_NONE},
    {11, 16, 8, 16, 160},
    {12, 72, 8, 16, 144},
};

#endif

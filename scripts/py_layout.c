/* py_layout.c: prints the CPython struct offsets gputrace's Python stack
 * walker needs, read from one interpreter's own (internal) headers, as a
 * row of preload/hot/gt_py_layouts.h. Build and run it by hand, once per new
 * CPython minor version (scripts/py-layout.sh), and by tests/test_python.py
 * to check the table against every interpreter on the machine. */
#define Py_BUILD_CORE 1
#include <Python.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#if PY_VERSION_HEX < 0x030b0000
#include <frameobject.h>
#else
#include <internal/pycore_frame.h>
#include <internal/pycore_interp.h>
#endif

#define OFF(t, f) ((unsigned)offsetof(t, f))
#define NONE 0xffffffffu

static void put(unsigned v, const char *sep)
{
    if (v == NONE)
        printf("GT_PY_NONE%s", sep);
    else
        printf("%u%s", v, sep);
}

/* "threads": the row of gt_py_thread_layouts instead (where the sampler
 * finds the interpreter's list of thread states and each one's thread id:
 * PyInterpreterState.threads.head, PyThreadState.next, .interp and
 * .native_thread_id, 3.11 and later) */
static int threads_row(void)
{
#if PY_VERSION_HEX >= 0x030b0000
    printf("    {%d, %u, %u, %u, %u},\n", PY_MINOR_VERSION, OFF(PyInterpreterState, threads.head),
           OFF(PyThreadState, next), OFF(PyThreadState, interp), OFF(PyThreadState, native_thread_id));
#else
    printf("    {%d, GT_PY_NONE, GT_PY_NONE, GT_PY_NONE, GT_PY_NONE},\n", PY_MINOR_VERSION);
#endif
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "threads") == 0)
        return threads_row();
    unsigned ts_frame, cframe_current = NONE, fr_back, fr_code, fr_instr, fr_owner = NONE;
    unsigned co_qualname, co_code = NONE;
#if PY_VERSION_HEX < 0x030b0000
    ts_frame = OFF(PyThreadState, frame);
    fr_back = OFF(PyFrameObject, f_back);
    fr_code = OFF(PyFrameObject, f_code);
    fr_instr = OFF(PyFrameObject, f_lasti);
    co_qualname = OFF(PyCodeObject, co_name);
#else
    co_qualname = OFF(PyCodeObject, co_qualname);
    co_code = OFF(PyCodeObject, co_code_adaptive);
    fr_back = OFF(_PyInterpreterFrame, previous);
    fr_owner = OFF(_PyInterpreterFrame, owner);
#if PY_VERSION_HEX < 0x030d0000
    ts_frame = OFF(PyThreadState, cframe);
    cframe_current = OFF(_PyCFrame, current_frame);
    fr_code = OFF(_PyInterpreterFrame, f_code);
    fr_instr = OFF(_PyInterpreterFrame, prev_instr);
#else
    ts_frame = OFF(PyThreadState, current_frame);
    fr_code = OFF(_PyInterpreterFrame, f_executable);
    fr_instr = OFF(_PyInterpreterFrame, instr_ptr);
#endif
#endif
    unsigned row[] = {ts_frame, cframe_current, fr_back, fr_code, fr_instr, fr_owner,
                      OFF(PyCodeObject, co_filename), OFF(PyCodeObject, co_name), co_qualname,
                      OFF(PyCodeObject, co_linetable), OFF(PyCodeObject, co_firstlineno), co_code,
                      OFF(PyObject, ob_type), OFF(PyVarObject, ob_size), OFF(PyBytesObject, ob_sval),
                      OFF(PyASCIIObject, length), OFF(PyASCIIObject, state), (unsigned)sizeof(PyASCIIObject),
                      (unsigned)sizeof(PyCompactUnicodeObject)};
    printf("    {%d, ", PY_MINOR_VERSION);
    for (size_t i = 0; i < sizeof(row) / sizeof(row[0]); i++)
        put(row[i], i + 1 < sizeof(row) / sizeof(row[0]) ? ", " : "},\n");
    return 0;
}

"""Module loading and JIT (tests/progs/module_jit.c holds the truth): PTX
from the real NVRTC and a cubin nvcc built, loaded through every driver
entry point on the simulated GPU. The calls are recorded with their time,
result, image format and length, and whether the driver compiled PTX; the
report counts them in the API summary and the errors, gives the host's
time in them a cause of its own, and `record` says when they were a large
share of the run."""
import ctypes
import os
import subprocess
import sys

import oracle
from gtlib import GPUTRACE, ROOT, assert_eq, base_env, prog, run_traced, tmpdir

MS = 1_000_000
JIT_NS = 30 * MS
ENV = {"FAKECUDA_JIT_NS": str(JIT_NS)}
CUBIN = os.path.join(os.path.dirname(prog("module_jit")), "module_cubin.cubin")
FATBIN = os.path.join(os.path.dirname(prog("module_jit")), "module_cubin.fatbin")
MODULE_APIS = ["cuModuleLoad", "cuModuleLoadDataEx", "cuModuleGetFunction", "cuModuleLoadData",
               "cuModuleGetGlobal_v2", "cuLinkCreate_v2", "cuLinkAddData_v2", "cuLinkAddFile_v2", "cuLinkComplete",
               "cuLinkDestroy", "cuLibraryLoadData", "cuLibraryGetKernel", "cuLibraryGetModule", "cuModuleLoadFatBinary",
               "cuLibraryLoadFromFile"]


def _marker_line(src, marker):
    with open(os.path.join(ROOT, "tests", "progs", src)) as f:
        lines = [i + 1 for i, text in enumerate(f) if "/* %s */" % marker in text]
    assert_eq(len(lines), 1, marker)
    return "%s:%d" % (src, lines[0])


def _run():
    run = run_traced([prog("module_jit"), CUBIN, FATBIN], env=ENV)
    assert_eq(run.proc.returncode, 3, run.proc.stderr[-2000:])
    assert_eq(run.proc.stdout, "module_jit: 5 modules, 2 libraries, 4 launches\n")
    assert "cuModuleGetGlobal(no_such_global): CUDA_ERROR_NOT_FOUND" in run.proc.stderr, run.proc.stderr
    return run


def test_module_calls_recorded_with_what_they_loaded():
    run = _run()
    cats = dict(run.q("SELECT name, category FROM api_names WHERE name IN (%s)" %
                      ",".join("'%s'" % a for a in MODULE_APIS)))
    assert_eq(cats, {a: "module" for a in MODULE_APIS})
    rows = run.q("SELECT c.name, c.result, c.error, m.kind, m.bytes, m.jit FROM api_calls c "
                 "JOIN module_args m ON m.call_id = c.id ORDER BY c.id")
    cubin = os.path.getsize(CUBIN)
    got = [(n, r, e, k, b if k != "ptx" else (b or 0) > 100, j) for n, r, e, k, b, j in rows]
    assert_eq(got, [
        ("cuModuleLoad", 0, None, "file", None, 0),
        ("cuModuleLoadDataEx", 0, None, "cubin", cubin, 0),
        ("cuModuleGetFunction", 0, None, None, None, 0),
        ("cuModuleLoadData", 0, None, "ptx", True, 1),
        ("cuModuleGetFunction", 0, None, None, None, 0),
        ("cuModuleGetGlobal_v2", 0, None, None, None, 0),
        ("cuModuleGetGlobal_v2", 0, None, None, None, 0),
        ("cuLinkCreate_v2", 0, None, None, None, 0),
        ("cuLinkAddData_v2", 0, None, "ptx", True, 1),
        ("cuLinkAddFile_v2", 0, None, "file", None, 0),
        ("cuLinkComplete", 0, None, "cubin", got[10][4], 0),
        ("cuModuleLoadData", 0, None, "cubin", got[10][4], 0),
        ("cuLinkDestroy", 0, None, None, None, 0),
        ("cuModuleGetFunction", 0, None, None, None, 0),
        ("cuModuleGetFunction", 0, None, None, None, 0),
        ("cuLibraryLoadData", 0, None, "ptx", True, 1),
        ("cuLibraryGetKernel", 0, None, None, None, 0),
        ("cuLibraryGetModule", 0, None, None, None, 0),
        ("cuModuleLoadFatBinary", 0, None, "fatbin", os.path.getsize(FATBIN), 0),
        ("cuModuleGetFunction", 0, None, None, None, 0),
        ("cuLibraryLoadFromFile", 0, None, "file", None, 0),
        ("cuLibraryGetKernel", 0, None, None, None, 0),
        ("cuModuleGetGlobal_v2", 500, "CUDA_ERROR_NOT_FOUND", None, None, 0),
    ])
    assert got[10][4] > 0
    # each PTX compile cost the host FAKECUDA_JIT_NS inside its call
    for name, dur in run.q("SELECT c.name, c.end_ns - c.start_ns FROM api_calls c JOIN module_args m "
                           "ON m.call_id = c.id WHERE m.jit = 1"):
        assert dur >= JIT_NS, (name, dur)
    # the kernels the modules named
    assert_eq(sorted(r[0] for r in run.q("SELECT name FROM kernels")),
              ["cubin_kernel", "cubin_kernel", "jit_kernel", "jit_kernel"])


def test_report_counts_module_loading_and_blames_the_jit():
    run = _run()
    rc, doc, err = oracle.run_report([run.trace], MS)
    assert_eq(rc, 0, err)
    s = doc["summary"]
    assert_eq((s["failed_calls"], s["module_jit"]), (1, 3))
    assert s["module_ns"] >= 3 * JIT_NS, s
    api = {r["name"]: r for r in doc["api"]}
    for a in MODULE_APIS:
        assert a in api, (a, sorted(api))
    assert_eq((api["cuModuleGetGlobal_v2"]["count"], api["cuModuleGetGlobal_v2"]["errors"]), (3, 1))
    assert_eq([(e["name"], e["error"], e["count"]) for e in doc["errors"]],
              [("cuModuleGetGlobal_v2", "CUDA_ERROR_NOT_FOUND", 1)])
    # the GPU waited while the host compiled PTX, three times: each gap is
    # spent in its compile, at the line that asked for it
    assert s["idle_by_cause_ns"]["module"] >= 3 * JIT_NS, s["idle_by_cause_ns"]
    lines = {"cuModuleLoadData": _marker_line("module_jit.c", "JIT_LOAD"),
             "cuLinkAddData_v2": _marker_line("module_jit.c", "JIT_LINK"),
             "cuLibraryLoadData": _marker_line("module_jit.c", "JIT_LIBRARY")}
    gaps = [g for g in doc["idle_gaps"] if g["cause"] == "module"]
    assert_eq(sorted(g["spent_api"] for g in gaps), sorted(lines))
    for g in gaps:
        assert g["dur_ns"] >= JIT_NS and g["spent"][0].split(" in ")[0] == lines[g["spent_api"]], g
    f = {x["kind"]: x for x in doc["findings"]}["idle_module"]
    assert f["site"][0].split(" in ")[0] in lines.values(), (lines, f)
    assert "host loading modules / JIT" in f["title"], f
    text = subprocess.run([GPUTRACE, "report", run.trace], capture_output=True, text=True, timeout=60)
    assert "(1 failed)" in text.stdout and "host loading modules / JIT" in text.stdout, text.stdout
    assert "1  cuModuleGetGlobal_v2: CUDA_ERROR_NOT_FOUND" in text.stdout, text.stdout
    errs = oracle.check([run.trace], doc, MS)
    assert not errs, "\n".join(e[:400] for e in errs[:20])


def test_record_says_when_module_loading_was_a_large_share():
    d = tmpdir()
    r = subprocess.run([GPUTRACE, "record", "-o", os.path.join(d, "m-%p.db"), prog("module_jit"), CUBIN, FATBIN],
                       capture_output=True, text=True, timeout=120, env=base_env(ENV))
    assert_eq(r.returncode, 3, r.stderr)
    lines = [x for x in r.stderr.splitlines() if x.startswith("gputrace: loading modules took")]
    assert_eq(len(lines), 1, r.stderr)
    assert lines[0].endswith(", 3 compiled PTX"), lines[0]


def test_simulated_driver_names_every_error_as_cuda_h_does():
    """cuGetErrorName/cuGetErrorString know every code cuda.h declares
    (801 was "CUDA_ERROR_UNKNOWN"); an unknown code: CUDA_ERROR_INVALID_VALUE
    and NULL."""
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    import gen_error_names
    codes = gen_error_names.parse_enum("/usr/local/cuda/include/cuda.h", gen_error_names.DRIVER[1])
    lib = ctypes.CDLL(os.path.join(ROOT, "build", "fakecuda", "libcuda.so.1"))
    s = ctypes.c_char_p()
    for code, name in codes:
        assert_eq(lib.cuGetErrorName(code, ctypes.byref(s)), 0, name)
        assert_eq(s.value.decode(), name)
        assert_eq(lib.cuGetErrorString(code, ctypes.byref(s)), 0, name)
        assert s.value and s.value.decode() != name, (name, s.value)
    assert_eq(dict(codes)[801], "CUDA_ERROR_NOT_SUPPORTED")
    lib.cuGetErrorString(801, ctypes.byref(s))
    assert_eq(s.value.decode(), "This error indicates that the attempted operation is not supported on the current "
                                "system or device.")
    assert_eq(lib.cuGetErrorName(123456, ctypes.byref(s)), 1)
    assert_eq(s.value, None)

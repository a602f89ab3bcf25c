"""CuPy from PyPI (cupy-cuda13x, pinned in scripts/python-requirements.txt)
on the simulated GPU: tests/progs/py/cupy_client.py, an ElementwiseKernel
and a RawKernel compiled by NVRTC (the real one, from the nvidia-cuda-nvrtc
wheel, on the CPU) and loaded with cuModuleLoadData, pinned and pageable
copies, a memset, a stream of its own and cupy.cuda.nvtx ranges. CuPy links
NVIDIA's runtime statically, so it runs on the simulated driver alone
(tests/fakecuda/README.md, Private tables); every call the tracer sees is
the driver's.

Truth from outside the trace: the client's own log, the lines its source
marks, and the simulator's log of what its GPU ran."""
import collections
import functools
import re

import clientlib as cl
from gtlib import assert_eq, tmpdir

SCRIPT = "cupy_client.py"
STEPS = 3
N = 1 << 14  # float32s per array, as the script has it


def _env():
    # a kernel cache of its own: NVRTC compiles both kernels in every run
    return {"CUPY_CACHE_DIR": tmpdir()}


@functools.lru_cache(maxsize=None)
def _run():
    """The client untraced and traced, checked alike; run once for this file's tests."""
    return cl.check_same_both_ways(SCRIPT, [STEPS], env=_env())


def test_cupy_traced_prints_and_exits_as_untraced_and_every_gpu_record_is_in_the_trace():
    run, recs = _run()
    cl.check_gpu_records(run, recs)
    # the client's own log, as the script writes it
    log = cl.program_log(run.proc.stdout, "cupy_client: ")
    step = [["copy", "HtoD", str(4 * N), "pinned"], ["memset", str(4 * N)], ["kernel", "scale_shift"],
            ["kernel", "saxpy", "grid", str(N // 128), "block", "128"], ["copy", "DtoH", str(4 * N), "pinned"],
            ["sync", "stream"]]
    assert_eq(log, step * STEPS + [["copy", "HtoD", str(2 * N), "pageable"], ["copy", "DtoH", str(2 * N), "pageable"],
                                   ["sync", "device"]])
    # the simulator ran what the client asked for and nothing more
    kinds = collections.Counter((r.kind, r.name) for r in recs)
    assert_eq(kinds, {("kernel", "scale_shift"): STEPS, ("kernel", "saxpy"): STEPS, ("memcpy", None): 2 * STEPS + 2,
                      ("memset", None): STEPS, ("sync", None): 2 * STEPS + 2})


def test_cupy_each_operation_is_at_the_line_that_made_it():
    """Each kernel, copy (bytes, direction, host memory), memset and sync,
    by the script's line its call came from: CuPy's own Python frames
    (cupy/...py) above it do not hide it. CuPy copies a pageable NumPy
    array to the GPU through its pinned staging buffer (cupy.asarray), so
    that copy reads pinned memory, as the simulator's log says; a blocking
    ndarray.get syncs its stream."""
    run, recs = _run()
    m = cl.markers(SCRIPT)
    staged = [r for r in recs if r.kind == "memcpy" and r.bytes == 2 * N and r.copy == "HtoD"]
    assert_eq([(r.src, r.dst) for r in staged], [("pinned", "device")])
    want = collections.Counter({
        (("copy", "HtoD", 4 * N, "pinned"), m["h2d"]): STEPS,
        (("memset", 4 * N), m["memset"]): STEPS,
        (("kernel", "scale_shift"), m["elementwise"]): STEPS,
        (("kernel", "saxpy"), m["raw"]): STEPS,
        (("copy", "DtoH", 4 * N, "pinned"), m["d2h"]): STEPS,
        (("sync", "stream"), m["d2h"]): STEPS,
        (("sync", "stream"), m["stream_sync"]): STEPS,
        (("copy", "HtoD", 2 * N, "pinned"), m["h2d_pageable"]): 1,
        (("copy", "DtoH", 2 * N, "pageable"), m["d2h_pageable"]): 1,
        (("sync", "stream"), m["d2h_pageable"]): 1,
        (("sync", "context"), m["device_sync"]): 1,
    })
    assert_eq(cl.ops_by_line(run, SCRIPT), want)


def test_cupy_report_sites_and_nvtx_phases_and_steps():
    """Every Python site of the JSON report starts, among the script's
    frames, at a line that calls CUDA; cupy.cuda.nvtx's "train" range is
    the one phase and its "step N" ranges the steps, with the figures the
    client's log gives (and tests/oracle.py recomputes every figure)."""
    run, _ = _run()
    doc = cl.report(run)
    m = cl.markers(SCRIPT)
    cl.check_sites(doc, SCRIPT, set(m.values()))
    ph = [(p["name"], p["ranges"], p["launches"], p["h2d_bytes"], p["syncs"]) for p in doc["phases"]]
    assert_eq(ph, [("train", 1, 2 * STEPS, STEPS * 4 * N, 2 * STEPS)])
    assert_eq([s["count"] for s in doc["steps"]], [STEPS])
    names = [r[0] for r in run.q("SELECT name FROM ranges WHERE depth = 1 ORDER BY start_ns")]
    assert_eq(names, ["step %d" % i for i in range(STEPS)])


def test_cupy_sites_name_cupys_call_not_nvidias_static_runtime():
    """CuPy links NVIDIA's runtime into its runtime module: the native frame
    of a copy's or a sync's site is CuPy's wrapper that called it
    (runtime.cpp ... runtime_memcpyAsync), never a function of that runtime
    (libcudart_static_<hash>, cudaMemcpyAsync) (docs/report.md, Call sites)."""
    run, _ = _run()
    doc = cl.report(run)
    wrappers = {"h2d_hotspots": "runtime_memcpyAsync(", "syncs": "api_7runtime_"}
    for where, frames in cl.sites(doc):
        for f in frames:
            assert not re.match(r"^(libcudart_static_|cuda[A-Z]\w* \()", f), (where, frames)
    for table, name in wrappers.items():
        for row in doc[table]:
            native = [f for f in row["site"] if not re.match(r"^\S+\.py:", f)]
            assert native and native[0].startswith("runtime.cpp:") and name in native[0], (table, row["site"])

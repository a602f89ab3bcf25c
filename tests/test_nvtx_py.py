"""The nvtx package from PyPI (pinned in scripts/python-requirements.txt):
tests/progs/py/nvtx_client.py, nvtx.annotate as a decorator and as a
context manager and nvtx.push_range/pop_range around a loop that calls CUDA
through ctypes (the simulated runtime libcudart.so.13, and the driver for a
kernel loaded from PTX). Its ranges come to the tracer through NVTX's
injection (NVTX_INJECTION64_PATH, as gputrace record sets it).

Truth from outside the trace: the client's own log, the lines its source
marks, and the simulator's log of what its GPU ran."""
import collections
import functools

import clientlib as cl
from gtlib import assert_eq

SCRIPT = "nvtx_client.py"
STEPS = 3
N = 1 << 16  # bytes per copy, as the script has it


@functools.lru_cache(maxsize=None)
def _run():
    """The client untraced and traced, checked alike; run once for this file's tests."""
    return cl.check_same_both_ways(SCRIPT, [STEPS])


def test_nvtx_package_traced_as_untraced_and_every_gpu_record_is_in_the_trace():
    run, recs = _run()
    cl.check_gpu_records(run, recs)
    log = cl.program_log(run.proc.stdout, "nvtx_client: ")
    kernel = ["kernel", "scale", "grid", "64", "block", "256"]
    step = [["copy", "HtoD", str(N), "pageable"], ["memset", str(N)], kernel, ["copy", "DtoH", str(N), "pinned"],
            ["sync", "stream"]]
    assert_eq(log, step * STEPS + [kernel, ["sync", "device"]])
    m = cl.markers(SCRIPT)
    want = collections.Counter({
        (("copy", "HtoD", N, "pageable"), m["h2d"]): STEPS,
        (("memset", N), m["memset"]): STEPS,
        (("kernel", "scale"), m["launch"]): STEPS + 1,
        (("copy", "DtoH", N, "pinned"), m["d2h"]): STEPS,
        (("sync", "stream"), m["stream_sync"]): STEPS,
        (("sync", "device"), m["device_sync"]): 1,
    })
    assert_eq(cl.ops_by_line(run, SCRIPT), want)


def test_nvtx_package_ranges_become_phases_and_steps():
    """push_range's "train" and the context manager's "eval" are the
    phases, each with the launches, H2D bytes and syncs the client's log
    gives; the context manager's "step N" ranges are the steps; the
    decorator's "load" and push_range's "compute" ranges nest in each step
    (and tests/oracle.py recomputes every figure of the report)."""
    run, _ = _run()
    doc = cl.report(run)
    cl.check_sites(doc, SCRIPT, set(cl.markers(SCRIPT).values()))
    ph = [(p["name"], p["ranges"], p["launches"], p["h2d_bytes"], p["syncs"]) for p in doc["phases"]]
    assert_eq(ph, [("train", 1, STEPS, STEPS * N, STEPS), ("eval", 1, 1, 0, 1)])
    assert_eq([s["count"] for s in doc["steps"]], [STEPS])
    rows = run.q("SELECT r.name, r.depth, p.name FROM ranges r LEFT JOIN ranges p ON p.id = r.parent_id "
                 "ORDER BY r.start_ns, r.id")
    want = [("train", 0, None)]
    for i in range(STEPS):
        want += [("step %d" % i, 1, "train"), ("load", 2, "step %d" % i), ("compute", 2, "step %d" % i)]
    want += [("eval", 0, None)]
    assert_eq(rows, want)

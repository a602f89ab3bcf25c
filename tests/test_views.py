"""The public views of a version 5 trace (schema/gputrace.sql), on a
synthetic trace holding every case they distinguish: GPU records kept in
their call's row or in gpu_ops, graph launches' work, batch copies, GPU
work no intercepted call made, launches, copies and memsets made during
stream capture, calls without any GPU record, failed calls."""
import os

import make_trace as mt
from gtlib import assert_eq, query, tmpdir

# CUPTI's memory kinds (gpu_ops.src_kind / dst_kind)
PAGEABLE, PINNED, DEVICE = 1, 2, 3


def _trace():
    calls = [
        mt.launch("k_row", grid=(2, 1, 1), stream=7),                 # 1: its record in its row
        mt.launch("k_late", grid=(3, 1, 1), stream=7),                # 2: its record in gpu_ops
        mt.launch("k_none", stream=7),                                # 3: no record (timing off)
        mt.launch("k_cap", stream=7, captured=1),                     # 4: captured: ran nothing
        mt.launch("k_fail", result=98),                               # 5: failed
        mt.graph_launch(stream=9),                                    # 6: two kernels, two copies, a memset
        mt.memcpy("HtoD", 4096, host_mem="pageable", stream=7),       # 7: CUPTI says pinned
        mt.memcpy("HtoD", 7168, host_mem="pinned", is_async=True, api="cudaMemcpyBatchAsync"),  # 8: a batch
        mt.memcpy("DtoH", 512, stream=7, captured=1, is_async=True),  # 9: captured
        mt.memcpy("DtoH", 256),                                       # 10: no record
        mt.memset(1024, stream=7, captured=1, is_async=True),         # 11: captured
        mt.memset(2048, is_async=True, stream=7),                     # 12: its record in gpu_ops
        mt.memset(64),                                                # 13: no record
        mt.call("cuMemAlloc_v2", "alloc", result=1, alloc=dict(kind="device", bytes=16, ptr=None)),  # 14
        mt.call("cudaFoo", "other", result=12345),                   # 15: a code no header names
        mt.call("cudaMalloc", "alloc", result=2, alloc=dict(kind="device", bytes=16, ptr=None)),  # 16
    ]
    path = mt.make_trace(os.path.join(tmpdir(), "v5.db"), calls=calls)
    import sqlite3
    db = sqlite3.connect(path)
    t = mt.START_NS + 100000
    mt.add_gpu_op(db, "kernel", 1, t, t + 100, device=1, stream=13)
    mt.add_gpu_op(db, "kernel", 2, t + 200, t + 400, device=1, stream=13, fold=False)
    for i, name in enumerate(("g_one", "g_two")):
        mt.add_gpu_op(db, "kernel", 6, t + 1000 + i * 100, t + 1050 + i * 100, stream=14, name=name)
    mt.add_gpu_op(db, "memcpy", 6, t + 1300, t + 1350, stream=14, nbytes=100, copy_kind="HtoD", src_kind=PINNED,
                  dst_kind=DEVICE)
    mt.add_gpu_op(db, "memcpy", 6, t + 1400, t + 1450, stream=14, nbytes=200, copy_kind="DtoD", src_kind=DEVICE,
                  dst_kind=DEVICE)
    mt.add_gpu_op(db, "memset", 6, t + 1500, t + 1550, stream=14, nbytes=300)
    mt.add_gpu_op(db, "memcpy", 7, t + 2000, t + 2100, stream=13, nbytes=4096, src_kind=PINNED, dst_kind=DEVICE)
    for i, n in enumerate((1024, 2048, 4096)):
        mt.add_gpu_op(db, "memcpy", 8, t + 3000 + i * 100, t + 3050 + i * 100, stream=13, nbytes=n, src_kind=PINNED,
                      dst_kind=DEVICE, fold=False)
    mt.add_gpu_op(db, "memset", 12, t + 4000, t + 4100, stream=13, nbytes=2048, fold=False)
    mt.add_gpu_op(db, "kernel", None, t + 5000, t + 5100, stream=15, name="k_alien")
    db.commit()
    db.close()
    return path


def test_kernels_one_row_per_kernel_run():
    path = _trace()
    t = mt.START_NS + 100000
    rows = query(path, "SELECT api_call_id, name, device, stream, start_ns - ?, end_ns - start_ns, time_source, "
                       "api_start_ns IS NOT NULL, gpu_stream, grid_x, result, captured, via FROM kernels "
                       "ORDER BY time_source, start_ns", t)
    host = mt.START_NS + mt.STEP_NS
    assert_eq(rows[:5], [
        (1, "k_row", 1, 7, 0, 100, "gpu", 1, 13, 2, 0, 0, "launch"),
        (2, "k_late", 1, 7, 200, 200, "gpu", 1, 13, 3, 0, 0, "launch"),
        (6, "g_one", 0, 9, 1000, 50, "gpu", 1, 14, None, 0, 0, "graph"),
        (6, "g_two", 0, 9, 1100, 50, "gpu", 1, 14, None, 0, 0, "graph"),
        (None, "k_alien", 0, None, 5000, 50 * 2, "gpu", 0, 15, None, 0, 0, None),
    ])
    # no GPU record: the call's own times; the captured launch is no row
    assert_eq(query(path, "SELECT api_call_id, name, start_ns, end_ns - start_ns, gpu_stream, result, via "
                          "FROM kernels WHERE time_source = 'host' ORDER BY api_call_id"),
              [(3, "k_none", host + 2 * mt.STEP_NS, mt.CALL_NS, None, 0, "launch"),
               (5, "k_fail", host + 4 * mt.STEP_NS, mt.CALL_NS, None, 98, "launch")])
    assert_eq(len(rows), 7)


def test_memcpys_and_memsets_one_row_per_operation():
    path = _trace()
    rows = query(path, "SELECT api_call_id, kind, bytes, host_mem, async, time_source, gpu_src_kind, via "
                       "FROM memcpys ORDER BY api_start_ns, start_ns")
    assert_eq(rows, [
        (6, "HtoD", 100, "pinned", 1, "gpu", "pinned", "graph"),
        (6, "DtoD", 200, "none", 1, "gpu", "device", "graph"),
        (7, "HtoD", 4096, "pinned", 0, "gpu", "pinned", "memcpy"),     # CUPTI's answer over the call's
        (8, "HtoD", 1024, "pinned", 1, "gpu", "pinned", "memcpy"),     # each copy of the batch
        (8, "HtoD", 2048, "pinned", 1, "gpu", "pinned", "memcpy"),
        (8, "HtoD", 4096, "pinned", 1, "gpu", "pinned", "memcpy"),
        (10, "DtoH", 256, "pageable", 0, "host", None, "memcpy"),
    ])
    assert_eq(query(path, "SELECT api_call_id, bytes, async, time_source, via, captured FROM memsets "
                          "ORDER BY api_call_id"),
              [(6, 300, 1, "gpu", "graph", 0), (12, 2048, 1, "gpu", "memset", 0), (13, 64, 0, "host", "memset", 0)])
    # every GPU operation is one row of kernels, memcpys or memsets
    assert_eq(query(path, "SELECT count(*) FROM gpu_activity")[0][0],
              sum(query(path, "SELECT count(*) FROM %s WHERE time_source = 'gpu'" % v)[0][0]
                  for v in ("kernels", "memcpys", "memsets")))
    assert_eq(query(path, "SELECT via, count(*) FROM gpu_activity GROUP BY 1 ORDER BY 1"),
              [(None, 1), ("graph", 5), ("launch", 2), ("memcpy", 4), ("memset", 1)])


def test_errors_and_libs():
    path = _trace()
    assert_eq(query(path, "SELECT id, error FROM api_calls WHERE result != 0 ORDER BY id"),
              [(5, "cudaErrorInvalidDeviceFunction"), (14, "CUDA_ERROR_INVALID_VALUE"), (15, "error 12345"),
               (16, "cudaErrorMemoryAllocation")])
    assert_eq(query(path, "SELECT count(*) FROM calls WHERE result = 0 AND error IS NOT NULL")[0][0], 0)
    assert_eq(query(path, "SELECT count(*) FROM calls WHERE error IS NOT NULL")[0][0], 4)
    assert_eq(query(path, "SELECT lib FROM api_names WHERE name = 'cuMemAlloc_v2'"), [("driver",)])


def test_views_scan_each_large_table_once():
    """On a finished trace (indexes built), no view reads events or gpu_ops
    in full for each row: every lookup goes through an index."""
    path = _trace()
    small = ("api_names", "src", "dst", "cupti_memory_kinds", "CONSTANT ROWS", "meta")
    for view in ("calls", "api_calls", "kernels", "memcpys", "memsets", "gpu_activity", "syncs", "allocations",
                 "launch_args", "copy_args", "stack_frames", "py_stack_frames", "gpu_records"):
        plan = query(path, "EXPLAIN QUERY PLAN SELECT * FROM %s" % view)
        parent = dict((r[0], r[1]) for r in plan)
        detail = dict((r[0], r[3]) for r in plan)
        loops = {}
        for node, par, _, text in plan:
            if text.startswith(("SCAN", "SEARCH")):
                loops.setdefault(par, []).append(node)
        for node, par, _, text in plan:
            if not text.startswith("SCAN ") or any(s in text for s in small) or text == "SCAN " + view:
                continue
            # a full scan only as the outer loop of its query, outside any
            # subquery run per row
            assert loops[par][0] == node, "%s: %s inside a join: %s" % (view, text, plan)
            p = par
            while p:
                assert "CORRELATED" not in detail.get(p, ""), "%s: %s per row: %s" % (view, text, plan)
                p = parent.get(p, 0)

"""Call paths beyond plain symbol interposition: driver entry points that the
runtime and the driver hand out must come back wrapped, so the work done
through them is recorded like any other call."""
from gtlib import assert_eq, prog, run_plain, run_traced, stack_functions


def test_runtime_driver_entry_points_come_back_wrapped():
    run = run_traced([prog("entry_point")])
    assert run.proc.returncode == 0, run.proc.stderr
    assert_eq(run.proc.stdout, "entry_point: 3 launches, 1 copy\n")
    ks = run.q("SELECT k.name, c.name, c.stack_id FROM kernels k JOIN api_calls c ON c.id = k.api_call_id")
    assert_eq(len(ks), 3, "launches through cudaGetDriverEntryPoint")
    assert all(k[0] == "ep_kernel" and k[1] == "cuLaunchKernel" for k in ks), ks
    assert_eq(stack_functions(run.trace, ks[0][2])[0], "ep_launches")
    # the per-thread variant asked of cudaGetDriverEntryPointByVersion
    copies = run.q("SELECT c.name, m.bytes, m.kind, m.stream, c.stack_id FROM memcpys m "
                   "JOIN api_calls c ON c.id = m.api_call_id")
    assert_eq([(c[0], c[1], c[2], c[3]) for c in copies], [("cuMemcpyHtoD_v2_ptds", 8192, "HtoD", 2)])
    assert_eq(stack_functions(run.trace, copies[0][4])[0], "ep_copy")
    # and their GPU work is linked to them
    assert_eq(run.q1("SELECT count(*) FROM gpu_activity WHERE linked = 0"), 0)
    assert_eq(run.q1("SELECT count(*) FROM gpu_activity"), 4)


MB = 1 << 20


def test_dlsym_on_a_driver_handle_triton_style():
    run = run_traced([prog("dl_launcher")])
    assert run.proc.returncode == 0, run.proc.stderr
    assert_eq(run.proc.stdout, "dl_launcher: 7 launches\n")
    ks = run.q("SELECT k.name, c.name, k.grid_x, k.block_x, c.stack_id FROM kernels k "
               "JOIN api_calls c ON c.id = k.api_call_id")
    assert_eq(len(ks), 7)
    assert all(k[:4] == ("triton_kernel", "cuLaunchKernel", 3, 128) for k in ks), ks
    assert_eq(stack_functions(run.trace, ks[0][4])[:2], ["triton_launch", "main"])
    assert_eq(run.q1("SELECT count(*) FROM syncs WHERE kind = 'context'"), 1)
    assert_eq(run.q1("SELECT count(*) FROM gpu_activity WHERE kind = 'kernel' AND linked = 1"), 7)


def test_static_runtime_is_captured_at_the_driver():
    # the runtime is inside the executable: nothing to interpose there, but
    # it finds the driver with dlopen + dlsym + cuGetProcAddress, so every
    # driver call it makes is recorded
    run = run_traced([prog("rt_basic_static")])
    assert run.proc.returncode == 0, run.proc.stderr
    assert_eq(run.proc.stdout, "rt_basic: round trip ok\n")
    # in the order the program launched them (rows go in as their GPU
    # records arrive, so ids need not follow the calls)
    ks = run.q("SELECT name, grid_x, grid_y, block_x, shared_mem FROM kernels ORDER BY api_start_ns")
    assert_eq(ks, [("step_kernel", 4, 2, 128, 256)] * 3 + [("big_kernel", 1, 1, 32, 0)])
    copies = run.q("SELECT c.name, m.kind, m.bytes, m.host_mem, m.async FROM memcpys m "
                   "JOIN api_calls c ON c.id = m.api_call_id ORDER BY m.api_start_ns")
    assert_eq(copies, [("cuMemcpyHtoD_v2", "HtoD", MB, "pageable", 0),
                       ("cuMemcpyHtoDAsync_v2", "HtoD", MB, "pinned", 1),
                       ("cuMemcpyDtoH_v2", "DtoH", MB, "pageable", 0),
                       ("cuMemcpyDtoD_v2", "DtoD", 4096, "none", 0)])
    sid = run.q1("SELECT c.stack_id FROM memcpys m JOIN api_calls c ON c.id = m.api_call_id "
                 "WHERE m.kind = 'HtoD' AND m.async = 0")
    assert "upload_batch" in stack_functions(run.trace, sid), stack_functions(run.trace, sid)
    assert_eq(run.q1("SELECT count(*) FROM gpu_activity WHERE linked = 0"), 0)


def test_nvidias_static_runtime_runs_and_sites_name_the_users_functions():
    """A program nvcc links with NVIDIA's own static runtime (its default),
    built -O3 without -g and -O0 -g, on the simulated driver: untraced and
    traced alike, the same work for the GPU both ways; every kernel and copy the simulator ran is in the trace,
    linked; the report's sites name upload() and launch(), never NVIDIA's
    runtime inside the executable, and in the release build launch() too,
    into which the kernel's host-side function was inlined
    (docs/report.md, Call sites)."""
    import os
    import re

    import clientlib
    import oracle
    from gtlib import tmpdir
    for name in ("static_runtime", "static_runtime_g"):
        plain_log, log = os.path.join(tmpdir(), "plain.log"), os.path.join(tmpdir(), "fakecuda.log")
        plain = run_plain([prog(name)], env={"FAKECUDA_LOG": plain_log})
        run = run_traced([prog(name)], env={"FAKECUDA_LOG": log})
        assert_eq((run.proc.returncode, run.proc.stdout), (plain.returncode, plain.stdout), name)
        assert_eq(run.proc.stdout, "static_runtime: 0 failed, sync cudaSuccess\n")
        recs = clientlib.read_log(log)
        # the same work for the GPU, untraced (the simulator's log written at exit) and traced
        assert_eq(clientlib.work(recs), clientlib.work(clientlib.read_log(plain_log)), name)
        assert_eq(len(recs), 7, name)
        clientlib.check_gpu_records(run, recs)
        assert_eq(run.q("SELECT name, count(*), grid_x, block_x FROM kernels GROUP BY name"),
                  [("twice(float*, int)", 3, 256, 256)])
        assert_eq(run.q("SELECT kind, host_mem, bytes, count(*) FROM memcpys GROUP BY kind"),
                  [("HtoD", "pageable", 1 << 18, 3)])
        rc, doc, err = oracle.run_report([run.trace])
        assert_eq((rc, oracle.check([run.trace], doc)), (0, []), err)
        for where, frames in clientlib.sites(doc):
            for f in frames:
                assert not re.match(r"^(libcudart_static_|cuda[A-Z]\w* \()", f), (name, where, frames)
        firsts = {r["site"][0].split("(")[0].split(" in ")[-1] for r in doc["launch_overhead"]["sites"]}
        assert_eq(firsts, {"launch"}, name)
        firsts = {r["site"][0].split("(")[0].split(" in ")[-1] for r in doc["h2d_hotspots"]}
        assert_eq(firsts, {"upload"}, name)

def test_dlsym_wrapper_keeps_rtld_next_and_default():
    plain = run_plain([prog("rtld_next")])
    traced = run_traced([prog("rtld_next")])
    assert_eq(plain.stdout, "next=b default=a\n")
    assert_eq(traced.proc.stdout, plain.stdout)
    assert_eq(traced.proc.returncode, 0)
    assert_eq(traced.traces, [])  # no CUDA: no file


def test_graph_capture_and_replay():
    env = {"FAKECUDA_KERNEL_NS": "1000,graph_a=20000,graph_b=30000"}
    run = run_traced([prog("graph")], env=env)
    assert run.proc.returncode == 0, run.proc.stderr
    assert_eq(run.proc.stdout, "graph: 5 replays\n")
    # calls made during capture: recorded and flagged, with their arguments,
    # but they ran nothing, so no kernels or memsets row is theirs
    captured = run.q("SELECT c.id, c.name, s.value FROM api_calls c LEFT JOIN launch_args a ON a.call_id = c.id "
                     "LEFT JOIN strings s ON s.id = a.name_id WHERE c.captured = 1 ORDER BY c.id")
    assert_eq([c[1:] for c in captured], [("cudaLaunchKernel", "graph_a"), ("cudaMemsetAsync", None),
                                          ("cudaLaunchKernel", "graph_b"), ("cudaLaunchKernel", "graph_a")])
    for view in ("kernels", "memsets", "memcpys"):
        assert_eq(run.q1("SELECT count(*) FROM %s WHERE api_call_id IN (SELECT id FROM api_calls "
                         "WHERE captured = 1)" % view), 0, view)
        assert_eq(run.q1("SELECT count(*) FROM %s WHERE captured != 0" % view), 0, view)
    assert_eq(stack_functions(run.trace, run.q1("SELECT stack_id FROM api_calls WHERE id = ?", captured[2][0]))[0],
              "capture_step")
    # the capture's own bracket is not captured work
    assert_eq(run.q("SELECT name, captured FROM api_calls WHERE name LIKE 'cudaStream%Capture' ORDER BY id"),
              [("cudaStreamBeginCapture", 0), ("cudaStreamEndCapture", 0)])
    # each graph launch: recorded once, and linked to exactly its own GPU work
    launches = run.q("SELECT id, stack_id FROM api_calls WHERE category = 'graph_launch' ORDER BY id")
    assert_eq(len(launches), 5)
    assert_eq(stack_functions(run.trace, launches[0][1])[0], "replay")
    for call_id, _ in launches:
        work = run.q("SELECT kind, name, end_ns - start_ns FROM gpu_activity WHERE api_call_id = ? "
                     "ORDER BY start_ns", call_id)
        assert_eq([(w[0], w[1]) for w in work], [("kernel", "graph_a"), ("memset", None), ("kernel", "graph_b"),
                                                 ("kernel", "graph_a")])
        assert_eq([w[2] for w in work if w[0] == "kernel"], [20000, 30000, 20000])
    assert_eq(run.q1("SELECT count(*) FROM gpu_activity"), 5 * 4 + 1)
    assert_eq(run.q1("SELECT count(*) FROM gpu_activity WHERE linked = 0"), 0)
    assert_eq(run.q("SELECT via, count(*) FROM gpu_activity GROUP BY via ORDER BY via"), [("graph", 20), ("launch", 1)])
    # version 5: the kernels and memsets the graph ran are rows of kernels
    # and memsets, each linked to its graph launch, with GPU times
    stream = run.q1("SELECT DISTINCT stream FROM api_calls WHERE category = 'graph_launch'")
    for call_id, _ in launches:
        ks = run.q("SELECT name, mangled_name, via, time_source, end_ns - start_ns, stream, grid_x, result, captured, "
                   "start_ns >= api_start_ns, api_end_ns - api_start_ns = (SELECT end_ns - start_ns FROM api_calls "
                   "WHERE id = ?) FROM kernels WHERE api_call_id = ? ORDER BY start_ns", call_id, call_id)
        assert_eq(ks, [(n, n, "graph", "gpu", ns, stream, None, 0, 0, 1, 1)
                       for n, ns in (("graph_a", 20000), ("graph_b", 30000), ("graph_a", 20000))])
        assert_eq(run.q("SELECT bytes, via, time_source, stream FROM memsets WHERE api_call_id = ?", call_id),
                  [(4096, "graph", "gpu", stream)])
    assert_eq(run.q("SELECT name, via, time_source, grid_x FROM kernels WHERE via = 'launch'"),
              [("plain_kernel", "launch", "gpu", 1)])
    assert_eq(run.q1("SELECT count(*) FROM kernels"), 5 * 3 + 1)
    # the kernels a graph ran, by the site that launched the graph
    sites = run.q("SELECT f.function, count(*), sum(k.end_ns - k.start_ns) FROM kernels k "
                  "JOIN api_calls c ON c.id = k.api_call_id JOIN stack_frames f ON f.stack_id = c.stack_id "
                  "AND f.depth = 0 WHERE k.via = 'graph' GROUP BY 1")
    assert_eq(sites, [("replay", 15, 5 * 70000)])


def test_3d_copies_and_host_functions():
    run = run_traced([prog("copy3d")])
    assert run.proc.returncode == 0, run.proc.stderr
    assert_eq(run.proc.stdout, "copy3d: ok, host function ran\n")
    copies = run.q("SELECT c.name, m.kind, m.bytes, m.host_mem, m.async, m.time_source FROM memcpys m "
                   "JOIN api_calls c ON c.id = m.api_call_id ORDER BY c.start_ns")
    assert_eq(copies, [("cudaMemcpy3D", "HtoD", 24576, "pageable", 0, "gpu"),
                       ("cudaMemcpy3DAsync", "DtoH", 24576, "pinned", 1, "gpu"),
                       ("cuMemcpy3D_v2", "HtoD", 8192, "pageable", 0, "gpu")])
    stream = run.q1("SELECT stream FROM api_calls WHERE name = 'cudaMemcpy3DAsync'")
    assert_eq(run.q("SELECT name, stream FROM api_calls WHERE name = 'cudaLaunchHostFunc'"),
              [("cudaLaunchHostFunc", stream)])
    assert_eq(run.q1("SELECT count(*) FROM gpu_activity WHERE linked = 0"), 0)


def test_batch_copies_and_pool_allocation():
    run = run_traced([prog("batch")])
    assert run.proc.returncode == 0, run.proc.stderr
    assert_eq(run.proc.stdout, "batch: ok\n")
    # one call for the batch, its bytes summed in its arguments; each of its
    # copies on the GPU linked to it, and (version 5) a memcpys row of its own
    call = run.q1("SELECT id FROM api_calls WHERE name = 'cudaMemcpyBatchAsync'")
    assert_eq(run.q("SELECT kind, bytes, host_mem, async FROM copy_args WHERE call_id = ?", call),
              [("HtoD", 1024 + 2048 + 4096, "pinned", 1)])
    copies = run.q("SELECT api_call_id, kind, bytes, host_mem, async, time_source, via, gpu_src_kind, gpu_dst_kind, "
                   "result, end_ns > start_ns FROM memcpys ORDER BY start_ns")
    assert_eq(copies, [(call, "HtoD", n, "pinned", 1, "gpu", "memcpy", "pinned", "device", 0, 1)
                       for n in (1024, 2048, 4096)])
    assert_eq(run.q("SELECT bytes, end_ns - start_ns FROM gpu_activity WHERE api_call_id = ? ORDER BY start_ns",
                    call),
              run.q("SELECT bytes, end_ns - start_ns FROM memcpys ORDER BY start_ns"))
    assert_eq(run.q("SELECT api, kind, bytes FROM allocations WHERE api = 'cudaMallocFromPoolAsync'"),
              [("cudaMallocFromPoolAsync", "async", 65536)])

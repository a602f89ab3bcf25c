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
    ks = run.q("SELECT name, grid_x, grid_y, block_x, shared_mem FROM kernels ORDER BY api_call_id")
    assert_eq(ks, [("step_kernel", 4, 2, 128, 256)] * 3 + [("big_kernel", 1, 1, 32, 0)])
    copies = run.q("SELECT c.name, m.kind, m.bytes, m.host_mem, m.async FROM memcpys m "
                   "JOIN api_calls c ON c.id = m.api_call_id ORDER BY m.api_call_id")
    assert_eq(copies, [("cuMemcpyHtoD_v2", "HtoD", MB, "pageable", 0),
                       ("cuMemcpyHtoDAsync_v2", "HtoD", MB, "pinned", 1),
                       ("cuMemcpyDtoH_v2", "DtoH", MB, "pageable", 0),
                       ("cuMemcpyDtoD_v2", "DtoD", 4096, "none", 0)])
    sid = run.q1("SELECT c.stack_id FROM memcpys m JOIN api_calls c ON c.id = m.api_call_id "
                 "WHERE m.kind = 'HtoD' AND m.async = 0")
    assert "upload_batch" in stack_functions(run.trace, sid), stack_functions(run.trace, sid)
    assert_eq(run.q1("SELECT count(*) FROM gpu_activity WHERE linked = 0"), 0)


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
    # calls made during capture: recorded, flagged, and they ran nothing
    ks = run.q("SELECT name, captured, time_source FROM kernels ORDER BY api_call_id")
    assert_eq(ks, [("graph_a", 1, "host"), ("graph_b", 1, "host"), ("graph_a", 1, "host"),
                   ("plain_kernel", 0, "gpu")])
    assert_eq(run.q("SELECT bytes, captured FROM memsets"), [(4096, 1)])
    sid = run.q1("SELECT c.stack_id FROM kernels k JOIN api_calls c ON c.id = k.api_call_id "
                 "WHERE k.name = 'graph_b'")
    assert_eq(stack_functions(run.trace, sid)[0], "capture_step")
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


def test_3d_copies_and_host_functions():
    run = run_traced([prog("copy3d")])
    assert run.proc.returncode == 0, run.proc.stderr
    assert_eq(run.proc.stdout, "copy3d: ok, host function ran\n")
    copies = run.q("SELECT c.name, m.kind, m.bytes, m.host_mem, m.async, m.time_source FROM memcpys m "
                   "JOIN api_calls c ON c.id = m.api_call_id ORDER BY m.api_call_id")
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
    # one call for the batch: its bytes summed; each of its copies on the GPU linked to it
    copies = run.q("SELECT api_call_id, kind, bytes, host_mem, async FROM memcpys")
    assert_eq([c[1:] for c in copies], [("HtoD", 1024 + 2048 + 4096, "pinned", 1)])
    assert_eq(run.q("SELECT bytes FROM gpu_activity WHERE api_call_id = ? ORDER BY start_ns", copies[0][0]),
              [(1024,), (2048,), (4096,)])
    assert_eq(run.q("SELECT api, kind, bytes FROM allocations WHERE api = 'cudaMallocFromPoolAsync'"),
              [("cudaMallocFromPoolAsync", "async", 65536)])

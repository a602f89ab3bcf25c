"""The simulated GPU itself (tests/fakecuda): when each call blocks the
host, where its work lands on the GPU's timeline, and the functions real
programs call. The rules are NVIDIA's ("API synchronization behavior" in the
runtime and driver API references); the ground truth (bandwidths, kernel
durations, queue depth, launch latency) is set here, and the answers come
back through a trace gputrace recorded (the simulated CUPTI's records), on
the same clock as the calls' host times."""
import os
import subprocess

from gtlib import assert_eq, base_env, prog, run_traced

MB = 1 << 20
# 0.02 bytes/ns: a 1 MiB copy or memset takes 52,429 ns... x1000: 52.4 ms,
# long enough that a call which returns at once returns well before it ends.
SLOW = {"FAKECUDA_PINNED_BW": "0.02", "FAKECUDA_PAGEABLE_BW": "0.02", "FAKECUDA_DTOD_BW": "0.02",
        "FAKECUDA_COPY_LATENCY_NS": "0"}
COPY_NS = -(-MB * 50 // 1)  # ceil(MB / 0.02)

# (view, kind, host memory, async, blocks the host), in sim_sync copies' order
COPIES = [
    ("memcpys", "HtoD", "pageable", 0, True),   # staged: returns when the last chunk is copied
    ("memcpys", "DtoH", "pageable", 0, True),   # returns once the copy is done
    ("memcpys", "HtoD", "pinned", 0, True),     # synchronous with respect to the host
    ("memcpys", "DtoH", "pinned", 0, True),
    ("memcpys", "DtoD", "none", 0, False),      # no host-side synchronization
    ("memcpys", "HtoH", "pageable", 0, True),   # host to host: fully synchronous
    ("memcpys", "HtoD", "pageable", 1, True),   # async through pageable memory: staged
    ("memcpys", "DtoH", "pageable", 1, True),   # async to pageable memory: returns once done
    ("memcpys", "HtoD", "pinned", 1, False),    # async with pinned memory: queued
    ("memcpys", "DtoH", "pinned", 1, False),
    ("memcpys", "DtoD", "none", 1, False),
    ("memcpys", "HtoH", "pinned", 1, True),     # host to host, even async
    ("memcpys", "HtoD", "pinned", 1, False),    # cudaMemcpy2DAsync
    ("memcpys", "HtoD", "pinned", 0, True),     # cudaMemcpy2D
    ("memsets", None, None, 0, False),          # cudaMemset on device memory: asynchronous
    ("memsets", None, None, 0, True),           # cudaMemset on managed memory: synchronous
    ("memsets", None, None, 1, False),          # cudaMemsetAsync: always asynchronous
    ("memsets", None, None, 0, True),           # cudaMemset on pinned host memory: synchronous
]


def gpu_rows(run):
    """Every copy and memset with its call's host times, in call order (by
    the calls' start: the trace's ids need not follow it)."""
    return run.q("SELECT 'memcpys', kind, host_mem, async, bytes, start_ns, end_ns, api_start_ns, api_end_ns, "
                 "api_call_id FROM memcpys UNION ALL "
                 "SELECT 'memsets', NULL, NULL, async, bytes, start_ns, end_ns, api_start_ns, api_end_ns, "
                 "api_call_id FROM memsets ORDER BY api_start_ns")


def test_each_copy_and_memset_blocks_the_host_as_the_driver_documents():
    run = run_traced([prog("sim_sync"), "copies"], env=SLOW)
    assert run.proc.returncode == 0, run.proc.stderr
    assert_eq(run.proc.stdout, "sim_sync: bytes ok\n")
    rows = gpu_rows(run)[:len(COPIES)]
    assert_eq(len(rows), len(COPIES), "copies and memsets")
    for i, (want, row) in enumerate(zip(COPIES, rows)):
        view, kind, host_mem, is_async, blocks = want
        what = "#%d %s %s %s async=%d" % (i, view, kind, host_mem, is_async)
        assert_eq(row[:4], (view, kind, host_mem, is_async), what)
        bytes_, start, end, api_start, api_end = row[4:9]
        assert_eq(bytes_, MB, what + " bytes")
        assert_eq(end - start, COPY_NS, what + " GPU duration")
        assert start >= api_start, (what, "starts before its call", start, api_start)
        if blocks:
            assert api_end >= end, (what, "returned %d ns before its work ended" % (end - api_end))
        else:
            # returned while its work still had most of its 52 ms to run
            assert api_end < end, (what, "returned %d ns after its work ended" % (api_end - end))


LEGACY = {"FAKECUDA_KERNEL_NS": "1000000,on_blocking_a=20000000,on_nonblocking=60000000,on_legacy=5000000,"
                                "on_blocking_b=1000000,on_nonblocking_2=1000000"}


def test_legacy_default_stream_waits_for_blocking_streams_only():
    run = run_traced([prog("sim_sync"), "legacy"], env=LEGACY)
    assert run.proc.returncode == 0, run.proc.stderr
    k = {name: (start, end, api_start, api_end)
         for name, start, end, api_start, api_end in run.q(
             "SELECT mangled_name, start_ns, end_ns, api_start_ns, api_end_ns FROM kernels")}
    assert_eq(sorted(k), sorted(["on_blocking_a", "on_nonblocking", "on_legacy", "on_blocking_b",
                                 "on_nonblocking_2"]))
    # the legacy stream's kernel starts the moment the blocking stream's ends,
    # not waiting for the non-blocking stream's (which runs 40 ms longer)
    assert_eq(k["on_legacy"][0], k["on_blocking_a"][1], "legacy kernel's start")
    assert k["on_legacy"][0] < k["on_nonblocking"][1]
    # a blocking stream's later work waits for the legacy stream's
    assert_eq(k["on_blocking_b"][0], k["on_legacy"][1], "blocking stream b's start")
    # a second non-blocking stream waits for nobody: it runs as it is launched
    assert k["on_nonblocking_2"][0] <= k["on_nonblocking_2"][3], k["on_nonblocking_2"]
    assert k["on_nonblocking_2"][1] < k["on_legacy"][0]
    # the non-blocking stream started with its launch, beside stream a
    assert k["on_nonblocking"][0] <= k["on_nonblocking"][3]
    assert k["on_nonblocking"][0] < k["on_blocking_a"][1]


def test_a_full_launch_queue_blocks_the_launch_until_its_oldest_work_ends():
    depth, count = 4, 10
    run = run_traced([prog("sim_sync"), "queue", str(count)],
                     env={"FAKECUDA_KERNEL_NS": "20000000", "FAKECUDA_QUEUE_DEPTH": str(depth)})
    assert run.proc.returncode == 0, run.proc.stderr
    ks = run.q("SELECT start_ns, end_ns, api_start_ns, api_end_ns FROM kernels ORDER BY api_start_ns")
    assert_eq(len(ks), count)
    for i, (start, end, api_start, api_end) in enumerate(ks):
        assert_eq(end - start, 20000000, "kernel %d duration" % i)
        if i < depth:
            # room in the queue: returns at once, long before the first kernel ends
            assert api_end < ks[0][1], (i, api_end, ks[0][1])
        else:
            # full: returns once the kernel `depth` launches back has ended, and
            # (the queue having room again) before the next one ends
            assert api_end >= ks[i - depth][1], (i, api_end, ks[i - depth][1])
            assert api_end < ks[i - depth + 1][1], (i, api_end, ks[i - depth + 1][1])
        if i:
            assert_eq(start, ks[i - 1][1], "kernel %d starts when the one before ends" % i)


def test_an_unlimited_queue_never_blocks_a_launch():
    run = run_traced([prog("sim_sync"), "queue", "10"],
                     env={"FAKECUDA_KERNEL_NS": "20000000", "FAKECUDA_QUEUE_DEPTH": "0"})
    assert run.proc.returncode == 0, run.proc.stderr
    ks = run.q("SELECT end_ns, api_end_ns FROM kernels ORDER BY api_start_ns")
    assert_eq(len(ks), 10)
    assert max(api_end for _, api_end in ks) < ks[0][0]


def test_launch_latency_delays_the_start_of_work_on_an_idle_gpu():
    latency = 3000000
    run = run_traced([prog("sim_sync"), "latency"],
                     env={"FAKECUDA_KERNEL_NS": "1000000", "FAKECUDA_LAUNCH_LATENCY_NS": str(latency)})
    assert run.proc.returncode == 0, run.proc.stderr
    (start, end, api_start, api_end), = run.q("SELECT start_ns, end_ns, api_start_ns, api_end_ns FROM kernels")
    assert_eq(end - start, 1000000)
    # submitted during the call, it starts exactly `latency` after submission
    assert api_start + latency <= start <= api_end + latency, (api_start, api_end, start)


# ---- functions real programs call (sim_api, two simulated devices) ----

API_ENV = {"FAKECUDA_DEVICES": "2",
           "FAKECUDA_KERNEL_NS": "1000,slow_kernel=30000000,on_device_0=20000000,on_device_1=20000000"}

# What NVIDIA's documentation says each returns: error codes are
# cudaError_t's (1 cudaErrorInvalidValue, 98 cudaErrorInvalidDeviceFunction,
# 101 cudaErrorInvalidDevice, 600 cudaErrorNotReady, 704/705 peer access
# already / not enabled, 801 cudaErrorNotSupported); occupancy is an H100's
# (2,048 threads, 32 blocks, 64 Ki registers and 228 KiB shared memory a
# multiprocessor, 1 KiB of it reserved a block, 132 multiprocessors) for a
# kernel of 32 registers a thread, as NVIDIA's occupancy calculator gives it.
API_EXPECTED = {
    "get_flags_rc": 0, "flags_initial": 0, "set_flags_rc": 0,
    "flags_after": 0x04 | 0x08,  # cudaDeviceScheduleBlockingSync | cudaDeviceMapHost
    "set_flags_two_schedules_rc": 1, "set_flags_unknown_rc": 1,
    "attr_can_map_host_memory": 1, "prop_can_map_host_memory": 1,
    "host_alloc_mapped_rc": 0, "host_get_device_pointer_rc": 0, "device_pointer_is_host_pointer": 1,
    "host_get_device_pointer_flags_rc": 1, "host_get_device_pointer_pageable_rc": 1,
    "host_alloc_bad_flags_rc": 1, "zero_copy_bytes_ok": 1,
    # cudaMemoryTypeHost 1, Device 2, Managed 3; unregistered memory is type 0
    # on device -2 (cudaInvalidDeviceId), and no error
    "ptr_type_mapped": 1, "ptr_mapped_device_pointer_ok": 1, "ptr_type_device": 2, "ptr_device_device": 0,
    "ptr_type_pageable_rc": 0, "ptr_type_pageable": 0, "ptr_device_pageable": -2, "ptr_type_managed": 3,
    "device_count": 2, "can_access_peer_0_1": 1, "can_access_peer_0_0": 0, "can_access_peer_bad_device_rc": 101,
    "enable_peer_rc": 0, "enable_peer_again_rc": 704, "enable_peer_self_rc": 101, "disable_peer_rc": 0,
    "disable_peer_again_rc": 705, "memcpy_peer_rc": 0, "peer_bytes_ok": 1,
    "add_callback_rc": 0, "add_callback_flags_rc": 1,
    "stream_query_busy_rc": 600, "event_query_busy_rc": 600, "event_query_unrecorded_rc": 0,
    "last_error_after_queries": 0,  # cudaErrorNotReady is no error to remember
    "stream_query_done_rc": 0, "event_query_done_rc": 0, "callback_status": 0, "callback_stream_and_data_ok": 1,
    "priority_least": 0, "priority_greatest": -5, "priority_minus3": -3, "priority_minus10_clamped": -5,
    "priority_3_clamped": 0, "priority_default_stream": 0, "stream_flags_nonblocking": 1, "stream_device": 0,
    "occupancy_256": 8, "occupancy_1024": 2, "occupancy_96": 21, "occupancy_128_smem_100000": 2,
    "occupancy_bad_function_rc": 98,
    "potential_block": 1024, "potential_min_grid": 2 * 132,
    "potential_block_smem_150000": 1024, "potential_min_grid_smem_150000": 132,
    "potential_block_limit_200": 128, "potential_min_grid_limit_200": 16 * 132,
    "export_table_rc": 801, "export_table_null": 1,  # CUDA_ERROR_NOT_SUPPORTED
    "unimplemented_rc": 801, "unimplemented_last_error": 801, "driver_unimplemented_rc": 801,
}


def test_runtime_functions_answer_as_documented():
    run = run_traced([prog("sim_api")], env=API_ENV)
    assert run.proc.returncode == 0, run.proc.stderr
    got = dict(line.split() for line in run.proc.stdout.splitlines())
    got = {k: int(v) for k, v in got.items()}
    cb_time = got.pop("callback_time")
    assert_eq(got, API_EXPECTED)
    # the callback ran once the stream's kernel had ended on the GPU
    (end,), = run.q("SELECT end_ns FROM kernels WHERE mangled_name = 'slow_kernel'")
    assert cb_time >= end, (cb_time, end)
    # the peer copy is one, device to device across devices
    assert_eq(run.q("SELECT kind, bytes FROM memcpys m JOIN api_calls c ON c.id = m.api_call_id "
                    "WHERE c.name = 'cudaMemcpyPeer'"), [("PtoP", 1 << 16)])
    # each device has its own default stream: the two kernels overlap
    k = dict((n, (d, s, e)) for n, d, s, e in run.q(
        "SELECT mangled_name, device, start_ns, end_ns FROM kernels WHERE mangled_name LIKE 'on_device_%'"))
    assert_eq((k["on_device_0"][0], k["on_device_1"][0]), (0, 1), "devices")
    assert k["on_device_1"][1] < k["on_device_0"][2], k


def test_every_function_in_the_headers_is_exported():
    """A program built against the toolkit's headers finds every function
    of cuda_runtime_api.h in the simulated runtime and every one of cuda.h
    in the simulated driver: fr_stubs.def and fk_stubs.def list them all
    (they are what gen_stubs.py makes of the headers now), and each library
    exports each."""
    import os
    import subprocess
    from gtlib import FAKECUDA, ROOT
    fake = os.path.join(ROOT, "tests", "fakecuda")
    gen = os.path.join(fake, "runtime", "gen_stubs.py")
    for kind, listing, lib, minimum in (("runtime", "runtime/fr_stubs.def", "libcudart.so.13", 300),
                                        ("driver", "driver/fk_stubs.def", "libcuda.so.1", 400)):
        now = subprocess.run(["python3", gen, kind], capture_output=True, text=True, check=True).stdout
        with open(os.path.join(fake, listing)) as f:
            assert_eq(f.read(), now, "%s is up to date with the header" % listing)
        names = [line[line.index("(") + 1:-1] for line in now.splitlines() if line.endswith(")")
                 and not line.startswith("/*")]
        assert len(names) > minimum, (kind, len(names))
        nm = subprocess.run(["nm", "-D", "--defined-only", os.path.join(FAKECUDA, lib)],
                            capture_output=True, text=True, check=True).stdout
        exported = {line.split()[-1].split("@")[0] for line in nm.splitlines()}
        assert_eq(sorted(set(names) - exported), [], "%s functions not exported" % kind)


# ---- device-side errors ----

FAIL_NS = "5000000,bad_kernel=10000000"
AFTER_FAILURE = ["malloc_after", "last_error_again", "launch_after", "memcpy_after", "sync_after"]


def _failing_run(mode, how, code):
    env = {"FAKECUDA_KERNEL_NS": FAIL_NS, "FAKECUDA_KERNEL_FAIL": "bad_kernel" + how}
    run = run_traced([prog("sim_fail"), mode], env=env)
    assert run.proc.returncode == 0, run.proc.stderr
    got = [tuple(line.split()) for line in run.proc.stdout.splitlines()]
    want = ([("launch_fine", "0"), ("launch_bad", "0"), ("launch_after_bad", "0"),
             ("first_sync", str(code)), ("last_error", str(code))] +
            [(name, str(code)) for name in AFTER_FAILURE] +
            [("reset", "0"), ("malloc_after_reset", "0"), ("launch_after_reset", "0"), ("sync_after_reset", "0"),
             ("last_error_after_reset", "0")])
    assert_eq(got, want, "calls' results")
    return run


def test_a_failing_kernel_fails_the_next_sync_and_every_call_after_it():
    """A device-side assert: the launch succeeds; the sync that waits past
    the kernel's end returns cudaErrorAssert (710) as soon as it fails,
    without waiting for the work queued behind it; the error is sticky until
    cudaDeviceReset."""
    run = _failing_run("sync", "", 710)
    ks = run.q("SELECT mangled_name, start_ns, end_ns FROM kernels ORDER BY start_ns LIMIT 3")
    assert_eq([k[0] for k in ks], ["fine_kernel", "bad_kernel", "fine_kernel"])
    (sync_end, err), = run.q("SELECT end_ns, error FROM api_calls WHERE name = 'cudaDeviceSynchronize' "
                             "ORDER BY start_ns LIMIT 1")
    assert_eq(err, "cudaErrorAssert", "the sync's error in the trace")
    assert ks[1][2] <= sync_end < ks[2][2], (ks, sync_end)


def test_a_launch_failure_surfaces_at_the_next_blocking_copy():
    run = _failing_run("copy", "=launch", 719)  # cudaErrorLaunchFailure
    assert_eq(run.q("SELECT error FROM api_calls WHERE name = 'cudaMemcpy' ORDER BY start_ns LIMIT 1"),
              [("cudaErrorLaunchFailure",)])


# ---- CUDA Graphs built node by node ----

GRAPH_ENV = {"FAKECUDA_PINNED_BW": "0.5", "FAKECUDA_DTOD_BW": "1", "FAKECUDA_COPY_LATENCY_NS": "0",
             "FAKECUDA_KERNEL_NS": "1000,graph_k1=300000,graph_k2=200000,graph_k1b=100000,drv_g1=50000,drv_g2=70000"}
GRAPH_EXPECTED = {
    "create_rc": 0, "add_memset_rc": 0, "add_memcpy_rc": 0, "add_kernel_rc": 0, "add_kernel2_rc": 0,
    "add_host_rc": 0, "add_empty_rc": 0, "add_memcpy2_rc": 0,
    "add_duplicate_dependency_rc": 1,  # cudaErrorInvalidValue
    "nodes": 7,
    "types": "2100351",  # cudaGraphNodeType: memset 2, memcpy 1, kernel 0, kernel 0, host 3, empty 5, memcpy 1
    "clone_rc": 0, "clone_nodes": 7, "instantiate_rc": 0, "upload_rc": 0, "launch1_rc": 0, "launch2_rc": 0,
    "sync_rc": 0, "host_calls": 2, "bytes_ok": 1, "set_params_rc": 0, "update_rc": 0, "update_result": 0,
    "launch3_rc": 0,
    "update_other_shape_rc": 910,  # cudaErrorGraphExecUpdateFailure
    "update_other_shape_result": 2,  # cudaGraphExecUpdateErrorTopologyChanged
    "cu_create_rc": 0, "cu_add_rc": 0, "cu_add2_rc": 0, "cu_instantiate_rc": 0, "cu_launch_rc": 0, "cu_sync_rc": 0,
}


def test_graph_built_node_by_node_runs_each_node_after_its_dependencies():
    import os
    from gtlib import tmpdir
    log = os.path.join(tmpdir(), "fakecuda.log")
    run = run_traced([prog("sim_graph")], env=dict(GRAPH_ENV, FAKECUDA_LOG=log))
    assert run.proc.returncode == 0, run.proc.stderr
    got = dict(line.split() for line in run.proc.stdout.splitlines())
    assert_eq(got, {k: str(v) for k, v in GRAPH_EXPECTED.items()})
    mib = 1 << 20
    memset_ns, copy_ns = mib, 2 * mib  # 1 MiB at 1 and 0.5 bytes/ns
    ks = run.q("SELECT api_call_id, mangled_name, start_ns, end_ns FROM kernels WHERE via = 'graph' "
               "ORDER BY start_ns")
    cs = run.q("SELECT api_call_id, kind, start_ns, end_ns FROM memcpys WHERE via = 'graph' ORDER BY start_ns")
    ms = run.q("SELECT api_call_id, start_ns, end_ns FROM memsets WHERE via = 'graph' ORDER BY start_ns")
    launches = [r[0] for r in run.q("SELECT id FROM api_calls WHERE name = 'cudaGraphLaunch' ORDER BY start_ns")]
    assert_eq(len(launches), 3)
    for i, launch in enumerate(launches):
        k = {n: (s, e) for c, n, s, e in ks if c == launch}
        c = {kind: (s, e) for cid, kind, s, e in cs if cid == launch}
        (m,) = [(s, e) for cid, s, e in ms if cid == launch]
        k1 = k["graph_k1b" if i == 2 else "graph_k1"]
        assert_eq(sorted(c), ["DtoH", "HtoD"], "replay %d copies" % i)
        assert_eq((m[1] - m[0], c["HtoD"][1] - c["HtoD"][0]), (memset_ns, copy_ns), "replay %d durations" % i)
        # the two roots start together; each kernel starts when its last dependency ends
        assert_eq(m[0], c["HtoD"][0], "replay %d roots" % i)
        assert_eq(k["graph_k2"][0], m[1], "replay %d K2 after the memset" % i)
        assert_eq(k1[0], c["HtoD"][1], "replay %d K1 after the copy" % i)
        assert k["graph_k2"][0] < k1[1], "replay %d: the two branches overlap" % i
        # the last copy after the host and empty nodes, after both kernels
        assert_eq(c["DtoH"][0], max(k1[1], k["graph_k2"][1]), "replay %d last copy" % i)
    # the driver's graph: one launch, its two kernels in a chain
    (g1_end,), = run.q("SELECT end_ns FROM kernels WHERE mangled_name = 'drv_g1' AND via = 'graph'")
    (g2_start,), = run.q("SELECT start_ns FROM kernels WHERE mangled_name = 'drv_g2' AND via = 'graph'")
    assert_eq(g2_start, g1_end, "drv_g2 after drv_g1")
    # CUPTI's graph ids: each replay's records carry the graph's id and one
    # node id per node, the same in every replay of it
    with open(log) as f:
        recs = [line.split() for line in f]
    by_corr = {}
    for kind, name, stream, start, end, nbytes, corr, graph_id, node_id in (r[:9] for r in recs):
        if kind != "sync" and graph_id != "0":
            by_corr.setdefault(corr, []).append((graph_id, node_id, kind, name))
    replays = sorted(by_corr.values(), key=len, reverse=True)
    assert_eq([len(r) for r in replays], [5, 5, 5, 2], "records per replay (host and empty nodes have none)")
    ids = [sorted((n, kind) for _, n, kind, _ in r) for r in replays[:3]]
    assert ids[0] == ids[1] == ids[2], ids
    assert_eq(len({n for n, _ in ids[0]}), 5, "distinct node ids")
    assert_eq(len({g for r in replays[:3] for g, _, _, _ in r}), 1, "one graph id")
    assert replays[3][0][0] != replays[0][0][0], "the driver's graph has its own id"


def test_nvcc_built_program_reaches_occupancy_mapped_memory_and_callbacks():
    """The header's cudaOccupancyMaxPotentialBlockSize template, over the
    simulated runtime, gives the simulated driver's own answer (1,024
    threads, 2 blocks on each of 132 multiprocessors); a <<<>>> launch
    writing mapped memory and a stream callback run, traced."""
    run = run_traced([prog("sim_nvcc")])
    assert run.proc.returncode == 0, run.proc.stderr
    got = dict(line.split() for line in run.proc.stdout.splitlines())
    assert_eq(got, {"potential_rc": "0", "potential_block": "1024", "potential_min_grid": str(2 * 132),
                    "occupancy_256": "8", "host_alloc_rc": "0", "device_pointer_rc": "0", "launch_rc": "0",
                    "callback_rc": "0", "sync_rc": "0", "callback_status": "0"})
    assert_eq(run.q("SELECT name, time_source FROM kernels"), [("occ_kernel(float*)", "gpu")])



def test_a_module_holds_the_kernels_its_image_names():
    """cuModuleLoadData reads PTX's entries: cuModuleGetFunction finds the
    two kernels, not a device function or a name the image lacks
    (CUDA_ERROR_NOT_FOUND); bytes that are no image are refused
    (CUDA_ERROR_INVALID_IMAGE); the kernel found runs under its name."""
    run = run_traced([prog("sim_module")])
    assert run.proc.returncode == 0, run.proc.stderr
    assert_eq(run.proc.stdout, "sim_module: load 0 alpha 0 beta_kernel 0 helper 500 gamma 500 junk 200 launch 0 "
                               "sync 0 unload 0\n")
    assert_eq(run.q("SELECT name, grid_x, block_x, time_source FROM kernels"), [("alpha", 4, 64, "gpu")])

# ---- collectives across the ranks of a simulated job ----

import gtlib  # noqa: E402
import ranklib  # noqa: E402


def _check_barrier(outdir, ranks, nsteps, exact_from=0):
    """Every rank's collective k ends at the latest start of collective k
    over the ranks that reached it, plus its own data time (from
    collective exact_from on; before it, a rank missing from `ranks` may
    have arrived later: no earlier than that)."""
    colls = {r: ranklib.collectives(ranklib.trace(outdir, r)) for r in ranks}
    for k in range(nsteps):
        present = [colls[r][k] for r in ranks if len(colls[r]) > k]
        latest = max(s for s, _ in present)
        for r in ranks:
            if len(colls[r]) > k:
                what = "rank %d collective %d end" % (r, k)
                if k >= exact_from:
                    assert_eq(colls[r][k][1], latest + ranklib.DATA_NS, what)
                else:
                    assert colls[r][k][1] >= latest + ranklib.DATA_NS, what
    return colls


def test_a_collective_ends_when_every_rank_has_arrived():
    outdir, res = ranklib.run_job(3, 4, stall=(1, 2, 150))
    for r, rc, out, err in res:
        assert rc == 0, err
        assert_eq(out, "rank_work: rank %d done\n" % r)
    colls = _check_barrier(outdir, [0, 1, 2], 4)
    # the stalled rank arrived last at collective 2, the others waited ~150 ms for it
    for r in (0, 2):
        wait = colls[1][2][0] - colls[r][2][0]
        assert 140e6 <= wait <= 200e6, (r, wait)
        assert_eq(colls[r][2][1] - colls[r][2][0], wait + ranklib.DATA_NS, "rank %d waited in its kernel" % r)


def test_a_dead_rank_is_not_waited_for_and_a_missing_one_only_until_the_timeout():
    # rank 1 aborts at step 2: the others finish without waiting for it
    outdir, res = ranklib.run_job(3, 4, crash=(1, 2))
    rcs = {r: rc for r, rc, _, _ in res}
    assert rcs[1] != 0 and rcs[0] == 0 and rcs[2] == 0, res
    # rank 1's arrivals at collectives 0 and 1 may not have reached its trace
    colls = _check_barrier(outdir, [0, 2], 4, exact_from=2)
    assert_eq([len(colls[r]) for r in (0, 2)], [4, 4], "collectives of ranks 0 and 2")
    # a world of 3 where rank 2 never starts: each rank waits the timeout once, then says so
    outdir, res = ranklib.run_job(3, 3, ranks=[0, 1], meet=False,
                                  env={"FAKECUDA_COLLECTIVE_TIMEOUT_MS": "300"})
    for r, rc, out, err in res:
        assert rc == 0, err
        assert "rank 2 did not arrive in 300 ms" in err, err
    _check_barrier(outdir, [0, 1], 3)
    for r in (0, 1):
        # the host waited the timeout in the first sync after collective 0, not again after it
        # (a later sync may wait for the other rank, which started later and timed out later)
        syncs = gtlib.query(ranklib.trace(outdir, r), "SELECT end_ns - start_ns FROM api_calls "
                            "WHERE name = 'cudaStreamSynchronize' ORDER BY start_ns")
        assert_eq(len(syncs), 3, "syncs of rank %d" % r)
        assert syncs[0][0] >= 300e6, syncs
        assert sum(d for (d,) in syncs[1:]) < 300e6, syncs


def test_every_function_the_runtime_header_declares_is_exported():
    """Whatever it returns (cudaCreateChannelDesc returns a struct, the
    error-name functions a string): every function cuda_runtime_api.h
    declares, with and without the per-thread default stream, is a symbol
    of the simulated libcudart, so NVIDIA's samples link and load."""
    import os
    import re
    import subprocess
    from gtlib import FAKECUDA
    declared = set()
    for extra in ([], ["-DCUDA_API_PER_THREAD_DEFAULT_STREAM"]):
        src = subprocess.run(["gcc", "-E", "-P", "-x", "c", "-I/usr/local/cuda/include"] + extra + ["-"],
                             input="#include <cuda_runtime_api.h>\n", capture_output=True, text=True,
                             check=True).stdout
        declared |= set(re.findall(r"\bextern\s[^;{}()]*?\b(cuda[A-Za-z0-9_]+)\s*\(", src))
    assert len(declared) > 300 and "cudaCreateChannelDesc" in declared, len(declared)
    nm = subprocess.run(["nm", "-D", "--defined-only", os.path.join(FAKECUDA, "libcudart.so.13")],
                        capture_output=True, text=True, check=True).stdout
    exported = {line.split()[-1].split("@")[0] for line in nm.splitlines()}
    assert_eq(sorted(declared - exported), [], "declared by cuda_runtime_api.h, not exported")


MEMPOOL_EXPECTED = dict(
    channel_bits=32, malloc_array=0, to_array=0, from_array=0, array_bytes_equal=1, texture=0, texture_desc=0,
    texture_desc_kept=1, surface=0, destroy=0, pool_create=0, pool_set=0, pool_get=0, pool_threshold_kept=1,
    pool_set_device=0, pool_get_device=0, pool_is_device=1, from_pool=0, malloc_async=0, memsets=0, frees=0,
    pool_sync=0, capture_begin=0, capture_malloc=0, capture_memset=0, capture_kernel=0, capture_copy=0,
    capture_free=0, capture_end=0, capture_nodes=5, capture_instantiate=0, capture_launch_1=0,
    capture_bytes_1=4096, capture_launch_2=0, capture_bytes_2=4096, build_create=0, build_alloc_node=0,
    build_alloc_address=1, build_memset_node=0, build_free_node=0, build_params=0, build_params_kept=1,
    build_launch=0)


def test_stream_ordered_allocation_textures_and_graph_memory_nodes():
    """Issue 31: what NVIDIA's samples call runs, as NVIDIA's documentation
    says it behaves: channel descriptors, arrays and texture objects; memory
    pools; cudaMallocAsync captured into a graph (an allocation node whose
    address the graph's launches keep); graph memory nodes added by hand.
    Traced, each node is a row of graph_nodes made by the call that made it."""
    run = run_traced([prog("sim_mempool")])
    assert run.proc.returncode == 0, run.proc.stderr
    got = dict(line.split() for line in run.proc.stdout.splitlines())
    assert_eq(got, {k: str(v) for k, v in MEMPOOL_EXPECTED.items()})
    nodes = run.q("SELECT kind, api, (SELECT substr(f.function, 1, instr(f.function || '(', '(') - 1) "
                  "FROM stack_frames f WHERE f.stack_id = n.stack_id AND f.depth = 0) FROM graph_nodes n "
                  "ORDER BY node_id")
    assert_eq(nodes, [("mem_alloc", "cudaMallocAsync", "capture_pool"), ("memset", "cudaMemsetAsync", "capture_pool"),
                      ("kernel", "cudaLaunchKernel", "capture_pool"), ("memcpy", "cudaMemcpyAsync", "capture_pool"),
                      ("mem_free", "cudaFreeAsync", "capture_pool"),
                      ("mem_alloc", "cudaGraphAddMemAllocNode", "build_mem_nodes"),
                      ("memset", "cudaGraphAddMemsetNode", "build_mem_nodes"),
                      ("mem_free", "cudaGraphAddMemFreeNode", "build_mem_nodes")])
    # the captured allocation and free are calls a capture took
    assert_eq(run.q("SELECT name, captured FROM api_calls WHERE name IN ('cudaMallocAsync', 'cudaFreeAsync') "
                    "ORDER BY start_ns"),
              [("cudaMallocAsync", 0), ("cudaFreeAsync", 0), ("cudaFreeAsync", 0), ("cudaMallocAsync", 1),
               ("cudaFreeAsync", 1)])


def test_the_driver_hands_out_its_own_functions_under_a_preload():
    """NVIDIA's libcuda.so.1 is linked -Bsymbolic (DT_SYMBOLIC; an H100's
    driver 580 checked with this probe, docs/validation.md): with a library
    preloaded that defines cuLaunchKernel and the rest, cuGetProcAddress
    still hands out the driver's own. So does the simulated driver; before
    it did, it handed out the preloaded tracer's wrappers, and a runtime's
    calls into the driver were hooked where, on a real GPU, they are not."""
    lib = os.path.join(os.path.dirname(prog("procaddr_probe")), "libcu_interposer.so")
    r = subprocess.run([prog("procaddr_probe")], env=base_env({"LD_PRELOAD": lib}), capture_output=True,
                       text=True, timeout=60)
    assert_eq(r.returncode, 0, r.stderr)
    assert_eq(r.stdout, "cuLaunchKernel own\ncuMemAlloc own\ncuCtxSynchronize own\n")

"""Capture pipeline: real programs on the simulated GPU, traced, checked
against the work they are known to do."""
import os
import stat
import subprocess

import gtlib
import tempfile

from gtlib import (SHIM, assert_eq, tmpdir, base_env, prog, query, run_plain, run_traced, stack_functions)

MB = 1 << 20


def _kernels(run):
    return run.q("SELECT name, grid_x, grid_y, grid_z, block_x, block_y, block_z, shared_mem, stream "
                 "FROM kernels ORDER BY api_start_ns")


def _check_rt_basic(run, ptsz):
    p = run.proc
    assert p.returncode == 0, p.stderr
    assert_eq(p.stdout, "rt_basic: round trip ok\n", "program output")
    assert_eq(p.stderr, "", "tracer must not write to stderr")
    suffix = "_ptsz" if ptsz else ""
    ks = _kernels(run)
    assert_eq(len(ks), 4, "kernel count")
    step = [k for k in ks if k[0] == "step_kernel"]
    big = [k for k in ks if k[0] == "big_kernel"]
    assert_eq(len(step), 3, "step_kernel launches")
    assert_eq(len(big), 1, "big_kernel launches")
    for k in step:
        assert_eq(k[1:8], (4, 2, 1, 128, 1, 1, 256), "step_kernel config")
    assert_eq(big[0][1:8], (1, 1, 1, 32, 1, 1, 0), "big_kernel config")
    # a NULL stream: the legacy default stream (0), or the thread's own (2)
    assert_eq(big[0][8], 2 if ptsz else 0, "big_kernel stream")
    s = step[0][8]
    assert s not in (0, 1, 2), s
    assert_eq(run.q1("SELECT count(DISTINCT name) FROM api_calls WHERE category = 'launch'"), 1)
    assert_eq(run.q1("SELECT DISTINCT name FROM api_calls WHERE category = 'launch'"), "cudaLaunchKernel" + suffix)

    copies = run.q("SELECT kind, bytes, host_mem, async, stream FROM memcpys ORDER BY api_start_ns")
    sync_stream = 2 if ptsz else 0
    assert_eq(copies, [("HtoD", MB, "pageable", 0, sync_stream), ("HtoD", MB, "pinned", 1, s),
                       ("DtoH", MB, "pageable", 0, sync_stream), ("DtoD", 4096, "none", 0, sync_stream)],
              "copies")
    memsets = run.q("SELECT bytes, async, stream FROM memsets ORDER BY api_start_ns")
    assert_eq(memsets, [(65536, 0, sync_stream), (4096, 1, s)], "memsets")
    syncs = run.q("SELECT kind, stream FROM syncs ORDER BY api_call_id")
    assert_eq([k for k, _ in syncs], ["stream", "event", "device"], "sync kinds")
    assert_eq(syncs[0][1], s, "stream sync target")
    allocs = run.q("SELECT api, kind, bytes FROM allocations WHERE api LIKE 'cudaMalloc%' ORDER BY api_call_id")
    assert_eq(allocs, [("cudaMalloc", "device", MB), ("cudaMalloc", "device", MB), ("cudaMallocHost", "pinned", MB)])
    assert_eq(run.q1("SELECT count(*) FROM allocations WHERE api LIKE 'cudaFree%'"), 3)
    # every call succeeded and has a sane host interval
    assert_eq(run.q1("SELECT count(*) FROM api_calls WHERE result != 0 OR end_ns < start_ns"), 0)
    assert_eq(run.q1("SELECT value FROM meta WHERE key = 'complete'"), "1")
    assert_eq(run.q1("SELECT value FROM meta WHERE key = 'dropped_events'"), "0")
    assert_eq(run.q1("SELECT value FROM meta WHERE key = 'pid'"), str(run.q1("SELECT DISTINCT pid FROM api_calls")))


def test_runtime_program_counts_bytes_kinds():
    _check_rt_basic(run_traced([prog("rt_basic")]), ptsz=False)


def test_per_thread_default_stream_build():
    _check_rt_basic(run_traced([prog("rt_basic_ptsz")]), ptsz=True)


def test_calling_function_in_each_stack():
    run = run_traced([prog("rt_basic")])
    want = {
        "HtoD": "upload_batch",
        "DtoH": "download",
        "DtoD": "download",
    }
    for kind, fn in want.items():
        for (sid,) in run.q("SELECT c.stack_id FROM memcpys m JOIN api_calls c ON c.id = m.api_call_id "
                            "WHERE m.kind = ?", kind):
            assert_eq(stack_functions(run.trace, sid)[0], fn, "caller of %s copy" % kind)
    for name, fn in (("step_kernel", "launch_steps"), ("big_kernel", "launch_big")):
        for (sid,) in run.q("SELECT c.stack_id FROM kernels k JOIN api_calls c ON c.id = k.api_call_id "
                            "WHERE k.name = ?", name):
            frames = stack_functions(run.trace, sid)
            assert_eq(frames[0], fn, "caller of %s" % name)
            assert_eq(frames[1], "main", "next frame for %s" % name)
    for (sid,) in run.q("SELECT c.stack_id FROM syncs s JOIN api_calls c ON c.id = s.api_call_id"):
        assert_eq(stack_functions(run.trace, sid)[0], "wait_all", "caller of sync")
    # the three launches from one site share one stack, stored once
    assert_eq(run.q1("SELECT count(DISTINCT c.stack_id) FROM kernels k JOIN api_calls c ON c.id = k.api_call_id "
                     "WHERE k.name = 'step_kernel'"), 1)
    # no frame of the tracer itself
    assert_eq(run.q1("SELECT count(*) FROM stack_frames WHERE module LIKE '%libgputrace%'"), 0)
    # the module of the innermost frame is the program, with an offset inside it
    # (a call's stack: every thread is sampled too, a sanitizer's own among them)
    mod, off = run.q("SELECT f.module, f.offset FROM stack_frames f JOIN api_calls c ON c.stack_id = f.stack_id "
                     "WHERE f.depth = 0 LIMIT 1")[0]
    assert mod.endswith("/rt_basic"), mod
    assert 0 < off < os.path.getsize(prog("rt_basic")), off


def test_frame_offsets_name_the_calling_line():
    """Version 5: a frame's offset is its call instruction's (the return
    address less one), so addr2line on it names the line that made the
    call, while ip stays the return address."""
    run = run_traced([prog("rt_basic")])
    with open(os.path.join(gtlib.ROOT, "tests", "progs", "rt_basic.c")) as f:
        source = f.read().splitlines()
    sid = run.q1("SELECT c.stack_id FROM kernels k JOIN api_calls c ON c.id = k.api_call_id "
                 "WHERE k.name = 'big_kernel'")
    frames = run.q("SELECT depth, module, offset, function, ip FROM stack_frames WHERE stack_id = ? AND depth < 2 "
                   "ORDER BY depth", sid)
    assert_eq([f[3] for f in frames], ["launch_big", "main"])
    for depth, module, offset, function, ip in frames:
        out = subprocess.run(["addr2line", "-f", "-e", module, "0x%x" % offset], capture_output=True, text=True)
        fn, where = out.stdout.splitlines()[:2]
        assert_eq(fn, function, "addr2line at depth %d" % depth)
        line = int(where.split(":")[1].split()[0])
        want = "cudaLaunchKernel(" if depth == 0 else "launch_big("
        assert want in source[line - 1], (depth, where, source[line - 1])
        # the same frame's ip is the return address, one past the offset's byte
        assert_eq(run.q1("SELECT count(*) FROM frames WHERE ip = ? AND offset = ?", ip, offset), 1)
    # ip - offset is the module's load base, the same for every frame of a module
    bases = run.q("SELECT DISTINCT ip - 1 - offset FROM stack_frames WHERE module = ?", frames[0][1])
    assert_eq(len(bases), 1, bases)


def test_result_names_and_api_libs():
    """NVIDIA's names for results, from the toolkit's headers, in every
    trace; and which enum each hooked entry point's result is."""
    run = run_traced([prog("rt_basic")])
    names = dict(((lib, code), name) for lib, code, name in run.q("SELECT lib, code, name FROM result_names"))
    assert_eq(names[("runtime", 1)], "cudaErrorInvalidValue")
    assert_eq(names[("driver", 1)], "CUDA_ERROR_INVALID_VALUE")
    assert_eq(names[("runtime", 0)], "cudaSuccess")
    assert_eq(names[("driver", 0)], "CUDA_SUCCESS")
    assert_eq(names[("runtime", 2)], "cudaErrorMemoryAllocation")
    assert_eq(names[("driver", 2)], "CUDA_ERROR_OUT_OF_MEMORY")
    assert len(names) > 150, len(names)
    assert_eq(run.q("SELECT name, lib FROM api_names WHERE name IN ('cudaLaunchKernel', 'cuLaunchKernel', "
                    "'cudaMemcpy', 'cuMemcpyHtoD_v2', 'cudaGraphLaunch', 'cuGraphLaunch') ORDER BY name"),
              [("cuGraphLaunch", "driver"), ("cuLaunchKernel", "driver"), ("cuMemcpyHtoD_v2", "driver"),
               ("cudaGraphLaunch", "runtime"), ("cudaLaunchKernel", "runtime"), ("cudaMemcpy", "runtime")])
    assert_eq(run.q1("SELECT count(*) FROM api_names WHERE lib NOT IN ('runtime', 'driver', 'cupti')"), 0)
    # cupti: the program's own calls to CUPTI's Activity API (docs/coverage.md), never recorded
    assert_eq(run.q1("SELECT count(*) FROM api_names WHERE (lib = 'cupti') != (name LIKE 'cupti%')"), 0)
    assert_eq(run.q1("SELECT count(*) FROM api_names WHERE lib = 'cupti' AND category != 'none'"), 0)
    # every call succeeded: no error names
    assert_eq(run.q1("SELECT count(*) FROM api_calls WHERE error IS NOT NULL"), 0)


def test_stack_depth_setting():
    run = run_traced([prog("rt_basic")], env={"GPUTRACE_STACK_DEPTH": "0"})
    assert_eq(run.proc.returncode, 0)
    assert_eq(run.q1("SELECT count(*) FROM api_calls WHERE stack_id IS NOT NULL"), 0)
    assert_eq(run.q1("SELECT count(*) FROM stack_frames"), 0)
    run = run_traced([prog("rt_basic")], env={"GPUTRACE_STACK_DEPTH": "2"})
    assert_eq(run.q1("SELECT max(depth) FROM stack_frames"), 1)
    assert_eq(run.q1("SELECT value FROM meta WHERE key = 'stack_depth'"), "2")


def test_driver_api_program_and_proc_address():
    for name, pt in (("drv_basic", False), ("drv_basic_ptds", True)):
        run = run_traced([prog(name)])
        assert run.proc.returncode == 0, run.proc.stderr
        assert_eq(run.proc.stdout, "drv_basic: ok\n")
        ks = _kernels(run)
        assert_eq(len(ks), 6, "launches incl. the one through cuGetProcAddress")
        assert all(k[0] == "drv_kernel" and k[1:8] == (8, 1, 1, 256, 1, 1, 0) for k in ks), ks
        names = [r[0] for r in run.q("SELECT name FROM api_calls WHERE category = 'launch' ORDER BY id")]
        assert_eq(names[:5], ["cuLaunchKernel_ptsz" if pt else "cuLaunchKernel"] * 5)
        # the entry point fetched through cuGetProcAddress came back wrapped
        sid = run.q1("SELECT stack_id FROM api_calls WHERE category = 'launch' ORDER BY id DESC LIMIT 1")
        assert_eq(stack_functions(run.trace, sid)[0], "drv_launch_via_proc_address")
        copies = run.q("SELECT kind, bytes, host_mem, async FROM memcpys ORDER BY api_start_ns")
        assert_eq(copies, [("HtoD", 262144, "pageable", 0), ("DtoH", 262144, "pinned", 1)])
        assert_eq(run.q("SELECT bytes, async FROM memsets"), [(4096, 0)])
        assert_eq([r[0] for r in run.q("SELECT kind FROM syncs ORDER BY api_call_id")], ["stream", "context"])


def test_nvcc_built_program():
    run = run_traced([prog("vecadd")])
    assert run.proc.returncode == 0, run.proc.stderr
    assert_eq(run.proc.stdout, "vecadd: done ok\n")
    ks = run.q("SELECT name, mangled_name, grid_x, block_x FROM kernels ORDER BY api_start_ns")
    assert_eq([k[0] for k in ks], ["vec_add(float const*, float const*, float*, int)"] * 2 +
              ["ops::scale(float*, float, int)"])
    assert_eq(ks[0][1], "_Z7vec_addPKfS0_Pfi")
    assert_eq([(k[2], k[3]) for k in ks], [(4, 256), (4, 256), (2, 128)])
    assert_eq(run.q("SELECT kind, bytes FROM memcpys ORDER BY api_start_ns"),
              [("HtoD", 4096), ("HtoD", 4096), ("DtoH", 4096)])
    sid = run.q1("SELECT c.stack_id FROM kernels k JOIN api_calls c ON c.id = k.api_call_id LIMIT 1")
    assert "main" in stack_functions(run.trace, sid), stack_functions(run.trace, sid)


def test_threads_launching_at_once():
    run = run_traced([prog("threads"), "8", "2000"])
    assert run.proc.returncode == 0, run.proc.stderr
    assert_eq(run.proc.stdout, "threads: 16000 launches\n")
    assert_eq(run.q1("SELECT count(*) FROM kernels WHERE name = 'thread_kernel'"), 16000)
    assert_eq(run.q1("SELECT count(DISTINCT tid) FROM api_calls WHERE category = 'launch'"), 8)
    per = run.q("SELECT count(*) FROM api_calls WHERE category = 'launch' GROUP BY tid")
    assert_eq(sorted(set(r[0] for r in per)), [2000])
    assert_eq(run.q1("SELECT count(*) FROM memcpys WHERE bytes = 4096 AND kind = 'HtoD'"), 8)
    assert_eq(run.q1("SELECT value FROM meta WHERE key = 'dropped_events'"), "0")
    assert_eq(run.q1("SELECT count(DISTINCT tid) FROM api_calls"), 9)  # 8 workers and main
    # every thread named is one that called or was sampled (all are, by
    # default: the simulated driver's own threads too)
    assert_eq(run.q1("SELECT count(*) FROM threads t WHERE NOT EXISTS (SELECT 1 FROM api_calls c WHERE c.tid = t.tid) "
                     "AND NOT EXISTS (SELECT 1 FROM host_samples s WHERE s.tid = t.tid)"), 0)
    sid = run.q1("SELECT c.stack_id FROM kernels k JOIN api_calls c ON c.id = k.api_call_id LIMIT 1")
    assert_eq(stack_functions(run.trace, sid)[:2], ["worker_launches", "worker"])


def test_small_buffers_drop_and_count():
    # 64-event rings and one thread launching 20000 times: the writer cannot
    # keep up every time, drops are counted, nothing blocks, and what was
    # written plus what was dropped is everything.
    run = run_traced([prog("threads"), "1", "20000"], env={"GPUTRACE_BUFFER_EVENTS": "64"})
    assert run.proc.returncode == 0, run.proc.stderr
    written = run.q1("SELECT count(*) FROM api_calls")
    dropped = int(run.q1("SELECT value FROM meta WHERE key = 'dropped_events'"))
    # threads: per worker cudaStreamCreateWithFlags, cudaMalloc, launches, cudaMemcpy,
    # cudaStreamSynchronize, cudaFree, cudaStreamDestroy; main: cudaDeviceSynchronize
    assert_eq(written + dropped, 20000 + 6 + 1, "written + dropped")


def test_fork_child_without_cuda_gets_no_file():
    run = run_traced([prog("fork_child")])
    assert run.proc.returncode == 0, run.proc.stderr
    assert "parent: child exit 7" in run.proc.stdout, run.proc.stdout
    assert_eq(len(run.traces), 1, "one trace, the parent's")
    assert_eq(run.q1("SELECT count(*) FROM kernels WHERE name = 'fork_kernel'"), 2)
    child_pid = int(run.proc.stdout.split("child ")[1].split()[0])
    assert_eq(run.traces[0].endswith("trace-%d.db" % child_pid), False)


def test_process_without_cuda_gets_no_file():
    run = run_traced([prog("no_cuda")])
    assert_eq(run.proc.returncode, 4)
    assert_eq(run.proc.stdout, "no_cuda: done\n")
    assert_eq(run.traces, [], "no trace")
    assert_eq(os.listdir(run.outdir), [], "nothing at all")


def test_output_unchanged_by_tracing():
    plain = run_plain([prog("rt_basic")])
    traced = run_traced([prog("rt_basic")])
    assert_eq(traced.proc.stdout, plain.stdout)
    assert_eq(traced.proc.stderr, plain.stderr)
    assert_eq(traced.proc.returncode, plain.returncode)
    plain = run_plain([prog("no_cuda")])
    traced = run_traced([prog("no_cuda")])
    assert_eq((traced.proc.stdout, traced.proc.returncode), (plain.stdout, plain.returncode))


def test_host_times_follow_the_simulated_gpu():
    # a 30 ms kernel: the device sync after it blocks about that long; a
    # 16 MiB pageable "async" copy at 1 GB/s blocks ~16.8 ms; the pinned one,
    # at 0.1 GB/s, would take 168 ms on the GPU but returns without waiting
    # for it; each launch costs the 200 us the driver burns.
    env = {"FAKECUDA_KERNEL_NS": "1000,timed_kernel=30000000", "FAKECUDA_LAUNCH_NS": "200000",
           "FAKECUDA_PAGEABLE_BW": "1", "FAKECUDA_PINNED_BW": "0.1", "GPUTRACE_GPU_TIMING": "off"}
    run = run_traced([prog("timing"), str(16 * MB)], env=env)
    assert run.proc.returncode == 0, run.proc.stderr
    # Tolerance: never less than the simulated time; at most SLACK more,
    # which a loaded two-core machine can take away from any process.
    slack = 150_000_000
    launch = run.q1("SELECT end_ns - start_ns FROM api_calls WHERE category = 'launch'")
    assert 200000 <= launch < 200000 + slack, launch
    # the sync returns once the kernel has run, and the kernel began inside
    # the launch call: 30 ms after the launch's start at the earliest (a
    # bound on the sync's own length would assume the thread went straight
    # from the launch to the sync, which a loaded machine need not let it)
    (l_start, l_end), = run.q("SELECT start_ns, end_ns FROM api_calls WHERE category = 'launch'")
    first_sync_end = run.q("SELECT end_ns FROM syncs ORDER BY api_call_id")[0][0]
    assert 30000000 <= first_sync_end - l_start and first_sync_end - l_end < 30000000 + slack, \
        (first_sync_end - l_start, first_sync_end - l_end)
    copies = run.q("SELECT host_mem, async, end_ns - start_ns FROM memcpys ORDER BY api_start_ns")
    assert_eq([(c[0], c[1]) for c in copies], [("pageable", 1), ("pinned", 1)])
    expect = 16 * MB / 1  # ns at 1 byte/ns
    assert expect <= copies[0][2] < expect + slack, copies[0][2]
    # the host pays for moving the bytes, never for the 168 ms transfer
    pinned_gpu = 16 * MB / 0.1
    assert copies[1][2] < pinned_gpu / 2, copies[1][2]
    # while the final sync waits for it
    last_sync = run.q("SELECT end_ns - start_ns FROM syncs ORDER BY api_call_id")[-1][0]
    assert last_sync >= pinned_gpu / 2, last_sync


def test_output_pattern_expansion():
    d = tmpdir()
    run = run_traced([prog("rt_basic")], output=os.path.join(d, "r%r-%n-%p-%h.db"), env={"RANK": "3"}, outdir=d)
    assert run.proc.returncode == 0
    pid = int(run.q1("SELECT value FROM meta WHERE key = 'pid'"))
    host = run.q1("SELECT value FROM meta WHERE key = 'host'")
    assert_eq(os.path.basename(run.trace), "r3-rt_basic-%d-%s.db" % (pid, host))


def test_trace_file_mode_0600_and_single_file():
    run = run_traced([prog("rt_basic")])
    assert_eq(stat.S_IMODE(os.stat(run.trace).st_mode), 0o600)
    # the WAL was folded back in at exit: one file per process
    assert_eq(sorted(os.listdir(run.outdir)), [os.path.basename(run.trace)])


def test_bad_settings_warn_once_and_use_defaults():
    run = run_traced([prog("rt_basic")], env={"GPUTRACE_STACK_DEPTH": "lots", "GPUTRACE_BUFFER_EVENTS": "100"})
    assert_eq(run.proc.returncode, 0)
    assert_eq(run.proc.stdout, "rt_basic: round trip ok\n")
    lines = run.proc.stderr.splitlines()
    assert_eq(len(lines), 2, "one line per bad setting: %r" % lines)
    assert "GPUTRACE_STACK_DEPTH='lots'" in lines[0] and lines[0].startswith("gputrace: "), lines
    assert "GPUTRACE_BUFFER_EVENTS='100'" in lines[1], lines
    assert_eq(run.q1("SELECT value FROM meta WHERE key = 'stack_depth'"), "32")
    assert_eq(run.q1("SELECT count(*) FROM kernels"), 4)
    # an unknown %-sequence: warned, default name used
    d = tmpdir()
    cwd_run = subprocess.run([prog("rt_basic")], cwd=d, capture_output=True, text=True,
                             env=dict(base_env({"GPUTRACE_OUTPUT": "x-%z.db"}), LD_PRELOAD=SHIM))
    assert_eq(cwd_run.returncode, 0)
    assert_eq(len(cwd_run.stderr.splitlines()), 1, cwd_run.stderr)
    assert "%z" in cwd_run.stderr
    files = os.listdir(d)
    assert_eq(len(files), 1, files)
    assert files[0].startswith("gputrace-rt_basic-") and files[0].endswith(".db"), files


def test_unwritable_output_path():
    for path in ("/nonexistent-dir/sub/t.db", "/proc/t.db"):
        run = run_traced([prog("rt_basic")], output=path)
        assert_eq(run.proc.returncode, 0)
        assert_eq(run.proc.stdout, "rt_basic: round trip ok\n")
        lines = run.proc.stderr.splitlines()
        assert_eq(len(lines), 1, lines)
        assert lines[0].startswith("gputrace: ") and "not tracing" in lines[0], lines


def test_symlink_output_refused():
    d = tmpdir()
    victim = os.path.join(d, "victim.txt")
    with open(victim, "w") as f:
        f.write("precious\n")
    link = os.path.join(d, "t.db")
    os.symlink(victim, link)
    run = run_traced([prog("rt_basic")], output=link, outdir=d)
    assert_eq(run.proc.returncode, 0)
    assert "symbolic link" in run.proc.stderr, run.proc.stderr
    assert_eq(open(victim).read(), "precious\n")
    assert os.path.islink(link)


def test_existing_trace_is_replaced_when_asked():
    """An earlier run's trace at the name is kept, and the new one written
    beside it with one line (issue 31); GPUTRACE_FORCE_OVERWRITE=1 replaces
    it, a stale WAL of the same name left out."""
    d = tmpdir()
    out = os.path.join(d, "t.db")
    run_traced([prog("drv_basic")], output=out, outdir=d)
    run = run_traced([prog("rt_basic")], output=out, outdir=d)
    assert_eq(run.proc.returncode, 0)
    assert_eq(run.proc.stderr, "gputrace: %s exists; this process writes %s (GPUTRACE_FORCE_OVERWRITE=1 or "
                               "gputrace record --force replaces it)\n" % (out, os.path.join(d, "t.2.db")))
    assert_eq(query(out, "SELECT count(*) FROM kernels WHERE name = 'drv_kernel'")[0][0] > 0, True)
    assert_eq(query(os.path.join(d, "t.2.db"), "SELECT count(*) FROM kernels")[0][0], 4)
    # a stale WAL from a crashed run of the same name must not leak in
    with open(out + "-wal", "wb") as f:
        f.write(b"garbage" * 100)
    run = run_traced([prog("rt_basic")], env={"GPUTRACE_FORCE_OVERWRITE": "1"}, output=out, outdir=d)
    assert_eq((run.proc.returncode, run.proc.stderr), (0, ""))
    assert_eq(query(out, "SELECT count(*) FROM kernels")[0][0], 4)
    assert_eq(query(out, "SELECT count(*) FROM kernels WHERE name = 'drv_kernel'")[0][0], 0)


def test_schema_version_and_views():
    run = run_traced([prog("rt_basic")])
    assert_eq(run.q1("PRAGMA user_version"), 9)
    assert_eq(run.q1("SELECT value FROM meta WHERE key = 'schema_version'"), "9")
    views = set(r[0] for r in run.q("SELECT name FROM sqlite_master WHERE type = 'view'"))
    for v in ("api_calls", "kernels", "memcpys", "memsets", "syncs", "stack_frames", "allocations", "calls",
              "launch_args", "copy_args", "memset_args", "sync_args", "alloc_args", "gpu_records", "gpu_activity",
              "cupti_memory_kinds", "py_stack_frames", "graph_nodes", "host_samples", "module_args"):
        assert v in views, v
    # version 5 columns come last, after every older one; then the CUDA
    # Graph node a kernel ran as (issue 18)
    for view, last in (("calls", "error"), ("api_calls", "error"), ("kernels", "graph_node_id"),
                       ("memcpys", "graph_node_id"), ("memsets", "graph_node_id"), ("gpu_activity", "via"), ("stack_frames", "inlined")):
        assert_eq(run.q("SELECT name FROM pragma_table_info(?)", view)[-1][0], last, view)
    for key in ("tracer", "tracer_version", "pid", "cmdline", "host", "start_ns", "end_ns",
                "dropped_events", "dropped_stacks", "complete"):
        assert run.q("SELECT value FROM meta WHERE key = ?", key), key
    assert_eq(run.q1("SELECT value FROM meta WHERE key = 'cmdline'"), prog("rt_basic"))
    assert_eq(run.q1("SELECT DISTINCT time_source FROM kernels"), "gpu")


def test_sanitized_shim_asan_ubsan():
    for p in ("rt_basic", "drv_basic"):
        run = run_traced([prog(p)], sanitizer="asan")
        assert run.proc.returncode == 0, run.proc.stderr[-3000:]
        assert "ERROR: AddressSanitizer" not in run.proc.stderr
        assert "runtime error" not in run.proc.stderr, run.proc.stderr[-3000:]
        assert run.q1("SELECT count(*) FROM kernels") > 0
    run = run_traced([prog("threads"), "4", "500"], sanitizer="asan")
    assert run.proc.returncode == 0, run.proc.stderr[-3000:]
    assert_eq(run.q1("SELECT count(*) FROM kernels"), 2000)


def test_sanitized_shim_tsan():
    run = run_traced([prog("threads"), "4", "500"], sanitizer="tsan")
    assert "WARNING: ThreadSanitizer" not in run.proc.stderr, run.proc.stderr[-4000:]
    assert run.proc.returncode == 0, run.proc.stderr[-3000:]
    assert_eq(run.q1("SELECT count(*) FROM kernels"), 2000)


def test_killed_process_leaves_readable_trace():
    # SIGKILL gives the tracer no chance to flush: what was committed (at
    # most a quarter second behind) must still be a readable trace.
    import signal
    import time
    from gtlib import SHIM
    d = tmpdir()
    env = base_env({"GPUTRACE_OUTPUT": os.path.join(d, "t.db"), "FAKECUDA_LAUNCH_NS": "20000",
                    "GPUTRACE_GPU_TIMING": "off"})
    env["LD_PRELOAD"] = SHIM
    p = subprocess.Popen([prog("threads"), "1", "100000000"], env=env, preexec_fn=gtlib.default_signals,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    db = os.path.join(d, "t.db")
    try:
        # wait until commits are visible from outside, then kill mid-run
        seen, deadline = 0, time.monotonic() + 20
        while seen < 2000 and time.monotonic() < deadline:
            time.sleep(0.1)
            try:
                seen = query(db, "SELECT count(*) FROM kernels")[0][0]
            except Exception:
                seen = 0
        assert seen >= 2000, "no commits seen while the program ran"
        time.sleep(0.3)
    finally:
        p.send_signal(signal.SIGKILL)
        p.wait()
    launches = query(db, "SELECT count(*) FROM kernels")[0][0]
    # everything committed before the kill is still there
    assert launches >= seen, (launches, seen)
    assert_eq(query(db, "SELECT value FROM meta WHERE key = 'complete'")[0][0], "0")
    out = subprocess.run([os.path.join(os.path.dirname(SHIM), "gputrace"), "info", db], capture_output=True,
                         text=True)
    assert_eq(out.returncode, 0, out.stderr)
    assert "did not finish" in out.stdout, out.stdout


def test_sigint_and_sigterm_finish_the_trace():
    # The program keeps the default action for both: it still dies of the
    # signal, and the trace is finished first (everything written, indexed,
    # one file), so report and audit can read it.
    import signal
    import time
    from gtlib import SHIM
    for sig in (signal.SIGTERM, signal.SIGINT):
        d = tmpdir()
        db = os.path.join(d, "t.db")
        env = base_env({"GPUTRACE_OUTPUT": db, "FAKECUDA_LAUNCH_NS": "20000"})
        env["LD_PRELOAD"] = SHIM
        p = subprocess.Popen([prog("threads"), "1", "100000000"], env=env, preexec_fn=gtlib.default_signals,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            seen, deadline = 0, time.monotonic() + 20
            while seen < 1000 and time.monotonic() < deadline:
                time.sleep(0.1)
                try:
                    seen = query(db, "SELECT count(*) FROM kernels")[0][0]
                except Exception:
                    seen = 0
            assert seen >= 1000, "no commits seen while the program ran"
        finally:
            p.send_signal(sig)
            p.wait(timeout=30)
        assert_eq(p.returncode, -sig, "died of the signal, as without the tracer")
        assert_eq(os.listdir(d), ["t.db"], "one finished file")
        assert_eq(query(db, "SELECT value FROM meta WHERE key = 'complete'")[0][0], "1")
        assert_eq(query(db, "SELECT value FROM meta WHERE key = 'terminated_by_signal'")[0][0], str(int(sig)))
        assert query(db, "SELECT count(*) FROM kernels")[0][0] >= seen
        assert query(db, "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = 'frames_ip'")[0][0] == 1
        out = subprocess.run([os.path.join(os.path.dirname(SHIM), "gputrace"), "report", db], capture_output=True,
                             text=True)
        assert_eq(out.returncode, 0, out.stderr)


def test_more_launch_configurations_than_the_writer_remembers():
    """70,000 distinct launch configurations, then the first ten again:
    the writer remembers 65,536 at once and starts over past that, so the
    ten are stored a second time; every launch still reads back its own
    grid and block."""
    run = run_traced([prog("many_configs"), "70000", "10"], env={"GPUTRACE_GPU_TIMING": "off",
                                                                  "GPUTRACE_STACK_DEPTH": "0"})
    assert_eq(run.proc.returncode, 0)
    assert_eq(run.proc.stdout, "many_configs: 70010 launches\n")
    assert_eq(run.q1("SELECT count(*) FROM kernels"), 70010)
    assert_eq(run.q1("SELECT count(*) FROM launch_configs"), 70010)
    got = run.q("SELECT grid_x, block_x FROM kernels ORDER BY api_start_ns")
    want = [(c + 1, 32 * (c % 4 + 1)) for c in list(range(70000)) + list(range(10))]
    assert_eq(len(got), len(want))
    assert got == want, [(i, g, w) for i, (g, w) in enumerate(zip(got, want)) if g != w][:5]

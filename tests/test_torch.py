"""PyTorch from PyPI (scripts/python-requirements.txt) on the simulated GPU:
a training loop as users write it (tests/progs/py/torch_train.py), traced by
`gputrace record` and run untraced, checked against counts from outside the
tracer: the simulated driver's own log of every piece of GPU work
(FAKECUDA_LOG), the program's log of what it copied and replayed, and its
source (lines ending in '# @name' are where a site must point).
docs/testing.md, "PyTorch", says what this proves and what it cannot."""
import functools
import json
import os
import re
import subprocess

import gtlib
import oracle
from gtlib import GPUTRACE, PYENV_PYTHON, ROOT, assert_eq, query, tmpdir, torch_env

SCRIPT = os.path.join(ROOT, "tests", "progs", "py", "torch_train.py")
STEPS, STALL_MS, REPLAYS = 30, 40, 5


def markers():
    return gtlib.marker_lines(SCRIPT)


def _run(traced):
    d = tmpdir("gputrace-torch-")
    log = os.path.join(d, "gpu.log")
    argv = [PYENV_PYTHON, SCRIPT, str(STEPS), str(STALL_MS), str(REPLAYS)]
    if traced:
        argv = [GPUTRACE, "record", "-q", "-o", os.path.join(d, "trace-%p.db"), "--"] + argv
    proc = subprocess.run(argv, env=torch_env({"FAKECUDA_LOG": log}), capture_output=True, text=True, timeout=600)
    return proc, d, log


@functools.lru_cache(maxsize=None)
def traced():
    proc, d, log = _run(True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    traces = sorted(f for f in os.listdir(d) if f.endswith(".db"))
    # The DataLoader's workers (forked, no CUDA call) and the pin-memory
    # thread's process leave no trace of their own: one process, one trace.
    assert_eq(len(traces), 1, "traces written (%r)" % traces)
    db = os.path.join(d, traces[0])
    rep = subprocess.run([GPUTRACE, "report", "--format", "json", "--top", "0", db], capture_output=True, text=True,
                         timeout=300)
    assert rep.returncode == 0, rep.stderr
    return proc, db, log, json.loads(rep.stdout)


def program_log(stdout):
    m = re.search(r"^log steps=(\d+) h2d=(\d+) h2d_bytes=(\d+) replays=(\d+)$", stdout, re.M)
    assert m, stdout
    return dict(zip(("steps", "h2d", "h2d_bytes", "replays"), map(int, m.groups())))


def gpu_log(path):
    """The simulated driver's own record of every piece of GPU work:
    (kind, name, stream, start, end, bytes, correlation, graph id, node id)."""
    rows = []
    with open(path) as f:
        for line in f:
            k, name, stream, start, end, nbytes, corr, gid, nid = line.split()[:9]
            rows.append((k, name, int(stream), int(start), int(end), int(nbytes), int(corr), int(gid), int(nid)))
    return rows


def test_torch_traced_and_untraced_same_output_and_status():
    plain, _, _ = _run(False)
    proc = traced()[0]
    assert_eq(plain.returncode, 0, "untraced exit status (stderr: %s)" % plain.stderr[-2000:])
    assert_eq(proc.stdout, plain.stdout, "stdout traced vs untraced")
    assert_eq(program_log(plain.stdout), {"steps": STEPS, "h2d": 2 * STEPS, "h2d_bytes": 2 * STEPS * 64 * 512 * 4,
                                          "replays": REPLAYS}, "the program's own log")


def test_torch_every_gpu_record_once_and_linked_to_its_call():
    _, db, log, _ = traced()
    want = gpu_log(log)
    assert want, "the simulated driver logged no GPU work"
    # GPU times from the simulated CUPTI beside the simulated runtime, not
    # the wheel's libcupti.so.13 that libtorch_cpu.so also loads (unused
    # unless torch.profiler runs).
    meta = dict(query(db, "SELECT key, value FROM meta WHERE key LIKE 'gpu_timing%'"))
    assert_eq(meta.get("gpu_timing"), "cupti", "GPU times")
    assert_eq(os.path.realpath(meta.get("gpu_timing_detail", "")),
              os.path.realpath(os.path.join(gtlib.FAKECUDA, "libcupti.so.13")), "the CUPTI the tracer used")
    # Every kernel, copy and memset the GPU ran is in the trace once, with
    # its times and bytes, tied to the call that submitted it.
    got = query(db, "SELECT kind, start_ns, end_ns, COALESCE(bytes, 0), linked FROM gpu_activity")
    unlinked = [r for r in got if not r[4]]
    assert not unlinked, "GPU records not linked to a call: %r" % unlinked[:5]
    key = lambda r: (r[0], r[1], r[2], r[3] if r[0] != "kernel" else 0)
    got_keys = sorted(key(r) for r in got)
    want_keys = sorted((k, s, e, b if k != "kernel" else 0) for k, _, _, s, e, b, _, _, _ in want if k != "sync")
    assert_eq(len(got_keys), len(want_keys), "GPU records in the trace vs the driver's log")
    assert_eq(got_keys, want_keys, "GPU records (kind, start, end, bytes)")
    # Kernels by (mangled) name.
    kn = query(db, "SELECT mangled_name, count(*) FROM kernels WHERE time_source = 'gpu' GROUP BY 1")
    wn = {}
    for k, name, *_ in want:
        if k == "kernel":
            wn[name] = wn.get(name, 0) + 1
    assert_eq(dict(kn), wn, "kernels by name")
    # Syncs: each the driver logged is a sync call of the trace, and a GPU record.
    wsync = sum(1 for r in want if r[0] == "sync")
    assert_eq(query(db, "SELECT count(*) FROM gpu_records WHERE kind = 'sync'")[0][0], wsync, "sync records")
    assert_eq(query(db, "SELECT count(*) FROM gpu_records g WHERE kind = 'sync' AND NOT EXISTS "
                        "(SELECT 1 FROM events e WHERE e.corr = g.corr)")[0][0], 0, "sync records without a call")
    # Each call that submitted work (not captured) has its GPU record.
    orphans = query(db, "SELECT c.id, c.name FROM api_calls c WHERE c.category IN ('launch', 'memcpy', 'memset') "
                        "AND c.captured = 0 AND c.result = 0 AND NOT EXISTS "
                        "(SELECT 1 FROM gpu_activity a WHERE a.api_call_id = c.id)")
    assert not orphans, "calls without their GPU record: %r" % orphans[:5]


def test_torch_copies_match_the_programs_log():
    proc, db, _, rep = traced()
    plog, m = program_log(proc.stdout), markers()
    # The batches' copies: the two .to('cuda', non_blocking=True) lines,
    # from pinned memory (pin_memory=True), asynchronous.
    rows = query(db, "SELECT m.kind, m.host_mem, m.async, m.bytes, f.line FROM memcpys m "
                     "JOIN api_calls c ON c.id = m.api_call_id JOIN py_stack_frames f ON f.pystack_id = c.pystack_id "
                     "AND f.depth = 0 WHERE f.file LIKE '%torch_train.py' AND f.line IN (?, ?)",
                 m["h2d"], m["h2d"] + 1)
    assert_eq(len(rows), plog["h2d"], "batch copies")
    assert_eq(sum(r[3] for r in rows), plog["h2d_bytes"], "batch bytes")
    assert_eq({r[:3] for r in rows}, {("HtoD", "pinned", 1)}, "batch copies' kind, host memory, async")
    # The report's H2D hotspots name those two lines with those bytes.
    h = {tuple(r["site"][:1]): r for r in rep["h2d_hotspots"]}
    for line in (m["h2d"], m["h2d"] + 1):
        r = h[("torch_train.py:%d in main" % line,)]
        assert_eq((r["bytes"], r["pinned_bytes"], r["count"]), (plog["h2d_bytes"] // 2, plog["h2d_bytes"] // 2,
                                                              plog["steps"]), "hotspot at line %d" % line)


def test_torch_graph_replays_are_graph_work():
    proc, db, log, rep = traced()
    plog, m = program_log(proc.stdout), markers()
    launches = query(db, "SELECT count(*) FROM api_calls WHERE category = 'graph_launch' AND result = 0")[0][0]
    assert_eq(launches, plog["replays"], "graph launches")
    nodes = query(db, "SELECT count(*) FROM graph_nodes WHERE kind = 'kernel'")[0][0]
    assert nodes > 0, "the captured forward pass has no kernel node"
    graph_kernels = query(db, "SELECT count(*) FROM kernels WHERE via = 'graph'")[0][0]
    assert_eq(graph_kernels, nodes * plog["replays"], "kernels run by replays")
    logged = sum(1 for r in gpu_log(log) if r[0] == "kernel" and r[7] != 0)
    assert_eq(graph_kernels, logged, "graph kernels vs the driver's log")
    # The report: one graph-launch site, the replay line, with every node.
    gl = rep["graph_launches"]
    assert_eq(len(gl), 1, "graph launch sites")
    assert "torch_train.py:%d in main" % m["replay"] in gl[0]["site"], gl[0]["site"]
    assert_eq((gl[0]["count"], gl[0]["kernels"]), (plog["replays"], graph_kernels), "graph launches row")
    # Each node was captured at a line of the forward pass.
    fwd = {"torch_train.py:%d in ScaleBias.forward" % n for n in (m["forward"], m["forward"] + 1)}
    for r in rep["graph_nodes"]:
        assert_eq(r["created_at"][0] in fwd, True, "node created at %r" % r["created_at"][0])


def test_torch_python_sites_are_the_users_lines():
    _, db, _, rep = traced()
    m = markers()
    with open(SCRIPT) as f:
        src = f.read().split("\n")
    pid = int(query(db, "SELECT value FROM meta WHERE key = 'pid'")[0][0])
    # Every frame of the program's file any launch site names is a real
    # line of it, in the function that holds it.
    named = 0
    for r in rep["launch_overhead"]["sites"]:
        for fr in r["site"]:
            mm = re.match(r"^torch_train\.py:(\d+) in (.*)$", fr)
            if mm:
                line, fn = int(mm.group(1)), mm.group(2).split(".")[-1]
                assert src[line - 1].strip() and not src[line - 1].lstrip().startswith("#"), fr
                defs = [i for i in range(line) if re.match(r"\s*def %s\(" % fn, src[i])] or fn == "<module>"
                assert defs, "%s: no def %s above line %d" % (fr, fn, line)
                named += 1
    assert named, "no launch site names the program"
    # The forward pass's kernels on the main thread name its lines.
    fwd = query(db, "SELECT count(*) FROM api_calls c JOIN py_stack_frames f ON f.pystack_id = c.pystack_id "
                    "AND f.depth = 0 WHERE c.category = 'launch' AND c.tid = ? AND f.file LIKE '%torch_train.py' "
                    "AND f.line IN (?, ?) AND f.function = 'ScaleBias.forward'", pid, m["forward"], m["forward"] + 1)
    assert fwd[0][0] >= 6 * STEPS, "forward launches at the forward lines: %d" % fwd[0][0]


def test_torch_autograd_thread_launches_never_name_a_wrong_line():
    """Backward's kernels are launched by autograd's own thread, which has
    no Python frame: the trace has no Python stack for them, and their
    sites name the native op that ran (libtorch frames), never a line of
    the program."""
    _, db, _, rep = traced()
    pid = int(query(db, "SELECT value FROM meta WHERE key = 'pid'")[0][0])
    rows = query(db, "SELECT c.tid, count(*), sum(c.pystack_id IS NULL) FROM api_calls c "
                     "WHERE c.category = 'launch' AND c.tid != ? GROUP BY 1", pid)
    assert rows, "no launch from another thread (autograd's)"
    for tid, n, nopy in rows:
        assert_eq(nopy, n, "launches of thread %d without a Python stack" % tid)
        assert n >= STEPS, "thread %d launched %d kernels" % (tid, n)
    other = {r[0] for r in rows}
    ids = [r[0] for r in query(db, "SELECT id FROM api_calls WHERE category = 'launch' AND tid != ?", pid)]
    assert ids
    # The report's launch sites for those launches: no line of any Python
    # file, the op that ran (its libtorch frames), and saying plainly that
    # the call had no Python frame.
    native = [r for r in rep["launch_overhead"]["sites"] if not any(".py:" in f for f in r["site"])]
    assert native, "no launch site without Python frames (autograd's)"
    for r in native:
        assert_eq(r["site"][-1], "(no Python frame)", "outermost frame of %r" % r["site"])
        assert any("libtorch" in f for f in r["site"][:-1]), r["site"]
    assert_eq(sum(r["count"] for r in native), sum(n for _, n, _ in rows), "launches at those sites")
    assert other


def test_torch_planted_stall_is_the_top_idle_cause():
    _, _, _, rep = traced()
    m = markers()
    top = rep["idle_by_host_stack"][0]
    assert_eq(top["stack"], "torch_train.py:%d in fetch (blocked in clock_nanosleep)" % m["stall"],
              "top idle host stack (%r)" % rep["idle_by_host_stack"][:4])
    assert top["gaps"] >= STEPS - 2, top


def test_torch_nvtx_ranges_are_phases_and_steps():
    _, db, _, rep = traced()
    names = [p["name"] for p in rep["phases"]]
    assert_eq(names, ["step %d" % i for i in range(STEPS)] + ["eval"], "phases")
    assert_eq(len(rep["steps"]), 1, "steps rows")
    assert_eq(rep["steps"][0]["count"], STEPS, "steps")
    m = markers()
    rows = query(db, "SELECT count(*) FROM ranges r JOIN py_stack_frames f ON f.pystack_id = r.pystack_id "
                     "AND f.function = 'main' WHERE r.name LIKE 'step %'")
    assert_eq(rows[0][0], STEPS, "step ranges pushed from main")
    assert m


def test_torch_report_against_the_oracle():
    _, db, _, _ = traced()
    errs = oracle.verify([db])
    assert not errs, "\n".join(e[:400] for e in errs[:12])


def test_torch_device_properties_are_the_drivers_attributes():
    """torch.cuda.get_device_properties (the runtime's cudaGetDeviceProperties)
    says what the simulated driver's cuDeviceGetAttribute, cuDeviceGetUuid
    and cuDeviceGetPCIBusId say, asked directly through ctypes."""
    code = ("import ctypes, torch\n"
            "p = torch.cuda.get_device_properties(0)\n"
            "d = ctypes.CDLL('libcuda.so.1')\n"
            "def attr(a):\n"
            "    v = ctypes.c_int()\n"
            "    assert d.cuDeviceGetAttribute(ctypes.byref(v), a, 0) == 0\n"
            "    return v.value\n"
            "bus = ctypes.create_string_buffer(32)\n"
            "assert d.cuDeviceGetPCIBusId(bus, 32, 0) == 0\n"
            "u = ctypes.create_string_buffer(16)\n"
            "assert d.cuDeviceGetUuid_v2(u, 0) == 0\n"
            "print(p.multi_processor_count, attr(16), p.warp_size, attr(10), p.L2_cache_size, attr(38),\n"
            "      p.max_threads_per_multi_processor, attr(39), p.regs_per_multiprocessor, attr(82),\n"
            "      p.shared_memory_per_block_optin, attr(97), p.major, attr(75), p.minor, attr(76))\n"
            "print(p.pci_bus_id, int(bus.value.split(b':')[1], 16), attr(33))\n"
            "print(str(p.uuid).replace('-', ''), u.raw.hex())\n")
    r = subprocess.run([PYENV_PYTHON, "-c", code], env=torch_env(), capture_output=True, text=True, timeout=300)
    assert_eq(r.returncode, 0, "exit status (stderr: %s)" % r.stderr[-2000:])
    pairs, bus, uuid = [list(map(str, line.split())) for line in r.stdout.strip().split("\n")]
    for i in range(0, len(pairs), 2):
        assert_eq(pairs[i], pairs[i + 1], "property %d vs the driver's attribute" % (i // 2))
    assert_eq(len(set(bus)), 1, "PCI bus: properties, cuDeviceGetPCIBusId, attribute (%r)" % bus)
    assert_eq(uuid[0], uuid[1], "uuid vs cuDeviceGetUuid")


def test_torch_memory_info_follows_its_allocations():
    """torch.cuda.mem_get_info (cudaMemGetInfo) on the simulated device:
    what the caching allocator reserves is what the free memory drops by."""
    code = ("import torch\n"
            "f0, t = torch.cuda.mem_get_info()\n"
            "x = torch.empty(256 << 20, dtype=torch.uint8, device='cuda')\n"
            "f1, _ = torch.cuda.mem_get_info()\n"
            "print(t, f0 - f1, torch.cuda.memory_reserved())\n")
    r = subprocess.run([PYENV_PYTHON, "-c", code], env=torch_env(), capture_output=True, text=True, timeout=300)
    assert_eq(r.returncode, 0, "exit status (stderr: %s)" % r.stderr[-2000:])
    total, dropped, reserved = map(int, r.stdout.split())
    assert_eq(total, 80 << 30, "total memory")
    assert_eq(dropped, reserved, "free memory's drop vs the allocator's reserve")
    assert reserved >= 256 << 20, reserved


COMPILE_SCRIPT = os.path.join(ROOT, "tests", "progs", "py", "torch_compile.py")
COMPILE_CALLS = 4


def _run_compile(traced, d):
    log = os.path.join(d, "gpu.log")
    # Inductor's and Triton's caches in the test's own directory: every run
    # compiles the kernel anew (Triton's LLVM and ptxas, on the CPU).
    env = torch_env({"FAKECUDA_LOG": log, "TORCHINDUCTOR_CACHE_DIR": os.path.join(d, "inductor"),
                     "TRITON_CACHE_DIR": os.path.join(d, "triton"), "TRITON_DEFAULT_FP_FUSION": "1"})
    argv = [PYENV_PYTHON, COMPILE_SCRIPT, str(COMPILE_CALLS)]
    if traced:
        argv = [GPUTRACE, "record", "-q", "-o", os.path.join(d, "trace-%p.db"), "--"] + argv
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=900), log


def test_torch_compile_triton_kernels_traced():
    """torch.compile: the Triton kernel Inductor generates is loaded from
    its cubin file (cuModuleLoad) and launched with cuLaunchKernel; each
    launch is in the trace with its name and its GPU record, as many as
    the simulated driver ran, and its Python stack reaches the program's
    line."""
    plain, _ = _run_compile(False, tmpdir("gputrace-torch-compile-"))
    d = tmpdir("gputrace-torch-compile-")
    proc, log = _run_compile(True, d)
    assert_eq(plain.returncode, 0, "untraced exit status (stderr: %s)" % plain.stderr[-2000:])
    assert_eq(proc.returncode, 0, "traced exit status (stderr: %s)" % proc.stderr[-2000:])
    assert_eq(proc.stdout, plain.stdout, "stdout traced vs untraced")
    assert "log calls=%d " % COMPILE_CALLS in proc.stdout, proc.stdout
    traces = [f for f in os.listdir(d) if f.endswith(".db")]
    assert_eq(len(traces), 1, "traces (%r)" % traces)
    db = os.path.join(d, traces[0])
    want = sorted((s, e) for k, name, _, s, e, *_ in gpu_log(log) if k == "kernel" and name.startswith("triton_"))
    assert_eq(len(want), COMPILE_CALLS, "Triton kernels the driver ran")
    got = query(db, "SELECT k.start_ns, k.end_ns, c.name, k.via FROM kernels k JOIN api_calls c ON c.id = k.api_call_id "
                    "WHERE k.name LIKE 'triton\\_%' ESCAPE '\\'")
    assert_eq(sorted((s, e) for s, e, _, _ in got), want, "Triton kernels in the trace (GPU times)")
    assert_eq({(n, v) for _, _, n, v in got}, {("cuLaunchKernel", "launch")}, "how they were launched")
    line = _marker(COMPILE_SCRIPT, "compiled")
    at_line = query(db, "SELECT count(DISTINCT c.id) FROM api_calls c JOIN py_stack_frames f ON f.pystack_id = c.pystack_id "
                        "WHERE c.name = 'cuLaunchKernel' AND f.file LIKE '%torch_compile.py' AND f.line = ? "
                        "AND f.function = 'main'", line)[0][0]
    assert_eq(at_line, COMPILE_CALLS, "Triton launches whose Python stack holds the compiled call's line")
    assert not oracle.verify([db]), oracle.verify([db])[:5]


def _marker(path, name):
    lines = gtlib.marker_lines(path)
    assert name in lines, "no # @%s in %s" % (name, path)
    return lines[name]


def test_torch_events_keep_their_flags():
    """torch.cuda.Event: timing events measure (at least the simulated
    GPU's durations, here 10 kernels of FAKECUDA_KERNEL_NS); events created
    without timing (torch refuses before asking CUDA, so asked here of the
    runtime torch loaded, through ctypes) make cudaEventElapsedTime fail
    with cudaErrorInvalidResourceHandle, as a real runtime does."""
    code = ("import ctypes, torch\n"
            "x = torch.ones(1024, device='cuda')\n"
            "a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)\n"
            "a.record()\n"
            "for _ in range(10):\n"
            "    x.mul_(2)\n"
            "b.record()\n"
            "b.synchronize()\n"
            "print(round(a.elapsed_time(b) * 1e6))\n"
            "rt = ctypes.CDLL('libcudart.so.13')\n"
            "c, d, ms = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_float()\n"
            "assert rt.cudaEventCreateWithFlags(ctypes.byref(c), 2) == 0\n"
            "assert rt.cudaEventCreateWithFlags(ctypes.byref(d), 2) == 0\n"
            "assert rt.cudaEventRecord(c, None) == 0 and rt.cudaEventRecord(d, None) == 0\n"
            "assert rt.cudaEventSynchronize(d) == 0\n"
            "print(rt.cudaEventElapsedTime(ctypes.byref(ms), c, d), rt.cudaGetLastError())\n"
            "print(rt.cudaEventCreateWithFlags(ctypes.byref(c), 4), rt.cudaGetLastError())\n")
    r = subprocess.run([PYENV_PYTHON, "-c", code], env=torch_env({"FAKECUDA_KERNEL_NS": "20000"}),
                       capture_output=True, text=True, timeout=300)
    assert_eq(r.returncode, 0, "exit status (stderr: %s)" % r.stderr[-2000:])
    ns, untimed, ipc = r.stdout.strip().split("\n")
    # at least the 10 kernels' GPU time (more where the host launched slower than they ran)
    assert int(ns) >= 10 * 20000, "elapsed time of 10 kernels of 20 us: %s ns" % ns
    assert_eq(untimed, "400 400", "cudaEventElapsedTime between events without timing, and the last error")
    assert_eq(ipc, "1 1", "an interprocess event that times (cudaErrorInvalidValue)")


def test_torch_profiler_sees_every_kernel_on_the_simulated_cupti():
    """torch.profiler (Kineto) with the simulated CUPTI preloaded in place
    of the wheel's: libtorch loads (it links five CUPTI functions the
    simulated CUPTI now has), and the profile holds the GPU kernels of the
    profiled loop, as many as it launched, though Kineto disables its
    record kinds before it flushes them (a real CUPTI keeps the records of
    work launched while a kind was on). Kineto drops records it places
    outside its window (its log's "Out-of-range" count): kernels within a
    millisecond or so of the window's start or end sometimes are, so the
    loop keeps 50 ms from both (why Kineto places them so is not known)."""
    code = ("import torch\n"
            "from torch.profiler import profile, ProfilerActivity\n"
            "x = torch.ones(1024, device='cuda')\n"
            "import time\n"
            "with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:\n"
            "    time.sleep(0.05)\n"
            "    for _ in range(7):\n"
            "        x.mul_(2)\n"
            "    torch.cuda.synchronize()\n"
            "    time.sleep(0.05)\n"
            "gpu = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]\n"
            "print(len(gpu), len([e for e in gpu if 'Mul' in e.name or 'mul' in e.name]))\n")
    env = torch_env()
    env["LD_PRELOAD"] += " " + os.path.join(gtlib.FAKECUDA, "libcupti.so.13")
    r = subprocess.run([PYENV_PYTHON, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert_eq(r.returncode, 0, "exit status (stderr: %s)" % r.stderr[-2000:])
    assert_eq(r.stdout.strip(), "7 7", "the profiler's GPU kernel events, and those of mul_")

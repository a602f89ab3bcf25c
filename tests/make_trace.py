"""Synthetic gputrace traces with known content, built from schema/gputrace.sql.

Tests describe calls with the small constructors below and hand them to
make_trace(); ids, thread ids and timestamps are filled in so a test only
states what it checks. Example:

    from make_trace import make_trace, launch, memcpy, sync
    make_trace("/tmp/t.db", calls=[launch("vecAdd"), memcpy("HtoD", 4096),
                                   sync("device")])
"""
import os
import sqlite3
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCHEMA = os.path.join(ROOT, "schema", "gputrace.sql")
CUDA = os.environ.get("CUDA", "/usr/local/cuda")

START_NS = 1_000_000_000     # CLOCK_MONOTONIC at process start
STEP_NS = 1_000              # gap between consecutive synthetic calls
CALL_NS = 500                # duration of each synthetic call


def call(api, category="other", tid=None, result=0, stream=None, stack=None, pystack=None, **extra):
    """A generic call. `stack` is a list of (module, function) pairs,
    innermost first; equal lists share one stack id. `pystack` is a list of
    (file, function, line) triples, innermost first, likewise shared."""
    c = {"api": api, "category": category, "tid": tid, "result": result,
         "stream": stream, "stack": stack, "pystack": pystack}
    c.update(extra)
    return c


def launch(kernel, api="cudaLaunchKernel", demangled=None, grid=(1, 1, 1), block=(128, 1, 1),
           shared_mem=0, device=0, **kw):
    return call(api, "launch", launch=dict(kernel=kernel, demangled=demangled, grid=grid,
                                           block=block, shared_mem=shared_mem, device=device), **kw)


def memcpy(kind, nbytes, api=None, host_mem="pageable", is_async=False, device=0, **kw):
    api = api or ("cudaMemcpyAsync" if is_async else "cudaMemcpy")
    return call(api, "memcpy", copy=dict(kind=kind, bytes=nbytes, host_mem=host_mem,
                                         is_async=is_async, device=device), **kw)


def memset(nbytes, api=None, is_async=False, device=0, **kw):
    api = api or ("cudaMemsetAsync" if is_async else "cudaMemset")
    return call(api, "memset", set=dict(bytes=nbytes, is_async=is_async, device=device), **kw)


def sync(kind, api=None, target=None, **kw):
    api = api or {"device": "cudaDeviceSynchronize", "stream": "cudaStreamSynchronize",
                  "event": "cudaEventSynchronize", "context": "cuCtxSynchronize",
                  "stream_wait_event": "cudaStreamWaitEvent"}.get(kind, "cudaDeviceSynchronize")
    return call(api, "sync", sync=dict(kind=kind, target=target), **kw)


def alloc(nbytes, kind="device", api=None, ptr=None, **kw):
    api = api or {"device": "cudaMalloc", "pinned": "cudaMallocHost", "managed": "cudaMallocManaged",
                  "async": "cudaMallocAsync", "registered": "cudaHostRegister"}.get(kind, "cudaMalloc")
    return call(api, "alloc", alloc=dict(kind=kind, bytes=nbytes, ptr=ptr), **kw)


def free(api="cudaFree", **kw):
    return call(api, "free", **kw)


def graph_launch(api="cudaGraphLaunch", **kw):
    """A graph launch: its work goes in with add_gpu_op(..., fold=False)."""
    return call(api, "graph_launch", **kw)


def lib_of(api):
    """api_names.lib (version 5): the driver's entry points are cu*, the
    runtime's cuda* and __cuda*."""
    return "driver" if api.startswith("cu") and not api.startswith("cuda") else "runtime"


_result_names = None


def result_names():
    """{(lib, code): name} as the toolkit's headers spell them, the way the
    tracer's build generates them (scripts/gen_error_names.py)."""
    global _result_names
    if _result_names is None:
        sys.path.insert(0, os.path.join(ROOT, "scripts"))
        import gen_error_names
        runtime, driver = gen_error_names.parse(os.path.join(CUDA, "include"))
        _result_names = dict([(("runtime", c), n) for c, n in runtime] + [(("driver", c), n) for c, n in driver])
    return _result_names


def has_column(db, table, column):
    return any(r[1] == column for r in db.execute("PRAGMA table_info(%s)" % table))


COPY_KINDS = ["HtoD", "DtoH", "DtoD", "HtoH", "PtoP"]
HOST_MEM = ["pageable", "pinned", "managed", "none", "unknown"]
SYNC_KINDS = ["device", "context", "stream", "event", "stream_wait_event"]
ALLOC_KINDS = ["device", "pinned", "managed", "registered", "async"]
GPU_KINDS = ["kernel", "memcpy", "memset", "sync"]


def is_one_row(db):
    """Version 3 and later: one `events` row per call."""
    return db.execute("SELECT count(*) FROM sqlite_master WHERE name = 'events' AND type = 'table'").fetchone()[0] > 0


def is_v4(db):
    """Version 4: arguments in a0..a2, launches as launch_configs ids, GPU
    records kept in their call's row."""
    return db.execute("SELECT count(*) FROM sqlite_master WHERE name = 'launch_configs'").fetchone()[0] > 0


def default_ptr(a, cid):
    return a["ptr"] if a["ptr"] is not None else 0x7f0000000000 + cid * 4096


def event_args(c, cid, name_id):
    """a0..a8 of a version 3 events row."""
    a = [None] * 9
    if "launch" in c:
        la = c["launch"]
        a = [name_id, la["device"], *la["grid"], *la["block"], la["shared_mem"]]
    elif "copy" in c:
        ca = c["copy"]
        a[0:5] = [COPY_KINDS.index(ca["kind"]), ca["device"], ca["bytes"], HOST_MEM.index(ca["host_mem"]),
                  int(ca["is_async"])]
    elif "set" in c:
        sa = c["set"]
        a[1], a[2], a[4] = sa["device"], sa["bytes"], int(sa["is_async"])
    elif "sync" in c:
        a[0], a[5] = SYNC_KINDS.index(c["sync"]["kind"]), c["sync"]["target"]
    elif "alloc" in c:
        aa = c["alloc"]
        a[0], a[2], a[5] = ALLOC_KINDS.index(aa["kind"]), aa["bytes"], default_ptr(aa, cid)
    return tuple(a)


def event_args_v4(db, c, cid, name_id, configs):
    """a0..a2 of a version 4 events row, as schema/gputrace.sql lays them
    out; a launch's configuration goes in launch_configs once."""
    captured = int(c.get("captured", 0))
    if "launch" in c:
        la = c["launch"]
        key = (name_id, la["device"], *la["grid"], *la["block"], la["shared_mem"], captured)
        if key not in configs:
            configs[key] = len(configs) + 1
            db.execute("INSERT INTO launch_configs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", (configs[key],) + key)
        return configs[key], None, None
    if "copy" in c:
        ca = c["copy"]
        flags = (COPY_KINDS.index(ca["kind"]) | HOST_MEM.index(ca["host_mem"]) << 3 | int(ca["is_async"]) << 6 |
                 captured << 7 | ca["device"] << 16)
        return flags, ca["bytes"], None
    if "set" in c:
        sa = c["set"]
        return int(sa["is_async"]) << 6 | captured << 7 | sa["device"] << 16, sa["bytes"], None
    if "sync" in c:
        return SYNC_KINDS.index(c["sync"]["kind"]), c["sync"]["target"], None
    if "alloc" in c:
        aa = c["alloc"]
        return ALLOC_KINDS.index(aa["kind"]), aa["bytes"], default_ptr(aa, cid)
    return None, None, None


def add_gpu_op(db, kind, call_id, start_ns, end_ns, device=0, stream=7, correlation_id=None, nbytes=None,
               src_kind=None, dst_kind=None, fold=True, name=None, copy_kind=None):
    """A CUPTI record made by call `call_id` (None: a call not intercepted),
    stored as the trace's schema version stores them. Version 4 and later
    keep a launch's, copy's or memset's first record in the call's row (as
    the writer does when CUPTI delivers it in time), unless fold is False;
    a graph launch's records are always in gpu_ops. name: the kernel's
    (mangled) name, else the launch's; copy_kind: CUPTI's direction
    ('HtoD', ...), else the copy call's."""
    correlation_id = correlation_id if correlation_id is not None else 100000 + (call_id or 0)
    category = {"kernel": "launch", "memcpy": "memcpy", "memset": "memset"}.get(kind)
    if is_v4(db) and fold and call_id is not None and category:
        row = db.execute("SELECT e.start_ns FROM events e JOIN api_names n ON n.id = e.api_id "
                         "WHERE e.id = ? AND n.category = ? AND e.g_dur_ns IS NULL", (call_id, category)).fetchone()
        if row:
            mem = ((src_kind or 0) << 8 | (dst_kind or 0) << 12) if kind == "memcpy" else 0
            db.execute("UPDATE events SET g_start_ns = ?, g_dur_ns = ?, g_stream = ?, a0 = a0 | ? WHERE id = ?",
                       (start_ns - row[0], end_ns - start_ns, stream * 256 + device, mem, call_id))
            return
    name_id = None
    if kind == "kernel" and name is not None:
        row = db.execute("SELECT id FROM strings WHERE value = ?", (name,)).fetchone()
        name_id = row[0] if row else db.execute("INSERT INTO strings(value) VALUES (?)", (name,)).lastrowid
    elif kind == "kernel" and call_id is not None:  # CUPTI names the kernel as the launch did
        row = db.execute("SELECT name_id FROM launch_args WHERE call_id = ?", (call_id,)).fetchone()
        name_id = row[0] if row else None
    if kind == "memcpy" and copy_kind is None and call_id is not None:  # CUPTI's copy kind, as the call's
        row = db.execute("SELECT kind FROM copy_args WHERE call_id = ?", (call_id,)).fetchone()
        copy_kind = row[0] if row else None
    cupti_copy = {"HtoD": 1, "DtoH": 2, "DtoD": 8, "HtoH": 9, "PtoP": 10}
    corr = None
    if call_id is not None:
        corr = 5000000 + call_id
        db.execute("UPDATE %s SET corr = ? WHERE id = ?" % ("events" if is_one_row(db) else "calls"), (corr, call_id))
    if is_one_row(db):
        db.execute("INSERT INTO gpu_ops(kind, corr, correlation_id, device, stream, start_ns, dur_ns, bytes, "
                   "src_kind, dst_kind, name_id, copy_kind) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                   (GPU_KINDS.index(kind), corr, correlation_id, device, stream, start_ns, end_ns - start_ns, nbytes,
                    src_kind, dst_kind, name_id, cupti_copy.get(copy_kind)))
    else:
        mem = ["unknown", "pageable", "pinned", "device", "array", "managed"]
        db.execute("INSERT INTO gpu_ops(kind, correlation_id, device, context, stream, start_ns, end_ns, bytes, "
                   "src_kind, dst_kind, name_id, copy_kind) VALUES (?, ?, ?, 1, ?, ?, ?, ?, ?, ?, ?, ?)",
                   (kind, correlation_id, device, stream, start_ns, end_ns, nbytes,
                    mem[src_kind] if src_kind is not None else None, mem[dst_kind] if dst_kind is not None else None,
                    name_id, copy_kind))
        if corr is not None:
            db.execute("INSERT INTO ext_corr VALUES (?, ?)", (correlation_id, corr))


def default_meta(pid=4242):
    return {
        "tracer": "gputrace", "tracer_version": "0.1.0", "pid": str(pid), "ppid": "4241",
        "cmdline": "./vector_add --n 1024", "host": "testhost",
        "start_ns": str(START_NS), "start_time_unix_ns": "1700000000000000000",
        "dropped_events": "0", "dropped_stacks": "0", "stack_depth": "32",
    }


def make_trace(path, calls=(), meta=None, complete=True, user_version=None, threads=None,
               default_tid=1000, schema=SCHEMA):
    """Writes a trace to `path` (replaced if present) and returns it.

    meta: overrides merged onto default_meta(); a value of None removes the
    key. complete: sets complete='1' and end_ns after the last call; False
    leaves both out, as a process that died would. user_version: overrides
    the schema's PRAGMA user_version. threads: {tid: name} for the threads
    table (defaults to every tid seen, unnamed). schema: the schema file
    (tests/data/gputrace-v1.sql makes a version 1 trace, without Python)."""
    if os.path.exists(path):
        os.unlink(path)
    db = sqlite3.connect(path)
    with open(schema) as f:
        db.executescript(f.read())
    m = default_meta()
    end_ns = START_NS + STEP_NS * (len(calls) + 1)
    if complete:
        m.update({"complete": "1", "end_ns": str(end_ns)})
    for k, v in (meta or {}).items():
        if v is None:
            m.pop(k, None)
        else:
            m[k] = v
    db.executemany("INSERT INTO meta(key, value) VALUES (?, ?)", m.items())
    with_lib = has_column(db, "api_names", "lib")  # version 5
    if with_lib:
        db.executemany("INSERT INTO result_names VALUES (?, ?, ?)",
                       [(lib, code, n) for (lib, code), n in sorted(result_names().items())])

    api_ids, name_ids, stack_ids, frame_ids, module_ids = {}, {}, {}, {}, {}
    tids = set()

    def intern(table, cache, key, insert):
        if key not in cache:
            cache[key] = len(cache) + 1
            insert(cache[key])
        return cache[key]

    # Before version 5 a frame's offset was its return address's: one past
    # the call instruction that version 5 stores.
    past_call = 1 if db.execute("PRAGMA user_version").fetchone()[0] < 5 else 0

    def stack_id(frames):
        key = tuple(frames)

        def add(sid):
            for depth, (module, function) in enumerate(key):
                mid = intern("modules", module_ids, module,
                             lambda i: db.execute("INSERT INTO modules VALUES (?, ?)", (i, module)))
                fid = intern("frames", frame_ids, (module, function),
                             lambda i: db.execute("INSERT INTO frames (id, ip, module_id, offset, function) VALUES (?, ?, ?, ?, ?)",
                                                  (i, 0x400000 + i * 16, mid, i * 16 + past_call, function)))
                db.execute("INSERT INTO stacks VALUES (?, ?, ?)", (sid, depth, fid))
        return intern("stacks", stack_ids, key, add)

    pystack_ids, pycode_ids, pyframe_ids = {}, {}, {}
    configs = {}

    def pystack_id(frames):
        key = tuple(frames)

        def add(sid):
            for depth, (file, function, line) in enumerate(key):
                cid = intern("py_code", pycode_ids, (file, function),
                             lambda i: db.execute("INSERT INTO py_code VALUES (?, ?, ?, ?)",
                                                  (i, file, function, line)))
                fid = intern("py_frames", pyframe_ids, (file, function, line),
                             lambda i: db.execute("INSERT INTO py_frames VALUES (?, ?, ?, ?)",
                                                  (i, cid, i * 2, line)))
                db.execute("INSERT INTO py_stacks VALUES (?, ?, ?)", (sid, depth, fid))
        return intern("py_stacks", pystack_ids, key, add)

    for i, c in enumerate(calls):
        cid = i + 1
        tid = c["tid"] if c["tid"] is not None else default_tid
        tids.add(tid)
        api_row = (c["api"], c["category"]) + ((lib_of(c["api"]),) if with_lib else ())
        aid = intern("api_names", api_ids, c["api"],
                     lambda n: db.execute("INSERT INTO api_names VALUES (?%s)" % (", ?" * len(api_row)),
                                          (n,) + api_row))
        start = c.get("start_ns", START_NS + STEP_NS * cid)
        one_row = is_one_row(db)
        v4 = is_v4(db)
        end = c.get("end_ns", start + CALL_NS)
        sid = stack_id(c["stack"]) if c["stack"] else None
        pyid = pystack_id(c["pystack"]) if c.get("pystack") else None
        nid = None
        if "launch" in c:
            a = c["launch"]
            nid = intern("strings", name_ids, a["kernel"],
                         lambda n: db.execute("INSERT INTO strings VALUES (?, ?, ?)",
                                              (n, a["kernel"], a["demangled"])))
        if v4:
            db.execute("INSERT INTO events(id, tid, api_id, start_ns, dur_ns, result, stream, stack_id, pystack_id, "
                       "a0, a1, a2) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                       (cid, tid, aid, start, end - start, c["result"], c["stream"], sid, pyid) +
                       event_args_v4(db, c, cid, nid, configs))
            continue
        if one_row:
            db.execute("INSERT INTO events(id, tid, api_id, start_ns, dur_ns, result, stream, stack_id, pystack_id, "
                       "captured, a0, a1, a2, a3, a4, a5, a6, a7, a8) "
                       "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                       (cid, tid, aid, start, end - start, c["result"], c["stream"], sid, pyid,
                        int(c.get("captured", 0))) + event_args(c, cid, nid))
            continue
        db.execute("INSERT INTO calls(id, tid, api_id, start_ns, end_ns, result, stream, stack_id) "
                   "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                   (cid, tid, aid, start, end, c["result"], c["stream"], sid))
        if pyid:
            db.execute("UPDATE calls SET pystack_id = ? WHERE id = ?", (pyid, cid))
        if "launch" in c:
            a = c["launch"]
            db.execute("INSERT INTO launch_args VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                       (cid, nid, a["device"], *a["grid"], *a["block"], a["shared_mem"]))
        if "copy" in c:
            a = c["copy"]
            db.execute("INSERT INTO copy_args VALUES (?, ?, ?, ?, ?, ?)",
                       (cid, a["kind"], a["bytes"], a["host_mem"], int(a["is_async"]), a["device"]))
        if "set" in c:
            a = c["set"]
            db.execute("INSERT INTO memset_args VALUES (?, ?, ?, ?)",
                       (cid, a["bytes"], int(a["is_async"]), a["device"]))
        if "sync" in c:
            a = c["sync"]
            db.execute("INSERT INTO sync_args VALUES (?, ?, ?)", (cid, a["kind"], a["target"]))
        if "alloc" in c:
            a = c["alloc"]
            db.execute("INSERT INTO alloc_args VALUES (?, ?, ?, ?)",
                       (cid, a["kind"], default_ptr(a, cid), a["bytes"]))
    for tid, name in (threads if threads is not None else {t: None for t in sorted(tids)}).items():
        db.execute("INSERT INTO threads VALUES (?, ?)", (tid, name))
    if user_version is not None:
        db.execute("PRAGMA user_version = %d" % int(user_version))
    db.commit()
    db.close()
    return path


# The reference trace most CLI tests read: every count below is what
# `gputrace info` must report for it.
EXAMPLE_COUNTS = {
    "api_calls": 17, "failed_calls": 1, "threads": 2, "kernel_launches": 6,
    "memcpys": 4, "memcpy_bytes": 3 * 1048576 + 4096, "memsets": 1, "syncs": 3,
    "allocations": 2, "frees": 1, "unique_stacks": 2,
    "memcpys_by_kind": {"HtoD": (2, 2 * 1048576), "DtoH": (1, 1048576), "DtoD": (1, 4096)},
    "syncs_by_kind": {"device": 2, "stream": 1},
    "top_kernels": [("vecAdd(float*, float*, float*, int)", 4), ("reduce", 2)],
}


def make_example_trace(path, **kw):
    s1 = [("/app/vector_add", "main"), ("/lib/libc.so.6", "__libc_start_main")]
    s2 = [("/app/vector_add", "step"), ("/app/vector_add", "main")]
    vec = "_Z6vecAddPfS_S_i"
    vec_d = "vecAdd(float*, float*, float*, int)"
    calls = [
        alloc(1048576, stack=s1), alloc(2 * 1048576, kind="pinned"),
        memcpy("HtoD", 1048576, stack=s1), memcpy("HtoD", 1048576, is_async=True, stream=7),
        launch(vec, demangled=vec_d, stack=s2), launch(vec, demangled=vec_d, stack=s2),
        launch(vec, demangled=vec_d, tid=1001), launch(vec, demangled=vec_d, tid=1001),
        launch("reduce"), launch("reduce", result=98),
        memset(512), memcpy("DtoD", 4096), memcpy("DtoH", 1048576),
        sync("device"), sync("device"), sync("stream", target=7), free(),
    ]
    return make_trace(path, calls=calls, **kw)


if __name__ == "__main__":
    import sys
    make_example_trace(sys.argv[1] if len(sys.argv) > 1 else "example.db")


def make_crashed_trace(path, calls=(), **kw):
    """A trace as a process that died mid-run leaves it: WAL mode, the
    last transactions only in PATH-wal, no end_ns, complete missing.
    Built in a child that exits without closing, so SQLite cannot fold the
    log back into the main file."""
    for side in (path + "-wal", path + "-shm"):
        if os.path.exists(side):
            os.unlink(side)
    pid = os.fork()
    if pid == 0:
        try:
            _make_trace_wal(path, calls, **kw)
            os._exit(0)
        except BaseException:
            import traceback
            traceback.print_exc()
            os._exit(1)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, "make_crashed_trace failed"
    return path


def _make_trace_wal(path, calls, **kw):
    # Build normally into a scratch file, then replay it into `path` in WAL
    # mode and leave without a checkpoint.
    scratch = path + ".scratch"
    make_trace(scratch, calls=calls, complete=False, **kw)
    src = sqlite3.connect(scratch)
    dump = list(src.iterdump())
    uv = src.execute("PRAGMA user_version").fetchone()[0]
    src.close()
    os.unlink(scratch)
    if os.path.exists(path):
        os.unlink(path)
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA wal_autocheckpoint=0")
    db.execute("BEGIN")
    for stmt in dump:
        if stmt not in ("BEGIN TRANSACTION;", "COMMIT;"):
            db.execute(stmt)
    db.execute("PRAGMA user_version = %d" % uv)
    db.execute("COMMIT")
    # no close: the caller os._exit()s

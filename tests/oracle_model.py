"""The oracle's model of a trace, for tests/oracle.py: the public views
(docs/schema.md) read into calls, GPU operations, call sites and gaps, and
the interval arithmetic the report's definitions (docs/report.md) use.
Written from those documents, never from the analyzer's code; the "Q:"
marks are the readings listed in tests/oracle.py's docstring. Below
tests/oracle.py and the oracles beside it (oracle_categories.py), never
above them."""
import bisect
import os
import re
import sqlite3
import sys
from collections import defaultdict

import oracle_threads

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
GPUTRACE = os.path.join(ROOT, "build", "gputrace")

# cause <- category of call, in the order ties are broken (docs/report.md)
CAUSE_OF = [("sync", "sync"), ("memcpy", "copy"), ("memset", "memset"), ("launch", "launch"),
            ("graph_launch", "graph_launch"), ("alloc", "alloc"), ("free", "free"), ("event", "event"),
            ("stream", "stream"), ("module", "module"), ("other", "other_cuda")]
# categories that count as another's for a gap's cause: building a CUDA
# Graph is "other CUDA calls" (docs/report.md)
CAUSE_CATEGORY = {"graph_build": "other"}
CAUSES = [c for _, c in CAUSE_OF]
ALL_CAUSES = CAUSES + ["host", "startup", "teardown"]
NO_CALL = "(no recorded call)"
NO_PYTHON = "(no Python frame)"  # outermost frame of a native-only site in a Python process
# step ranges' names (docs/report.md, Steps)
STEP_NAME = re.compile(r"^(profilerstep|training_step|train_step|step)([#_ :-]?[0-9]+)?$", re.I)
NO_AFTER = "(no GPU work after)"
# polls (version 8): a row of event_query or stream_query is a run of polls, counted by sync_args.polls
EXPLICIT_SYNCS = ("device", "context", "stream", "event", "event_query", "stream_query")
BANDS = [(4 << 10, "<4KiB"), (64 << 10, "4KiB-64KiB"), (1 << 20, "64KiB-1MiB"), (16 << 20, "1MiB-16MiB"),
         (None, ">=16MiB")]

# Call sites (docs/report.md, "Call sites"). Module file names, matched on
# the base name. Q10: the framework list is this oracle's reading of "...".
CUDA_LIBS = re.compile(r"^lib(cuda|cudart|cupti|nvidia-|cublas|cublasLt|cudnn|nccl|cufft|curand|cusparse|cusolver|"
                       r"nvrtc|nvJitLink|nvToolsExt|nvtx|npp|nvjpeg|cufile|cutensor|nvperf|cudadevrt)")
TRACER = re.compile(r"^libgputrace")
# libc, and the C++ runtime (libstdc++: std::thread's start routine is the
# outermost frame of every thread a C++ framework starts, autograd's too)
LIBC = re.compile(r"^(libc\.so|libc-|ld-linux|ld64\.so|libpthread|libdl\.so|libdl-|librt\.so|libm\.so|libstdc\+\+)")
PYTHON = re.compile(r"^(lib)?python\d")
FRAMEWORKS = re.compile(r"^lib(torch|c10|caffe2|shm\.so|nvfuser|triton|xla|jax|tensorflow|tensorrt|nvinfer)")
SKIP_NATIVE = [CUDA_LIBS, TRACER, LIBC, PYTHON, FRAMEWORKS]
# below the interpreter, for a call made from Python
SKIP_UNDER_PY = [CUDA_LIBS, TRACER, LIBC, re.compile(r"^libffi"), re.compile(r"^_ctypes")]


def static_cudart(frame):
    """NVIDIA's runtime linked statically into a module (docs/report.md,
    Call sites): libcudart_static_<hash> functions, and cuda* API functions
    without a source line."""
    function, line = frame[2] or "", frame[4]
    return function.startswith("libcudart_static_") or (line is None and re.match(r"^cuda[A-Z]", function) is not None)


def short_function(name):
    """docs/report.md, "Call sites": template argument lists read <...>
    (not the < of operator<, operator<<, operator<=, operator<=>); more
    than 80 characters: the first 77 and "...". Written from the spec:
    split the name into the text outside the outermost <...> groups. A
    compiler clone's " [clone .isra.0]" (and any after it) is dropped."""
    name = name.split(" [clone ", 1)[0]
    kept, level, i = [], 0, 0
    while i < len(name):
        c = name[i]
        if level == 0:
            if c == "<" and not re.search(r"operator<?$", name[:i]):
                kept.append("<...>")
                level = 1
            else:
                kept.append(c)
        elif c == "<":
            level += 1
        elif c == ">":
            level -= 1
        i += 1
    out = "".join(kept)
    return out[:77] + "..." if len(out) > 80 else out


def _skipped(module, patterns):
    base = os.path.basename(module or "")
    return any(p.search(base) for p in patterns)


class AnyOf:
    """An expected value the spec lets be any one of several."""

    def __init__(self, options):
        self.options = [o for o in options]

    def ok(self, got):
        return any(_same(got, o) for o in self.options)

    def __repr__(self):
        return "any of %r" % (self.options,)


def _same(got, want):
    if isinstance(want, AnyOf):
        return want.ok(got)
    if isinstance(want, tuple):
        want = list(want)
    if isinstance(got, tuple):
        got = list(got)
    if isinstance(want, bool) or isinstance(got, bool):
        return got is want
    return got == want


# ---------------------------------------------------------------------------
# Reading a trace through the views


# ---------------------------------------------------------------------------
# Host samples (schema 7): what each is called, as docs/report.md spells it


def _base(path):
    return (path or "?").rsplit("/", 1)[-1]


def _read_samples(con):
    """[(tid, ns, text, class)] from host_samples, its innermost Python
    frame (else native frame) and state."""
    py = {}
    for sid, f, fn, line in con.execute("SELECT pystack_id, file, function, line FROM py_stack_frames "
                                        "WHERE depth = 0"):
        py[sid] = ("%s:%d in %s" % (_base(f), line, fn or "?")) if line is not None else \
            ("%s in %s" % (_base(f), fn or "?"))
    nat, rows = {}, defaultdict(list)
    for sid, depth, fn, mod, f, line in con.execute("SELECT stack_id, depth, function, module, file, line "
                                                    "FROM stack_frames ORDER BY stack_id, depth"):
        rows[sid].append((fn, mod, f, line))

    def named(fr):
        fn, mod, f, line = fr
        return ("%s:%d in %s" % (_base(f), line, fn or "?")) if f and line is not None else \
            "%s (%s)" % (fn or "?", _base(mod))
    system = ("/lib/", "/lib64/", "/usr/lib/", "/usr/lib64/")
    headers = ("/usr/include/", "/usr/lib/")
    for sid, frames in rows.items():
        # the innermost frame outside the system's libraries and headers
        # (inlined from them: std::this_thread::sleep_for), else the innermost
        own = [fr for fr in frames if fr[1] and not fr[1].startswith(system)
               and not (fr[2] or "").startswith(headers)]
        nat[sid] = named(own[0] if own else frames[0])
    io = {"read", "write", "pread64", "pwrite64", "readv", "writev", "poll", "ppoll", "select", "pselect6",
          "epoll_wait", "epoll_pwait", "epoll_pwait2", "accept", "accept4", "recvfrom", "recvmsg", "recvmmsg",
          "sendto", "sendmsg", "sendmmsg", "fsync", "fdatasync", "openat", "io_uring_enter"}
    out = []
    for tid, ns, state, sc, psid, sid in con.execute("SELECT tid, ns, state, syscall, pystack_id, stack_id "
                                                     "FROM host_samples"):
        where = py.get(psid) or nat.get(sid) or "(no stack)"
        if state == "running":
            text, cls = where + " (running)", "running Python" if psid in py else "running native code"
        elif state == "syscall":
            text = "%s (blocked in %s)" % (where, sc)
            cls = ("blocked in I/O" if sc in io else "sleeping" if sc in ("nanosleep", "clock_nanosleep", "pause") or sc.endswith(" (no fds)")
                   else "waiting on a lock" if sc == "futex" else "in a system call")
        else:
            text, cls = where + " (waiting)", "waiting"
        out.append((tid, ns, text, cls))
    return out


def _read_samples_db(path):
    con = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
    try:
        return _read_samples(con)
    finally:
        con.close()


class HostOf(AnyOf):
    """A gap's expected "host": the launching thread (any of tied calls),
    its samples in the gap, the top three stacks by count with their
    shares, and the class over half of them show."""

    def __init__(self, tids, samples, trace=None, gap=None):
        self.tids, self.samples = tids, samples  # tids: {tid: [(text, cls)]}
        self.trace, self.gap = trace, gap

    def ok(self, got):
        if not isinstance(got, dict) or set(got) != {"tid", "samples", "state", "stacks", "waited",
                                                     "others_samples", "others"}:
            return False
        if got["tid"] not in self.tids:
            return False
        smp = self.tids[got["tid"]]
        if got["samples"] != len(smp):
            return False
        counts = defaultdict(int)
        cls = defaultdict(int)
        for text, c in smp:
            counts[text] += 1
            cls[c] += 1
        state = [c for c, n in cls.items() if 2 * n > len(smp)]
        if got["state"] != (state[0] if state else None):
            return False
        stacks = got["stacks"]
        if len(stacks) != min(3, len(counts)):
            return False
        shown = set()
        for st in stacks:
            t = st.get("stack")
            if t not in counts or t in shown or abs(st.get("pct", -1) - 100.0 * counts[t] / len(smp)) > 5.1e-7:
                return False
            shown.add(t)
        least = min((counts[t] for t in shown), default=0)
        if not all(n <= least for t, n in counts.items() if t not in shown):
            return False
        # the threads that ran while it waited (oracle_threads.py)
        g = self.gap
        t = self.trace
        return oracle_threads.others_ok(got, t.samples if t else [], smp, g.start if g else 0, g.end if g else 0,
                                        t.driver_tids if t else (), g.cause if g else None)

    def __repr__(self):
        return "host among %r" % ({t: len(v) for t, v in self.tids.items()},)


def _host_of_gap(trace, g):
    if trace.version < 7 or not trace.samples:
        return None
    work = [c for c in trace.calls.values()
            if c.category in ("launch", "memcpy", "memset", "graph_launch") and g.start <= c.start <= g.end]
    if not work:
        return HostOf({None: []}, None, trace, g)
    last = max(c.start for c in work)
    tids = {}
    for c in work:
        if c.start == last:
            tids[c.tid] = [(t, k) for tid, ns, t, k in trace.samples if tid == c.tid and g.start <= ns <= g.end]
    return HostOf(tids, None, trace, g)


class Trace:
    def __init__(self, path, window=None):
        self.path = path
        self.window = window
        con = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
        self.con = con
        self.version = con.execute("PRAGMA user_version").fetchone()[0]
        self.meta = dict(con.execute("SELECT key, value FROM meta"))
        self.pid = int(self.meta.get("pid", 0))
        self.host = self.meta.get("host")
        self.complete = self.meta.get("complete") == "1"
        self.gpu_times = self.meta.get("gpu_timing") == "cupti"
        cols = {r[1] for r in con.execute("PRAGMA table_info(api_calls)")}
        opt = ", ".join(c if c in cols else "NULL" for c in ("pystack_id", "captured", "error"))  # Q15
        self.calls = {}
        for row in con.execute("SELECT id, tid, name, category, start_ns, end_ns, result, stack_id, %s "
                               "FROM api_calls" % opt):
            c = Call(*row)
            if c.error is None and c.result != 0:
                c.error = old_error_name(c.name, c.result)  # Q15
            self.calls[c.id] = c
        self.ops = self._ops()
        if window is not None:
            # docs/report.md, Windows: the calls that start in [a, b), the
            # GPU work they made, and the work of no recorded call that
            # starts in it
            recorded = set(self.calls)
            self.calls = {k: c for k, c in self.calls.items() if in_window(window, c.start)}
            self.ops = [o for o in self.ops if (o.call_id in self.calls) or
                        (o.call_id not in recorded and in_window(window, o.start))]
        # a launch call's kernel name (its row of kernels, with or without GPU times)
        if self.version >= 5:
            q = "SELECT api_call_id, name FROM kernels WHERE via = 'launch'"
        else:
            q = "SELECT api_call_id, name FROM kernels"
        self.launch_name = dict(con.execute(q))
        self.copy_args = {r[0]: r[1:] for r in con.execute("SELECT call_id, kind, host_mem, async FROM copy_args")}
        self.sync_kind = dict(con.execute("SELECT api_call_id, kind FROM syncs"))
        self.sync_polls = dict(con.execute("SELECT call_id, polls FROM sync_args WHERE polls IS NOT NULL")) \
            if self.version >= 8 else {}
        # memcpys rows of copy calls (not graph launches' copies)
        via = "AND via = 'memcpy'" if self.version >= 5 else ""
        self.copy_rows = defaultdict(list)
        for cid, nbytes, host_mem, ts, s, e in con.execute(
                "SELECT api_call_id, bytes, host_mem, time_source, start_ns, end_ns FROM memcpys "
                "WHERE api_call_id IS NOT NULL %s" % via):
            self.copy_rows[cid].append((nbytes, host_mem, ts, e - s))
        # mapped (zero-copy) host memory allocated or registered: count, bytes
        row = con.execute("SELECT value FROM meta WHERE key = 'tracer_startup_ns'").fetchone()
        self.startup_ns = int(row[0]) if row and row[0] and int(row[0]) > 0 else 0
        self.mapped = con.execute("SELECT count(*), COALESCE(sum(a.bytes), 0) FROM allocations a "
                                  "JOIN api_calls c ON c.id = a.api_call_id "
                                  "WHERE a.kind = 'mapped' AND a.result = 0 AND c.category = 'alloc'").fetchone()
        # module loads that compiled PTX (no module_args before version 8)
        self.module_jit = set()
        if con.execute("SELECT count(*) FROM sqlite_master WHERE type = 'view' AND name = 'module_args'").fetchone()[0]:
            self.module_jit = {r[0] for r in con.execute("SELECT call_id FROM module_args WHERE jit = 1")}
        # the work CUDA Graphs ran, each operation with the node it ran as (no
        # graph_nodes view in traces written before graph nodes were recorded)
        self.graph_work = []
        if con.execute("SELECT count(*) FROM sqlite_master WHERE type = 'view' AND name = 'graph_nodes'").fetchone()[0]:
            self.graph_work = con.execute(
                "SELECT n.node_id, n.kind, o.name, n.stack_id, n.pystack_id, o.api_call_id, o.end_ns - o.start_ns "
                "FROM (SELECT graph_node_id, name, api_call_id, start_ns, end_ns FROM kernels "
                "      WHERE graph_node_id IS NOT NULL UNION ALL "
                "      SELECT graph_node_id, NULL, api_call_id, start_ns, end_ns FROM memcpys "
                "      WHERE graph_node_id IS NOT NULL UNION ALL "
                "      SELECT graph_node_id, NULL, api_call_id, start_ns, end_ns FROM memsets "
                "      WHERE graph_node_id IS NOT NULL) o "
                "JOIN graph_nodes n ON n.node_id = o.graph_node_id").fetchall()
            # every node whose work no graph launch ran (host, empty and
            # memory nodes, graphs never launched) is shown too: no launch, no runs
            ran = set(r[0] for r in self.graph_work)
            self.graph_work += [(nid, kind, name, sid, psid, None, None) for nid, kind, name, sid, psid in con.execute(
                "SELECT node_id, kind, kernel_name, stack_id, pystack_id FROM graph_nodes") if nid not in ran]
        self.sites = Sites(con, self.version)
        self.samples = _read_samples(con) if self.version >= 7 else []
        self.driver_tids = oracle_threads.driver_tids(con) if self.samples else set()
        con.close()

    def _ops(self):
        con = self.con
        ops = []
        if self.version >= 5:
            cond = ("time_source = 'gpu'" if self.gpu_times else
                    "time_source = 'host' AND result = 0 AND captured = 0")
            # Q12: without GPU times there is no CUPTI stream: the call's stream handle stands in
            # (NULL, a call that names none, as 0, the legacy stream's handle)
            st = "gpu_stream" if self.gpu_times else "COALESCE(stream, 0)"
            q = ("SELECT 'kernel', api_call_id, via, device, {s}, start_ns, end_ns, name, NULL, NULL "
                 "FROM kernels WHERE {c} UNION ALL "
                 "SELECT 'memcpy', api_call_id, via, device, {s}, start_ns, end_ns, NULL, bytes, kind "
                 "FROM memcpys WHERE {c} UNION ALL "
                 "SELECT 'memset', api_call_id, via, device, {s}, start_ns, end_ns, NULL, bytes, 'memset' "
                 "FROM memsets WHERE {c}").format(c=cond, s=st)
            for row in con.execute(q):
                ops.append(Op(*row))
            return ops
        # Q15: before version 5, GPU work is gpu_activity's
        if self.gpu_times:
            for kind, cid, dev, st, s, e, name, nbytes, ck in con.execute(
                    "SELECT kind, api_call_id, device, stream, start_ns, end_ns, name, bytes, copy_kind "
                    "FROM gpu_activity"):
                via = None
                if cid is not None and cid in self.calls:
                    cat = self.calls[cid].category
                    via = "graph" if cat == "graph_launch" else cat
                ops.append(Op(kind, cid, via, dev, st, s, e, name, nbytes, "memset" if kind == "memset" else ck))
            return ops
        host = "time_source = 'host' AND result = 0 AND captured = 0"
        for row in con.execute(
                "SELECT 'kernel', api_call_id, 'launch', device, COALESCE(stream, 0), start_ns, end_ns, name, "
                "NULL, NULL FROM kernels WHERE {h} UNION ALL "
                "SELECT 'memcpy', api_call_id, 'memcpy', device, COALESCE(stream, 0), start_ns, end_ns, NULL, "
                "bytes, kind FROM memcpys WHERE {h} UNION ALL "
                "SELECT 'memset', api_call_id, 'memset', device, COALESCE(stream, 0), start_ns, end_ns, NULL, "
                "bytes, 'memset' FROM memsets WHERE {h}".format(h=host)):
            ops.append(Op(*row))
        return ops


def old_error_name(api, result):
    """NVIDIA's name for a result of a trace from before version 5 (no
    `error` column), from the CUDA headers as the build reads them
    (scripts/gen_error_names.py, through tests/make_trace.py): the driver's
    for cu* entry points, the runtime's for the others."""
    sys.path.insert(0, HERE)
    import make_trace
    lib = make_trace.lib_of(api)
    try:
        return make_trace.result_names().get((lib, result), "error %d" % result)
    except Exception:  # no CUDA headers here
        return "error %d" % result


class Call:
    __slots__ = ("id", "tid", "name", "category", "start", "end", "result", "stack_id", "pystack_id", "captured",
                 "error")

    def __init__(self, id, tid, name, category, start, end, result, stack_id, pystack_id, captured, error):
        self.id, self.tid, self.name, self.category = id, tid, name, category
        self.start, self.end, self.result = start, end, result
        self.stack_id, self.pystack_id, self.captured, self.error = stack_id, pystack_id, captured or 0, error

    @property
    def dur(self):
        return self.end - self.start


class Op:
    __slots__ = ("kind", "call_id", "via", "device", "stream", "start", "end", "name", "bytes", "copy_kind")

    def __init__(self, kind, call_id, via, device, stream, start, end, name, nbytes, copy_kind):
        self.kind, self.call_id, self.via, self.device, self.stream = kind, call_id, via, device, stream
        self.start, self.end, self.name, self.bytes, self.copy_kind = start, end, name, nbytes, copy_kind

    @property
    def dur(self):
        return self.end - self.start


class Sites:
    """Call-site text (docs/report.md, "Call sites")."""

    def __init__(self, con, version):
        self.version = version
        self.native = defaultdict(list)
        lines = "file, line" if version >= 6 else "NULL, NULL"  # source lines since version 6
        for sid, _depth, module, offset, function, file, line in con.execute(
                "SELECT stack_id, depth, module, offset, function, %s FROM stack_frames "
                "ORDER BY stack_id, depth" % lines):
            self.native[sid].append((module, offset, function, file, line))
        self.py = defaultdict(list)
        if con.execute("SELECT count(*) FROM sqlite_master WHERE name = 'py_stack_frames'").fetchone()[0]:
            for pid, _depth, file, function, line in con.execute(
                    "SELECT pystack_id, depth, file, function, line FROM py_stack_frames ORDER BY pystack_id, depth"):
                self.py[pid].append((file, function, line))
        # the kernels' names, which nvcc's host wrappers have too
        names = {r[0] for r in con.execute("SELECT DISTINCT name FROM kernels") if r[0]}
        if con.execute("SELECT count(*) FROM sqlite_master WHERE name = 'graph_nodes'").fetchone()[0]:
            names |= {r[0] for r in con.execute("SELECT DISTINCT kernel_name FROM graph_nodes") if r[0]}
        forms = [self._kernel_forms(n) for n in names]
        self.kernel_full = {f for f, _ in forms if f is not None}
        self.kernel_bare = {b for _, b in forms}
        self.cache = {}
        # a process that ran Python: a site without Python frames says so
        self.python = bool(con.execute("SELECT count(*) FROM meta WHERE key = 'python' AND value != ''").fetchone()[0])

    def native_text(self, frame):
        module, offset, function, file, line = frame
        off = (offset or 0) - (1 if self.version < 5 else 0)  # the call instruction's (Q15 before v5)
        where = "%s+0x%x" % (os.path.basename(module) if module else "??", off)
        name = short_function(function) if function else ""
        if line is not None:  # read as Python frames are; Q18: no function -> module+0xOFF
            return "%s:%d in %s" % (os.path.basename(file or "?"), line, name or where)
        return "%s (%s)" % (name, where) if name else where  # Q10

    @staticmethod
    def _kernel_forms(name):
        """A name as a wrapper's and a kernel's compare (docs/report.md): no
        " [clone ...]", no leading "void "; with its parameter list (None
        when it has none) and without, unqualified."""
        name = name.split(" [clone ", 1)[0]
        if name.startswith("void "):
            name = name[5:]
        bare, full = name, None
        if name.endswith(")"):
            depth = 0
            for i in range(len(name) - 1, -1, -1):
                depth += {")": 1, "(": -1}.get(name[i], 0)
                if depth == 0:
                    bare, full = name[:i], name
                    break
        # unqualified: after the last :: outside <...> and (...)
        depth, cut = 0, 0
        for i, c in enumerate(bare):
            if c in "<(":
                depth += 1
            elif c in ">)" and depth:
                depth -= 1
            elif depth == 0 and bare.startswith("::", i):
                cut = i + 2
        return full, bare[cut:]

    def nvcc_plumbing(self, frames):
        """Which frames are nvcc's launch plumbing (docs/report.md), each by
        what it is (its function's name, its source file), not its place."""
        out = []
        for _module, _offset, function, file, _line in frames:
            fn = function or ""
            base = os.path.basename(file) if file else ""
            full, bare = self._kernel_forms(fn)
            wrapper = bool(fn) and (full in self.kernel_full if full is not None else bare in self.kernel_bare)
            runtime_template = re.match(r"^(?:.* )?cuda[A-Z]\w*<", fn) is not None and "(" not in fn.split("<")[0]
            out.append(fn.startswith("__device_stub__") or fn.startswith("__wrapper__device_stub_")
                       or fn.startswith("__cuda") or runtime_template or wrapper
                       or base in ("cuda_runtime.h", "device_functions.h") or base.endswith(".stub.c"))
        return out

    @staticmethod
    def py_text(frame):
        file, function, line = frame
        file = file or "?"
        if "site-packages/" in file:
            name = file.rsplit("site-packages/", 1)[1]
        else:
            name = os.path.basename(file)
        return "%s:%s in %s" % (name, "?" if line is None else line, function)  # Q10

    def site(self, stack_id, pystack_id):
        key = (stack_id, pystack_id)
        if key in self.cache:
            return self.cache[key]
        frames = self.native.get(stack_id, []) if stack_id is not None else []
        py = self.py.get(pystack_id, []) if pystack_id is not None else []
        if py:
            interp = next((i for i, f in enumerate(frames) if _skipped(f[0], [PYTHON])), len(frames))
            below = frames[:interp]
            nvcc = self.nvcc_plumbing(below)
            cands = [f for f, p in zip(below, nvcc) if not p and not _skipped(f[0], SKIP_UNDER_PY)
                     and not static_cudart(f)]
            native = []
            if cands:
                native.append(self.native_text(cands[0]))
                # the frame the interpreter called, when it is another one (and not ctypes, libffi, ...)
                if interp > 0 and below[-1] is not cands[0] and not nvcc[-1] \
                        and not _skipped(below[-1][0], SKIP_UNDER_PY) and not static_cudart(below[-1]):
                    native.append(self.native_text(below[-1]))
            # Q17: five frames in all, the Python frames taking what the native ones leave
            out = [self.py_text(f) for f in py[:5 - len(native)]] + native
        else:
            plumbing = self.nvcc_plumbing(frames)
            user = [f for f, p in zip(frames, plumbing)
                    if not p and not _skipped(f[0], SKIP_NATIVE) and not static_cudart(f)]
            if not user:  # no user frame: the innermost three other than nvcc's stand in (any three if none)
                user = [f for f, p in zip(frames, plumbing) if not p] or frames
            out = [self.native_text(f) for f in user[:3]]
            if out and self.python:
                out.append(NO_PYTHON)
        out = tuple(out)
        self.cache[key] = out
        return out


# ---------------------------------------------------------------------------
# Intervals


def union(intervals):
    """The union of [start, end) intervals: sorted, disjoint, non-empty (Q13)."""
    out = []
    for s, e in sorted((s, e) for s, e in intervals if e > s):
        if out and s <= out[-1][1]:
            if e > out[-1][1]:
                out[-1][1] = e
        else:
            out.append([s, e])
    return out


def length(iv):
    return sum(e - s for s, e in iv)


def intersect_len(a, b):
    i = j = total = 0
    while i < len(a) and j < len(b):
        lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if hi > lo:
            total += hi - lo
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return total


class Coverage:
    """Time calls of one category spent inside [a, b), summed over calls:
    F(b) - F(a), F(t) = sum over calls of clamp(t - start, 0, end - start)."""

    def __init__(self, calls):
        self.starts = sorted(c.start for c in calls)
        self.ends = sorted(c.end for c in calls)
        self.ps = [0]
        for v in self.starts:
            self.ps.append(self.ps[-1] + v)
        self.pe = [0]
        for v in self.ends:
            self.pe.append(self.pe[-1] + v)

    def F(self, t):
        i = bisect.bisect_right(self.starts, t)
        j = bisect.bisect_right(self.ends, t)
        return (i * t - self.ps[i]) - (j * t - self.pe[j])

    def within(self, a, b):
        return self.F(b) - self.F(a)


def nearest_rank(sorted_vals, p):
    n = len(sorted_vals)
    if not n:
        return 0
    k = max(1, -(-p * n // 100))
    return sorted_vals[k - 1]


def pct(a, b):
    return 100.0 * a / b if b else 0.0


# ---------------------------------------------------------------------------
# The figures of one process


def in_window(window, x):
    """window: sorted disjoint [a, b) intervals (docs/report.md, Windows)."""
    return any(a <= x < b for a, b in window)


def inside_window(window, x, y):
    return any(a <= x < b and y <= b for a, b in window)


def window_len(window, x, y):
    return sum(max(0, min(b, y) - max(a, x)) for a, b in window)


class Gap:
    __slots__ = ("start", "end", "kind", "cause", "before", "after", "device", "wdur", "wstart", "spent")

    def __init__(self, start, end, kind):
        self.start, self.end, self.kind = start, end, kind
        self.cause = None
        self.before = []  # ops that ended at the gap's start
        self.after = []   # ops that started at its end
        self.wdur = self.wstart = None  # a window's report: its time inside the window, where that starts
        self.spent = None  # (sites, apis) of the calls that spent it (call causes), computed once

    @property
    def dur(self):
        return self.end - self.start if self.wdur is None else self.wdur

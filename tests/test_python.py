"""Python call sites, on the simulated GPU, under every CPython from 3.10 on
that this machine has (at least the one running the tests).

Ground truth comes from the scripts themselves: a line ending in
'# @name' is where the test expects the call named `name`, so no line
number is written twice."""
import glob
import json
import os
import re
import subprocess
import sys

import gtlib
from gtlib import ROOT, assert_eq, prog, query, run_traced, tmpdir

PYDIR = os.path.join(ROOT, "tests", "progs", "py")
CUDA_HOME = os.environ.get("CUDA_HOME", "/usr/local/cuda")
FAKECUDA = os.path.join(ROOT, "build", "fakecuda")
GPUTRACE = os.path.join(ROOT, "build", "gputrace")

_PROBE = ("import sys, sysconfig; print(sys.version_info[0], sys.version_info[1], "
          "sysconfig.get_paths()['include'], int(hasattr(sys, 'gettotalrefcount')))")
_found = None


def _probe(exe):
    try:
        r = subprocess.run([exe, "-c", _PROBE], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if r.returncode != 0:
        return None
    major, minor, include, debug = r.stdout.split()
    return int(major), int(minor), include, debug == "1"


def interpreters(minors=range(10, 14)):
    """{minor: (executable, include dir)}: release builds, one per version."""
    global _found
    if _found is None:
        _found = {}
        cands = [os.path.realpath(sys.executable)]
        for pattern in ("~/.pyenv/versions/3.*/bin/python3.*", "/usr/bin/python3.*", "/usr/local/bin/python3.*"):
            cands += sorted(glob.glob(os.path.expanduser(pattern)))
        for exe in cands:
            if not re.search(r"python3\.\d+$", exe) or not os.access(exe, os.X_OK):
                continue
            info = _probe(exe)
            if not info or info[0] != 3 or info[3] or info[1] in _found:
                continue
            _found[info[1]] = (exe, info[2])
    out = {m: v for m, v in _found.items() if m in minors}
    return out


def supported():
    found = interpreters()
    here = sys.version_info[1]
    assert here in found or here not in range(10, 14), "the interpreter running the tests was not found"
    assert found, "no CPython 3.10-3.13 on this machine"
    return found


def build_ext(minor, include):
    """The gtcuda extension for one interpreter, built once."""
    out = os.path.join(ROOT, "build", "tests", "pyext", "3.%d" % minor)
    so = os.path.join(out, "gtcuda.so")
    src = os.path.join(PYDIR, "gtcuda.c")
    if os.path.exists(so) and os.path.getmtime(so) >= os.path.getmtime(src):
        return out
    os.makedirs(out, exist_ok=True)
    r = subprocess.run(["cc", "-shared", "-fPIC", "-O1", "-g", "-Wall", "-Werror", "-I" + include,
                        "-I" + os.path.join(CUDA_HOME, "include"), "-I" + os.path.join(ROOT, "tests", "fakecuda"),
                        "-o", so + ".tmp", src, "-L" + FAKECUDA, "-lcudart", "-Wl,-rpath," + FAKECUDA],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    os.replace(so + ".tmp", so)
    return out


def markers(script):
    lines = {}
    with open(os.path.join(PYDIR, script)) as f:
        for n, text in enumerate(f, 1):
            m = re.search(r"# @(\w+)\s*$", text)
            if m:
                lines[m.group(1)] = n
    return lines


def run_py(minor, script, *args, env=None, ext=True):
    exe, include = interpreters()[minor]
    e = {"PYTHONDONTWRITEBYTECODE": "1"}
    if ext:
        e["PYTHONPATH"] = build_ext(minor, include)
    e.update(env or {})
    run = run_traced([exe, os.path.join(PYDIR, script)] + [str(a) for a in args], env=e)
    assert run.proc.returncode == 0, (minor, run.proc.stderr)
    return run


def pystack(db, call_id):
    """[(file, function, line)] of a call, innermost first."""
    return [tuple(r) for r in query(db, "SELECT f.file, f.function, f.line FROM calls c "
                                        "JOIN py_stack_frames f ON f.pystack_id = c.pystack_id "
                                        "WHERE c.id = ? ORDER BY f.depth", call_id)]


def qualname(minor, cls, fn):
    """co_qualname (3.11+) names a method with its class; 3.10 has co_name."""
    return "%s.%s" % (cls, fn) if minor >= 11 else fn


def test_python_extension_releasing_the_gil():
    script = os.path.join(PYDIR, "ext_loop.py")
    m = markers("ext_loop.py")
    for minor in sorted(supported()):
        run = run_py(minor, "ext_loop.py", 5)
        db = run.trace
        assert_eq(query(db, "SELECT value FROM meta WHERE key = 'python'")[0][0], "3.%d" % minor)
        assert_eq(query(db, "SELECT count(*) FROM calls WHERE pystack_id IS NULL")[0][0], 0,
                  "3.%d: every call was made from Python" % minor)
        copies = query(db, "SELECT api_call_id FROM memcpys WHERE kind = 'HtoD' ORDER BY api_call_id")
        assert_eq(len(copies), 5)
        for (cid,) in copies:
            assert_eq(pystack(db, cid), [(script, "load_batch", m["copy"]), (script, "step", m["load_batch"]),
                                         (script, "main", m["step"]), (script, "<module>", m["main"])],
                      "3.%d copy" % minor)
        launches = query(db, "SELECT api_call_id FROM kernels WHERE name = 'train_step'")
        assert_eq(len(launches), 5)
        for (cid,) in launches:
            assert_eq(pystack(db, cid)[:2], [(script, "step", m["launch"]), (script, "main", m["step"])])
        syncs = query(db, "SELECT api_call_id FROM syncs ORDER BY api_call_id")
        assert_eq([pystack(db, c)[0] for (c,) in syncs],
                  [(script, "main", m["sync"]), (script, "main", m["sync_held"])], "3.%d syncs" % minor)
        # one stack stored per distinct path: 5 copies share theirs
        assert_eq(query(db, "SELECT count(DISTINCT pystack_id) FROM memcpys JOIN calls c ON c.id = api_call_id")[0][0],
                  1)
        # the report: Python frames first, then the extension's native frame
        r = subprocess.run([GPUTRACE, "report", "--format", "json", db], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        h2d = json.loads(r.stdout)["h2d_hotspots"]
        assert_eq(len(h2d), 1)
        site = h2d[0]["site"]
        assert_eq(site[:3], ["ext_loop.py:%d in load_batch" % m["copy"], "ext_loop.py:%d in step" % m["load_batch"],
                             "ext_loop.py:%d in main" % m["step"]])
        assert re.match(r"gtcuda\.c:\d+ in gtcuda_copy_h2d$", site[-1]), site  # built with -g: its line
        text = subprocess.run([GPUTRACE, "report", db], capture_output=True, text=True).stdout
        assert "at ext_loop.py:%d in load_batch\n" % m["copy"] in text, text
        info = json.loads(subprocess.run([GPUTRACE, "info", "--format", "json", db], capture_output=True,
                                         text=True).stdout)
        assert_eq((info["python"], info["python_calls"]), ("3.%d" % minor, info["api_calls"]))


def test_python_ctypes_cdll_and_pydll():
    script = os.path.join(PYDIR, "ctypes_calls.py")
    m = markers("ctypes_calls.py")
    rt = os.path.join(FAKECUDA, "libcudart.so.13")
    for minor in sorted(supported()):
        run = run_py(minor, "ctypes_calls.py", rt, ext=False)
        db = run.trace
        rows = query(db, "SELECT c.id, n.name, a.bytes FROM calls c JOIN api_names n ON n.id = c.api_id "
                         "LEFT JOIN copy_args a ON a.call_id = c.id ORDER BY c.start_ns")
        names = [r[1] for r in rows]
        assert_eq(names, ["cudaMalloc"] + ["cudaMemcpy"] * 4 + ["cudaDeviceSynchronize"], "3.%d" % minor)
        assert_eq(pystack(db, rows[0][0]), [(script, "<module>", m["malloc"])])
        for cid, _, nbytes in rows[1:4]:
            assert_eq(nbytes, 4096)
            assert_eq(pystack(db, cid), [(script, "with_cdll", m["cdll_copy"]),
                                         (script, "<module>", m["cdll_caller"])], "3.%d CDLL" % minor)
        assert_eq(rows[4][2], 2048)
        assert_eq(pystack(db, rows[4][0]), [(script, "with_pydll", m["pydll_copy"]),
                                            (script, "<module>", m["pydll_caller"])], "3.%d PyDLL" % minor)
        assert_eq(pystack(db, rows[5][0]), [(script, "<module>", m["pydll_sync"])])


def test_python_threads_generators_recursion():
    script = os.path.join(PYDIR, "shapes.py")
    m = markers("shapes.py")
    for minor in sorted(supported()):
        run = run_py(minor, "shapes.py", 40, env={"GPUTRACE_STACK_DEPTH": "16"})
        db = run.trace
        # the main thread makes the recursion's copy (its first CUDA call
        # may come after the workers')
        main_tid = query(db, "SELECT c.tid FROM copy_args a JOIN calls c ON c.id = a.call_id "
                             "WHERE a.bytes = 4000")[0][0]
        for nbytes, fn in ((1000, "worker_a"), (2000, "worker_b")):
            rows = query(db, "SELECT c.id, c.tid FROM copy_args a JOIN calls c ON c.id = a.call_id "
                             "WHERE a.bytes = ?", nbytes)
            assert_eq(len(rows), 40, "3.%d %s" % (minor, fn))
            tids = set(r[1] for r in rows)
            assert_eq(len(tids), 2, "two threads run %s" % fn)
            assert main_tid not in tids
            for cid, _ in rows:
                st = pystack(db, cid)
                assert_eq(st[0], (script, fn, m["thread_" + fn[-1]]), "3.%d thread" % minor)
                assert_eq(st[1][1], qualname(minor, "Thread", "run"))
        rows = query(db, "SELECT call_id FROM copy_args WHERE bytes = 3000")
        assert_eq(len(rows), 4)
        for (cid,) in rows:
            assert_eq(pystack(db, cid), [(script, "batches", m["gen_copy"]), (script, "consume", m["gen_consumer"]),
                                         (script, "<module>", m["consume"])], "3.%d generator" % minor)
        (cid,), = query(db, "SELECT call_id FROM copy_args WHERE bytes = 4000")
        st = pystack(db, cid)
        assert_eq(len(st), 16, "capped at GPUTRACE_STACK_DEPTH")
        assert_eq(st[0], (script, "recurse", m["rec_bottom"]))
        assert_eq(set(st[1:]), {(script, "recurse", m["rec_step"])})


def test_python_off_and_unknown_versions():
    m = markers("ext_loop.py")
    minor = max(supported())
    run = run_py(minor, "ext_loop.py", 2, env={"GPUTRACE_PYTHON": "0"})
    db = run.trace
    assert_eq(run.proc.stderr, "")
    assert_eq(query(db, "SELECT count(*) FROM calls WHERE pystack_id IS NOT NULL")[0][0], 0)
    assert_eq(query(db, "SELECT count(*) FROM py_stacks")[0][0], 0)
    assert_eq(query(db, "SELECT value FROM meta WHERE key = 'python'")[0][0], "")
    assert query(db, "SELECT count(*) FROM calls WHERE stack_id IS NOT NULL")[0][0] > 0, "native stacks stay"
    # a bad value: one warning, and the default (on)
    run = run_py(minor, "ext_loop.py", 1, env={"GPUTRACE_PYTHON": "yes"})
    assert_eq(run.proc.stderr, "gputrace: GPUTRACE_PYTHON='yes' is not 1 or 0; using 1\n")
    assert_eq(query(run.trace, "SELECT count(*) FROM calls WHERE pystack_id IS NULL")[0][0], 0)
    # stacks off: Python stacks too, silently
    run = run_py(minor, "ext_loop.py", 1, env={"GPUTRACE_STACK_DEPTH": "0"})
    assert_eq(run.proc.stderr, "")
    assert_eq(query(run.trace, "SELECT count(*) FROM calls WHERE pystack_id IS NOT NULL")[0][0], 0)
    del m
    # an interpreter without a layout here: one warning, native stacks only
    old = interpreters(minors=range(6, 10))
    if not old:
        print("  (no CPython before 3.10 here: the unknown-version path is untested)")
        return
    v = max(old)
    exe = old[v][0]
    rt = os.path.join(FAKECUDA, "libcudart.so.13")
    run = run_traced([exe, os.path.join(PYDIR, "ctypes_calls.py"), rt], env={"PYTHONDONTWRITEBYTECODE": "1"})
    assert_eq(run.proc.returncode, 0, run.proc.stderr)
    assert_eq(run.proc.stderr, "gputrace: Python call sites not recorded: Python 3.%d is not one this build knows "
                               "(3.10 to 3.13); native stacks only\n" % v)
    assert_eq(run.q1("SELECT count(*) FROM calls"), 6)
    assert_eq(run.q1("SELECT count(*) FROM calls WHERE pystack_id IS NOT NULL"), 0)


_LINES_DUMP = r"""
import importlib, sys, types
minor = sys.version_info[1]
def codes(co):
    yield co
    for c in co.co_consts:
        if isinstance(c, types.CodeType):
            yield from codes(c)
inp, exp = [], []
for name in ("argparse", "dis", "json.decoder", "threading", "asyncio.base_events"):
    path = importlib.import_module(name).__file__
    with open(path) as f:
        top = compile(f.read(), path, "exec")
    for co in codes(top):
        n = len(co.co_code) // 2
        want = [-1] * n
        for start, end, line in co.co_lines():
            for a in range(start // 2, min(end // 2, n)):
                want[a] = -1 if line is None else line
        inp.append("%d %d %s %s" % (minor, co.co_firstlineno, co.co_linetable.hex() or "-",
                                    " ".join(str(i) for i in range(n))))
        exp.append(" ".join(str(x) for x in want))
with open(sys.argv[1], "w") as f:
    f.write("\n".join(inp) + "\n")
with open(sys.argv[2], "w") as f:
    f.write("\n".join(exp) + "\n")
"""


def test_python_line_tables_match_the_interpreter():
    """Every instruction of five stdlib modules: the shim's decoder gives the
    line the interpreter's own co_lines() gives."""
    d = tmpdir()
    for minor, (exe, _) in sorted(supported().items()):
        inp, exp = os.path.join(d, "in-%d" % minor), os.path.join(d, "exp-%d" % minor)
        r = subprocess.run([exe, "-c", _LINES_DUMP, inp, exp], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        with open(inp) as f:
            r = subprocess.run([prog("py_lines")], stdin=f, capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        got = r.stdout.splitlines()
        with open(exp) as f:
            want = f.read().splitlines()
        assert_eq(len(got), len(want))
        assert len(want) > 300, len(want)
        bad = [(i, g, w) for i, (g, w) in enumerate(zip(got, want)) if g != w]
        assert not bad, "3.%d: %d of %d code objects differ, first: %r" % (minor, len(bad), len(want), bad[0])


def test_python_layouts_match_the_headers():
    """preload/hot/gt_py_layouts.h holds, for each version, what that
    interpreter's own headers say (scripts/py_layout.c prints the row)."""
    with open(os.path.join(ROOT, "preload", "hot", "gt_py_layouts.h")) as f:
        table = f.read()
    d = tmpdir()
    checked = 0
    for minor, (exe, include) in sorted(supported().items()):
        if not os.path.exists(os.path.join(include, "internal", "pycore_frame.h")) and minor >= 11:
            print("  (3.%d: no internal headers; layout row unchecked)" % minor)
            continue
        out = os.path.join(d, "layout-%d" % minor)
        r = subprocess.run(["cc", "-I" + include, "-o", out, os.path.join(ROOT, "scripts", "py_layout.c")],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        row = subprocess.run([out], capture_output=True, text=True).stdout
        assert row.strip() and row in table, "3.%d: %r not in gt_py_layouts.h" % (minor, row)
        checked += 1
    assert checked >= 1


def test_python_under_sanitized_shims():
    """The stack reader under ASan+UBSan and TSan: threads, a generator and
    recursion, each thread reading its own interpreter state."""
    minor = sys.version_info[1] if sys.version_info[1] in supported() else max(supported())
    exe, include = interpreters()[minor]
    for san in ("asan", "tsan"):
        run = run_traced([exe, os.path.join(PYDIR, "shapes.py"), "40"], sanitizer=san,
                         env={"PYTHONDONTWRITEBYTECODE": "1", "PYTHONPATH": build_ext(minor, include)})
        assert_eq(run.proc.returncode, 0, run.proc.stderr[-3000:])
        assert "Sanitizer" not in run.proc.stderr and "runtime error" not in run.proc.stderr, run.proc.stderr[-3000:]
        assert_eq(run.q1("SELECT count(*) FROM calls WHERE pystack_id IS NULL"), 0)
        assert_eq(run.q1("SELECT count(*) FROM copy_args WHERE bytes IN (1000, 2000, 3000, 4000)"), 85)


def test_report_sites_from_python_stacks():
    """A synthetic trace with known stacks: Python frames first (library
    files by their package path), then the framework's native frames between
    the interpreter and CUDA, the innermost and the one Python called."""
    import make_trace as mt
    d = tmpdir()
    native = [("/usr/lib/libcudart.so.13", "cudaMemcpy"),
              ("/env/lib/libc10_cuda.so", "c10::cuda::memcpy_and_sync"),
              ("/env/lib/libtorch_cuda.so", "at::native::copy_kernel_cuda"),
              ("/env/lib/libtorch_python.so", "THPVariable_copy_"),
              ("/usr/lib/libpython3.12.so.1.0", "_PyEval_EvalFrameDefault"),
              ("/usr/bin/python3.12", "main")]
    py = [("/env/lib/python3.12/site-packages/torch/utils/data.py", "fetch", 57),
          ("/home/u/train.py", "load_batch", 12), ("/home/u/train.py", "<module>", 30)]
    via_ctypes = [("/usr/lib/libcudart.so.13", "cudaDeviceSynchronize"),
                  ("/usr/lib/x86_64-linux-gnu/libffi.so.8", "ffi_call_unix64"),
                  ("/usr/lib/python3.12/lib-dynload/_ctypes.cpython-312-x86_64-linux-gnu.so", "_ctypes_callproc"),
                  ("/usr/lib/libpython3.12.so.1.0", "_PyObject_MakeTpCall")]
    calls = [mt.memcpy("HtoD", 1 << 20, stack=native, pystack=py) for _ in range(3)]
    calls += [mt.sync("device", stack=via_ctypes, pystack=[("/home/u/train.py", "<module>", 31)])]
    path = mt.make_trace(os.path.join(d, "py.db"), calls=calls)
    r = subprocess.run([GPUTRACE, "report", "--format", "json", path], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    j = json.loads(r.stdout)
    h2d = j["h2d_hotspots"]
    assert_eq(len(h2d), 1)
    assert_eq(h2d[0]["count"], 3)
    assert_eq([re.sub(r"\+0x[0-9a-f]+", "", f) for f in h2d[0]["site"]],
              ["torch/utils/data.py:57 in fetch", "train.py:12 in load_batch", "train.py:30 in <module>",
               "c10::cuda::memcpy_and_sync (libc10_cuda.so)", "THPVariable_copy_ (libtorch_python.so)"])
    syncs = [s for s in j["syncs"] if s["kind"] == "device"]
    assert_eq(syncs[0]["site"], ["train.py:31 in <module>"])
    text = subprocess.run([GPUTRACE, "report", path], capture_output=True, text=True).stdout
    assert "    at torch/utils/data.py:57 in fetch\n    < train.py:12 in load_batch\n" in text, text


def test_version_1_traces_still_read():
    """A trace written before Python stacks existed (schema version 1) reads
    in info, report and audit, and is left untouched."""
    import hashlib
    import make_trace as mt
    d = tmpdir()
    v1 = os.path.join(ROOT, "tests", "data", "gputrace-v1.sql")
    path = mt.make_trace(os.path.join(d, "v1.db"), schema=v1,
                         calls=[mt.launch("k", stack=[("/bin/app", "main")]), mt.memcpy("HtoD", 4096),
                                mt.sync("device")])
    assert_eq(query(path, "PRAGMA user_version")[0][0], 1)
    before = hashlib.sha256(open(path, "rb").read()).hexdigest()
    r = subprocess.run([GPUTRACE, "info", "--format", "json", path], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert_eq(json.loads(r.stdout)["schema_version"], 1)
    r = subprocess.run([GPUTRACE, "report", "--format", "json", path], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert_eq(json.loads(r.stdout)["h2d_hotspots"][0]["bytes"], 4096)
    r = subprocess.run([GPUTRACE, "audit", "--max-pageable-h2d-bytes", "4096", path], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert_eq(hashlib.sha256(open(path, "rb").read()).hexdigest(), before)


def test_python_fork_worker():
    """A forked worker (DataLoader's way) traces into its own file, with its
    own Python stacks; so does the parent."""
    script = os.path.join(PYDIR, "fork_worker.py")
    m = markers("fork_worker.py")
    minor = sys.version_info[1] if sys.version_info[1] in supported() else max(supported())
    exe, include = interpreters()[minor]
    run = run_traced([exe, script], env={"PYTHONDONTWRITEBYTECODE": "1", "PYTHONPATH": build_ext(minor, include)})
    assert_eq(run.proc.returncode, 0, run.proc.stderr)
    assert_eq(len(run.traces), 2, run.traces)
    seen = {}
    for db in run.traces:
        (cid, nbytes), = query(db, "SELECT call_id, bytes FROM copy_args")
        seen[nbytes] = pystack(db, cid)
    assert_eq(seen[111], [(script, "worker", m["child_copy"]), (script, "<module>", m["child_call"])])
    assert_eq(seen[222], [(script, "parent", m["parent_copy"]), (script, "<module>", m["parent_call"])])

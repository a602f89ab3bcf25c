"""Helpers for the tests of real CUDA clients from PyPI (CuPy, the nvtx
package), run by the venv's python (build/pyenv, scripts/setup-python.sh)
on the simulated GPU, traced and untraced.

The ground truth each test holds the trace to comes from outside it: the
client's own log of what it asked the GPU for (its stdout, one line per
piece of work and per sync), the '# @name' markers of its source (the line
each operation is made from), and the simulator's log of every piece of
work its GPU ran (FAKECUDA_LOG)."""
import collections
import os
import re

import gtlib
import oracle
from gtlib import ROOT, assert_eq, run_traced, tmpdir

PYDIR = os.path.join(ROOT, "tests", "progs", "py")


def markers(script):
    """{name: line} of the script's '# @name' markers."""
    return gtlib.marker_lines(os.path.join(PYDIR, script))


def _shim():
    kind = os.environ.get("GPUTRACE_TEST_SANITIZER")
    return gtlib.SANITIZED[kind][0] if kind else gtlib.SHIM


def run_client(script, args=(), env=None, traced=True):
    """Runs tests/progs/py/SCRIPT under the venv's python on the simulated
    GPU (LD_LIBRARY_PATH=build/fakecuda, as run_traced sets it), with the
    simulator's log in a fresh file. Returns (Run, log records)."""
    python = gtlib.pyenv_python()
    assert os.access(python, os.X_OK), "%s is missing: run scripts/setup-python.sh (make test does)" % python
    d = tmpdir()
    log = os.path.join(d, "fakecuda.log")
    e = {"FAKECUDA_LOG": log, "PYTHONDONTWRITEBYTECODE": "1"}
    if traced:
        e["NVTX_INJECTION64_PATH"] = _shim()  # as gputrace record sets it
    e.update(env or {})
    run = run_traced([python, os.path.join(PYDIR, script)] + [str(a) for a in args], env=e, preload=traced,
                     timeout=300)
    return run, read_log(log)


Rec = collections.namedtuple("Rec", "kind name stream start end bytes corr copy src dst grid block")


def read_log(path):
    """The simulator's records (tests/fakecuda/README.md, FAKECUDA_LOG)."""
    if not os.path.exists(path):
        return []
    out = []
    with open(path) as f:
        for line in f:
            w = line.split()
            out.append(Rec(w[0], None if w[1] == "-" else w[1], int(w[2]), int(w[3]), int(w[4]), int(w[5]),
                           int(w[6]), w[9], w[10], w[11], w[12], w[13]))
    return out


def program_log(stdout, prefix):
    """The client's own log: its lines, each split into words, without the
    prefix."""
    return [line[len(prefix):].split() for line in stdout.splitlines() if line.startswith(prefix)]


def work(recs):
    """What the GPU was given, whatever its times: a Counter of records."""
    return collections.Counter((r.kind, r.name, r.bytes, r.copy, r.src, r.dst, r.grid, r.block) for r in recs)


def check_same_both_ways(script, args, env=None):
    """Untraced and traced runs print the same, exit alike and give the
    simulated GPU the same work; returns the traced (Run, log records)."""
    plain, plain_recs = run_client(script, args, env=env, traced=False)
    assert_eq(plain.proc.returncode, 0, plain.proc.stderr[-3000:])
    run, recs = run_client(script, args, env=env)
    assert_eq((run.proc.returncode, run.proc.stdout), (plain.proc.returncode, plain.proc.stdout),
              "traced against untraced (stderr: %s)" % run.proc.stderr[-3000:])
    assert_eq(work(recs), work(plain_recs), "the GPU's work traced against untraced")
    return run, recs


def check_gpu_records(run, recs):
    """Every kernel, copy and memset the simulated GPU ran is in the trace
    once, with its times, stream, bytes, direction and memory, linked to the
    call that made it; and a sync call in the trace per sync the GPU saw."""
    work = sorted((r.kind, r.name, r.stream, r.start, r.end, r.bytes if r.kind != "kernel" else None,
                   r.copy if r.kind == "memcpy" else None, r.src if r.kind == "memcpy" else None,
                   r.dst if r.kind == "memcpy" else None) for r in recs if r.kind != "sync")
    # a kernel by its symbol, as the simulator names it (the views demangle)
    got = sorted(run.q("SELECT a.kind, COALESCE(k.mangled_name, a.name), a.stream, a.start_ns, a.end_ns, a.bytes, "
                       "a.copy_kind, a.src_kind, a.dst_kind FROM gpu_activity a LEFT JOIN kernels k "
                       "ON a.kind = 'kernel' AND k.api_call_id = a.api_call_id AND k.start_ns = a.start_ns"))
    assert_eq(got, work, "the trace's GPU work against the simulator's log")
    assert_eq(run.q("SELECT count(*) FROM gpu_activity WHERE linked = 0 OR api_call_id IS NULL"), [(0,)],
              "GPU work without its call")
    # each kernel row's shape, against the simulator's
    shapes = sorted((r.name, r.start, r.grid, r.block) for r in recs if r.kind == "kernel")
    got = sorted((n, s, "%d,%d,%d" % (gx, gy, gz), "%d,%d,%d" % (bx, by, bz)) for n, s, gx, gy, gz, bx, by, bz in
                 run.q("SELECT mangled_name, start_ns, grid_x, grid_y, grid_z, block_x, block_y, block_z "
                       "FROM kernels"))
    assert_eq(got, shapes, "kernels' grid and block")
    syncs = sum(1 for r in recs if r.kind == "sync")
    # polls (cudaEventQuery, cudaStreamQuery: CuPy's pinned memory pool asks
    # whether a buffer's copy has ended) wait for nothing: the GPU keeps no
    # sync record of them, as CUPTI keeps none
    assert_eq(run.q1("SELECT count(*) FROM syncs WHERE kind NOT IN ('event_query', 'stream_query')"), syncs,
              "sync calls against the GPU's sync records")


def user_line(run, script, pystack_id):
    """The line of the innermost frame of SCRIPT in a Python stack."""
    rows = run.q("SELECT file, line FROM py_stack_frames WHERE pystack_id = ? ORDER BY depth", pystack_id)
    for f, line in rows:
        if os.path.basename(f) == script:
            return line
    return None


def ops_by_line(run, script):
    """Counter of (what, line of the script that made it): each GPU
    operation (kind, name, bytes, direction, host memory) and each sync
    (kind), by the line of the script its call was made from."""
    out = collections.Counter()
    for kind, name, nbytes, copy, src, dst, pys in run.q(
            "SELECT a.kind, a.name, a.bytes, a.copy_kind, a.src_kind, a.dst_kind, c.pystack_id "
            "FROM gpu_activity a JOIN api_calls c ON c.id = a.api_call_id"):
        line = user_line(run, script, pys)
        if kind == "kernel":
            out[(("kernel", name), line)] += 1
        elif kind == "memset":
            out[(("memset", nbytes), line)] += 1
        else:
            mem = src if copy == "HtoD" else dst
            out[(("copy", copy, nbytes, mem), line)] += 1
    for kind, pys in run.q("SELECT s.kind, c.pystack_id FROM syncs s JOIN api_calls c ON c.id = s.api_call_id "
                           "WHERE s.kind NOT IN ('event_query', 'stream_query')"):
        out[(("sync", kind), user_line(run, script, pys))] += 1
    return out


def poll_lines(run, script):
    """The lines of the script that polls (cudaEventQuery, cudaStreamQuery:
    the library's own, never in the program's log) were made from."""
    return {user_line(run, script, pys) for (pys,) in run.q(
        "SELECT c.pystack_id FROM syncs s JOIN api_calls c ON c.id = s.api_call_id "
        "WHERE s.kind IN ('event_query', 'stream_query')")}


def report(run):
    """The JSON report, after tests/oracle.py has recomputed every figure
    of it (phases and steps included) by SQL over the trace's views."""
    rc, doc, err = oracle.run_report([run.trace])
    assert_eq((rc, err), (0, ""))
    errs = oracle.check([run.trace], doc)
    assert not errs, "\n".join(errs[:20])
    return doc


def sites(doc):
    """Every call site the JSON report prints: (where, [frame, ...])."""
    out = []

    def walk(o, where):
        if isinstance(o, dict):
            for k, v in o.items():
                if k == "site" and isinstance(v, list):
                    out.append((where, v))
                else:
                    walk(v, where + "." + k)
        elif isinstance(o, list):
            for v in o:
                walk(v, where + "[]")
    walk(doc, "")
    return out


def check_sites(doc, script, lines):
    """Each site the report prints that holds Python frames names the
    user's own line first among the script's frames, and that line is one
    that makes CUDA calls (one of `lines`); frames before it may only be
    an installed package's (`cupy/...py`), never another file of the user."""
    seen = 0
    for where, frames in sites(doc):
        py = [f for f in frames if re.match(r"^\S+\.py:(\d+|\?) in ", f)]
        if not py:
            continue
        first = next((i for i, f in enumerate(py) if f.startswith(script + ":")), None)
        assert first is not None, (where, frames)
        assert all("/" in f.split(":")[0] for f in py[:first]), (where, frames)
        line = int(re.match(r"^\S+:(\d+) in ", py[first]).group(1))
        assert line in lines, (where, frames, sorted(lines))
        seen += 1
    assert seen > 0, "no site with Python frames"
    return seen

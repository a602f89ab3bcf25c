"""The analyzer's memory does not grow with the calls (issue 34,
docs/performance.md "The analyzer's memory"): what needs every call or GPU
operation in an order goes through sorts and logs that spill to temporary
files past a fixed size, and the figures come out the same whether they
spill or not."""
import os
import resource
import sys

import gtlib
from gtlib import assert_eq, tmpdir

sys.path.insert(0, os.path.join(gtlib.ROOT, "bench"))
import big_trace  # noqa: E402

GT = os.path.join(gtlib.BUILD, "gputrace")


def peak_run(argv, env=None):
    """(exit status, stdout bytes, peak resident MiB) of gputrace argv, run
    in a child of its own so ru_maxrss is its alone."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        os.dup2(w, 1)
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, 2)
        os.execve(GT, [GT] + list(argv), env if env is not None else os.environ)
    os.close(w)
    chunks = []
    while True:
        b = os.read(r, 1 << 16)
        if not b:
            break
        chunks.append(b)
    os.close(r)
    _, status, usage = os.wait4(pid, 0)
    return os.waitstatus_to_exitcode(status), b"".join(chunks), usage.ru_maxrss / 1024


def test_analyzer_memory_flat():
    """report and summarize on a 3M-call trace (bench/big_trace.py's
    shape: 2.85M GPU operations, 2.7M launches) stay under 112 MiB of
    peak resident memory. Before, report held every operation (32 bytes),
    every launch's host time (8 bytes) and every call's span (about 9
    bytes): 141 MiB at 3M calls, 186 MiB at 4M, 453 MiB at 10M; now the
    sorts and the span log hold at most 60 MiB between them, whatever the
    length (77 MiB peak at 4M and at 10M calls)."""
    db = big_trace.make(os.path.join(tmpdir(), "big.db"), 3000000)
    status, out, mib = peak_run(["report", "-q", db])
    assert_eq(status, 0)
    assert b"kernels ran" in out, out[:400]
    assert mib < 112, "report: peak resident %.0f MiB on 3M calls" % mib
    summary = os.path.join(tmpdir(), "s.summary.json")
    status, _, mib = peak_run(["summarize", "-o", summary, db])
    assert_eq(status, 0)
    assert mib < 112, "summarize: peak resident %.0f MiB on 3M calls" % mib


def test_analyzer_spilled_same():
    """The same report, byte for byte, when every sort and the span log
    spill to disk every few records (GPUTRACE_SORT_MEM=640: 16 records a
    run) as when they fit in memory: text, JSON, a window, diff and a
    rank summary, on a trace with a gap every 1,000 calls and kernels of
    64 grid sizes (medians and percentiles over many runs)."""
    db = big_trace.make(os.path.join(tmpdir(), "big.db"), 60000)
    other = os.path.join(tmpdir(), "other.db")
    os.link(db, other)
    spill = dict(os.environ, GPUTRACE_SORT_MEM="640")
    for argv in (["report", "-q", db], ["report", "-q", "--format", "json", "--min-gap", "20us", db],
                 ["report", "-q", "--top", "0", "--from", "+10ms", "--to", "+40ms", db],
                 ["diff", "--format", "json", db, other], ["summarize", "-o", "-", db]):
        a = peak_run(argv)
        b = peak_run(argv, spill)
        assert_eq(a[0], 0, argv)
        assert_eq(b[:2], a[:2], argv)


def test_analyzer_spill_unwritable():
    """A sort whose temporary file cannot be made (TMPDIR gone, or a full
    disk) ends report with status 1 and one line saying where, not a
    report with figures missing."""
    import subprocess
    db = big_trace.make(os.path.join(tmpdir(), "big.db"), 20000)
    env = dict(os.environ, GPUTRACE_SORT_MEM="640", TMPDIR=os.path.join(tmpdir(), "gone", "tmp"))
    r = subprocess.run([GT, "report", "-q", db], capture_output=True, env=env, timeout=120)
    assert_eq(r.returncode, 1, r.stderr)
    lines = r.stderr.decode().splitlines()
    assert_eq(len(lines), 1, lines)
    assert lines[0].startswith("gputrace: a temporary file in ") and "gone/tmp" in lines[0], lines

"""`gputrace audit`: budgets checked against synthetic traces whose numbers
are exact (tests/make_trace.py) and against real traced runs of
build/tests/progs/timing on the simulated GPU."""
import hashlib
import os
import re
import sqlite3
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gtlib  # noqa: E402
import make_trace as mt  # noqa: E402

GPUTRACE = gtlib.GPUTRACE
MS = 1_000_000
T0 = mt.START_NS

def tmpdir():
    return gtlib.tmpdir("gputrace-audit-")


def audit(*args, cwd=None):
    return subprocess.run([GPUTRACE, "audit"] + list(args), capture_output=True, text=True, timeout=60, cwd=cwd)


def fingerprint(path):
    st = os.stat(path)
    with open(path, "rb") as f:
        return (st.st_mtime_ns, st.st_size, hashlib.sha256(f.read()).hexdigest())


def lines(r):
    return r.stdout.splitlines()


def budget_file(text, d=None):
    path = os.path.join(d or tmpdir(), "budgets.txt")
    with open(path, "w") as f:
        f.write(text)
    return path


def stack(fn, module="/app/train"):
    return [(module, fn), (module, "main")]


# ---- synthetic traces with exact numbers ------------------------------------

PAGEABLE = 3 * 1048576 + 5 + 4096   # what pageable_trace copies from pageable memory


def pageable_trace(d=None):
    calls = [
        mt.memcpy("HtoD", 3 * 1048576 + 5, host_mem="pageable", stack=stack("load_batch")),
        mt.memcpy("HtoD", 4096, host_mem="pageable", stack=stack("load_labels")),
        mt.memcpy("HtoD", 1 << 30, host_mem="pinned", is_async=True, stack=stack("load_pinned")),
        mt.memcpy("DtoH", 1 << 20, host_mem="pageable", stack=stack("fetch")),   # not H2D
        mt.launch("k"),
    ]
    return mt.make_trace(os.path.join(d or tmpdir(), "pageable.db"), calls=calls)


def idle_trace(d=None):
    """Host-side times only: the GPU is busy during the two launch calls,
    [0, 10 ms) and [40, 50 ms): 30 of 50 ms idle, 60%."""
    calls = [
        mt.launch("k", start_ns=T0, end_ns=T0 + 10 * MS, stack=stack("step")),
        mt.launch("k", start_ns=T0 + 40 * MS, end_ns=T0 + 50 * MS, stack=stack("after_load")),
    ]
    return mt.make_trace(os.path.join(d or tmpdir(), "idle.db"), calls=calls)


def sync_trace(d=None):
    """40 ms span; 30 ms blocked in one device sync and 2 ms in a
    synchronous DtoH copy: 32 of 40 ms, 80%."""
    calls = [
        mt.launch("k", start_ns=T0, end_ns=T0 + 1 * MS),
        mt.sync("device", start_ns=T0 + 1 * MS, end_ns=T0 + 31 * MS, stack=stack("wait_all")),
        mt.memcpy("DtoH", 4096, start_ns=T0 + 31 * MS, end_ns=T0 + 33 * MS, stack=stack("fetch")),
        mt.launch("k", start_ns=T0 + 33 * MS, end_ns=T0 + 40 * MS),
    ]
    return mt.make_trace(os.path.join(d or tmpdir(), "sync.db"), calls=calls)


def add_gpu_kernels(path, durations):
    """Gives the trace GPU-side kernel times, as CUPTI would: launch call i
    (in call order) ran durations[i] ns on the GPU, starting at its call's end."""
    db = sqlite3.connect(path)
    launches = db.execute("SELECT c.id, c.end_ns FROM calls c JOIN launch_args l ON l.call_id = c.id "
                          "ORDER BY c.id").fetchall()
    assert len(launches) == len(durations)
    for (cid, end), dur in zip(launches, durations):
        mt.add_gpu_op(db, "kernel", cid, end, end + dur, stream=7)
    db.execute("INSERT OR REPLACE INTO meta VALUES ('gpu_timing', 'cupti')")
    db.commit()
    db.close()
    return path


def launch_bound_trace(d=None):
    """Launch calls take 500 ns (mt.CALL_NS), each kernel starting as its
    call returns on a drained stream: of four 100 ns kernels from small_step
    the last three are launch-bound (a kernel's first launch never is, as
    it often loads the module); one 1 ms kernel from big_step is not: 3 of
    5, 60%."""
    calls = [mt.launch("small", stack=stack("small_step")) for _ in range(4)]
    calls.append(mt.launch("big", stack=stack("big_step")))
    path = mt.make_trace(os.path.join(d or tmpdir(), "lb.db"), calls=calls)
    return add_gpu_kernels(path, [100, 100, 100, 100, MS])


# ---- each budget, passing and failing ---------------------------------------

def test_audit_pageable_exact():
    path = pageable_trace()
    r = audit("--max-pageable-h2d-bytes", str(PAGEABLE), path)
    assert r.returncode == 0, r
    assert lines(r) == ["ok   max-pageable-h2d-bytes: %d B (3.0 MiB) <= %d B (3.0 MiB)" % (PAGEABLE, PAGEABLE)], r
    r = audit("--max-pageable-h2d-bytes", str(PAGEABLE - 1), path)
    assert r.returncode == 1, r
    (line,) = lines(r)
    assert line.startswith("FAIL max-pageable-h2d-bytes: %d B (3.0 MiB) > %d B (3.0 MiB)" % (PAGEABLE, PAGEABLE - 1)), line
    assert line.endswith("(worst: load_batch (train+0x10), 3.0 MiB pageable in 1 copy)"), line
    # suffixes are binary
    r = audit("--max-pageable-h2d-bytes=3M", path)
    assert r.returncode == 1 and "> 3145728 B (3.0 MiB)" in r.stdout, r
    r = audit("--max-pageable-h2d-bytes", "4MiB", path)
    assert r.returncode == 0 and "<= 4194304 B (4.0 MiB)" in r.stdout, r
    r = audit("--max-pageable-h2d-bytes", "1G", path)
    assert r.returncode == 0 and "<= 1073741824 B (1.0 GiB)" in r.stdout, r
    r = audit("--max-pageable-h2d-bytes", "3K", path)
    assert r.returncode == 1 and "> 3072 B (3.0 KiB)" in r.stdout, r


def test_audit_pageable_none():
    path = mt.make_trace(os.path.join(tmpdir(), "t.db"),
                         calls=[mt.memcpy("HtoD", 1 << 20, host_mem="pinned"), mt.launch("k")])
    r = audit("--max-pageable-h2d-bytes", "0", path)
    assert r.returncode == 0 and lines(r) == ["ok   max-pageable-h2d-bytes: 0 B <= 0 B"], r


def test_audit_idle_exact():
    path = idle_trace()
    r = audit("--max-idle-pct", "60", path)
    assert r.returncode == 0 and lines(r) == ["ok   max-idle-pct: 60.0% <= 60%"], r
    # the trace has no GPU times: said on stderr, not in the verdict lines
    assert "no GPU-side times" in r.stderr, r.stderr
    r = audit("--max-idle-pct", "20", path)
    assert r.returncode == 1, r
    assert lines(r) == ["FAIL max-idle-pct: 60.0% > 20% (worst: after_load (train+0x30), 30.00 ms idle "
                        "before its GPU work, host outside CUDA)"], r
    r = audit("--max-idle-pct", "59.95", path)
    assert r.returncode == 1 and "FAIL max-idle-pct: 60.0% > 59.95%" in r.stdout, r
    # no gap as long as --min-gap: no site to blame, still a failure
    r = audit("--max-idle-pct", "20", "--min-gap", "31ms", path)
    assert r.returncode == 1, r
    assert lines(r) == ["FAIL max-idle-pct: 60.0% > 20% (no single idle gap of 31.00 ms or more)"], r


def test_audit_percent_shown_precisely_enough():
    """The printed value agrees with the verdict: a value just over its
    limit never prints as equal to it. 501 of 2500 ns idle: 20.04%."""
    path = mt.make_trace(os.path.join(tmpdir(), "t.db"), calls=[
        mt.launch("k", start_ns=T0, end_ns=T0 + 999),
        mt.launch("k", start_ns=T0 + 1500, end_ns=T0 + 2500)])
    r = audit("--max-idle-pct", "20", path)
    assert r.returncode == 1, r
    assert lines(r)[0].startswith("FAIL max-idle-pct: 20.04% > 20% "), r
    r = audit("--max-idle-pct", "20.1", path)
    assert r.returncode == 0 and lines(r) == ["ok   max-idle-pct: 20.0% <= 20.1%"], r
    r = audit("--max-idle-pct", "0", "--min-gap", "0", path)
    assert r.returncode == 1, r
    assert lines(r)[0].startswith("FAIL max-idle-pct: 20.0% > 0% (worst: (no stack), 501 ns idle before its GPU work"), r


def test_audit_sync_exact():
    path = sync_trace()
    r = audit("--max-sync-pct", "80", path)
    assert r.returncode == 0 and lines(r) == ["ok   max-sync-pct: 80.0% <= 80%"], r
    r = audit("--max-sync-pct", "10", path)
    assert r.returncode == 1, r
    assert lines(r) == ["FAIL max-sync-pct: 80.0% > 10% (worst: wait_all (train+0x10), 30.00 ms blocked "
                        "in 1 device sync)"], r


def test_audit_launch_bound_exact():
    path = launch_bound_trace()
    r = audit("--max-launch-bound-pct", "60", path)
    assert r.returncode == 0 and lines(r) == ["ok   max-launch-bound-pct: 60.0% <= 60%"], r
    assert r.stderr == "", r.stderr
    r = audit("--max-launch-bound-pct", "50%", path)
    assert r.returncode == 1, r
    assert lines(r) == ["FAIL max-launch-bound-pct: 60.0% > 50% (worst: small_step (train+0x10), 3 of 4 "
                        "launches launch-bound)"], r


def test_audit_launch_bound_needs_gpu_times():
    path = mt.make_trace(os.path.join(tmpdir(), "t.db"), calls=[mt.launch("k")] * 3)
    r = audit("--max-launch-bound-pct", "50", path)
    assert r.returncode == 2, r
    assert "max-launch-bound-pct needs GPU-side kernel times" in r.stderr, r.stderr
    # the other budgets are still checked and printed
    r = audit("--max-launch-bound-pct", "50", "--max-sync-pct", "10", path)
    assert r.returncode == 2 and lines(r) == ["ok   max-sync-pct: 0.0% <= 10%"], r


def test_audit_only_given_budgets_in_order():
    path = pageable_trace()
    r = audit("--max-sync-pct", "100", "--max-idle-pct", "100", path)
    assert r.returncode == 0, r
    assert [l.split()[1] for l in lines(r)] == ["max-idle-pct:", "max-sync-pct:"], r


def test_audit_all_budgets_mixed():
    path = sync_trace()
    r = audit("--max-idle-pct", "100", "--max-pageable-h2d-bytes", "0", "--max-sync-pct", "50", path)
    assert r.returncode == 1, r
    out = lines(r)
    assert len(out) == 3, out
    assert out[0].startswith("ok   max-idle-pct: ") and out[1].startswith("ok   max-pageable-h2d-bytes: 0 B")
    assert out[2].startswith("FAIL max-sync-pct: 80.0% > 50%"), out


# ---- budget files -----------------------------------------------------------

def test_audit_budget_file():
    d = tmpdir()
    path = sync_trace(d)
    good = budget_file("# CI budgets\n\nmax-sync-pct = 90   # generous\n"
                       "max-pageable-h2d-bytes = 1 MiB\n", d)
    r = audit("--budget", good, path)
    assert r.returncode == 0, r
    assert lines(r) == ["ok   max-pageable-h2d-bytes: 0 B <= 1048576 B (1.0 MiB)",
                        "ok   max-sync-pct: 80.0% <= 90%"], r
    # the command line overrides the file, whatever the order
    for args in (["--budget", good, "--max-sync-pct", "50"], ["--max-sync-pct=50", "--budget=" + good]):
        r = audit(*(args + [path]))
        assert r.returncode == 1, (args, r)
        assert "FAIL max-sync-pct: 80.0% > 50%" in r.stdout and "max-pageable-h2d-bytes" in r.stdout, r


def _bad_budget(text, message):
    d = tmpdir()
    path = sync_trace(d)
    bf = budget_file(text, d)
    r = audit("--budget", bf, path)
    assert r.returncode == 2, (text, r)
    assert r.stdout == "", r.stdout
    assert r.stderr.startswith("gputrace: " + bf), r.stderr
    assert message in r.stderr, (message, r.stderr)


def test_audit_budget_file_errors():
    _bad_budget("max-sync-pct = 10\n# ok\nmax-idle = 5\n",
                ":3: unknown budget 'max-idle' (known: max-idle-pct, max-pageable-h2d-bytes, "
                "max-launch-bound-pct, max-sync-pct, max-step-p99, max-straggler-wait-pct, max-rank-skew-pct)")
    _bad_budget("max-sync-pct = ten\n", ":1: max-sync-pct: 'ten' is not a percent")
    _bad_budget("max-sync-pct = 150\n", ":1: max-sync-pct: '150' is not a percent")
    _bad_budget("max-pageable-h2d-bytes = 1.5G\n", ":1: max-pageable-h2d-bytes: '1.5G' is not a byte count")
    _bad_budget("max-sync-pct 10\n", ":1: expected 'KEY = VALUE'")
    _bad_budget("max-sync-pct = 10\nmax-sync-pct = 20\n", ":2: max-sync-pct is already set on line 1")
    _bad_budget("--max-sync-pct = 10\n", "unknown budget '--max-sync-pct'")


def test_audit_budget_file_missing_or_empty():
    d = tmpdir()
    path = sync_trace(d)
    r = audit("--budget", os.path.join(d, "nope.txt"), path)
    assert r.returncode == 2 and "nope.txt: No such file or directory" in r.stderr, r
    # a file with only comments sets no budget: a usage error
    r = audit("--budget", budget_file("# nothing yet\n", d), path)
    assert r.returncode == 2 and "no budget given" in r.stderr, r


# ---- usage errors and unusable traces ---------------------------------------

def test_audit_usage_errors():
    path = sync_trace()
    for args in ([path], [], ["--max-sync-pct", "10"], ["--max-sync-pct"], ["--max-sync-pct", "x", path],
                 ["--max-sync-pct", "-1", path], ["--max-sync-pct", "101", path],
                 ["--max-pageable-h2d-bytes", "lots", path], ["--max-pageable-h2d-bytes", "10KB", path],
                 ["--bogus", path], ["--max-sync-pct", "10", "--min-gap", "soon", path],
                 ["--budget"], ["--max-sync", "10", path]):
        r = audit(*args)
        assert r.returncode == 2, (args, r)
        assert r.stdout == "", (args, r.stdout)
        assert r.stderr.startswith("gputrace: "), (args, r.stderr)
    assert "no budget given" in audit(path).stderr
    assert "not a percent" in audit("--max-sync-pct", "x", path).stderr
    assert "not a byte count" in audit("--max-pageable-h2d-bytes", "lots", path).stderr


def _unusable(path, message):
    r = audit("--max-sync-pct", "100", path)
    assert r.returncode == 2, (path, r)
    assert r.stdout == "", r.stdout
    assert r.stderr.startswith("gputrace: %s: " % path), r.stderr
    assert message in r.stderr, (message, r.stderr)


def test_audit_unusable_traces():
    d = tmpdir()
    _unusable(os.path.join(d, "missing.db"), "no such file")
    rnd = os.path.join(d, "random.db")
    with open(rnd, "wb") as f:
        f.write(os.urandom(4096))
    _unusable(rnd, "not an SQLite database")
    foreign = os.path.join(d, "foreign.db")
    db = sqlite3.connect(foreign)
    db.execute("CREATE TABLE people(name TEXT)")
    db.commit()
    db.close()
    _unusable(foreign, "not a gputrace trace")
    _unusable(mt.make_trace(os.path.join(d, "future.db"), calls=[mt.launch("k")], user_version=99),
              "schema version 99 is newer than this gputrace supports")
    _unusable(mt.make_trace(os.path.join(d, "empty.db")), "the trace holds no CUDA calls; there is nothing to audit")
    crashed = mt.make_trace(os.path.join(d, "crashed.db"), calls=[mt.launch("k")] * 3, complete=False)
    _unusable(crashed, "the traced process did not finish; audit needs a complete trace")
    wal = mt.make_crashed_trace(os.path.join(d, "wal.db"), calls=[mt.launch("k")] * 3)
    _unusable(wal, "the traced process did not finish; audit needs a complete trace")


def test_audit_several_traces():
    d = tmpdir()
    a, b = sync_trace(d), pageable_trace(d)
    r = audit("--max-sync-pct", "50", "--max-pageable-h2d-bytes", "1M", a, b)
    assert r.returncode == 1, r
    out = lines(r)
    assert len(out) == 4, out
    assert out[0].startswith(a + ": ok   max-pageable-h2d-bytes: 0 B"), out
    assert out[1].startswith(a + ": FAIL max-sync-pct: 80.0% > 50%"), out
    assert out[2].startswith(b + ": FAIL max-pageable-h2d-bytes: %d B" % PAGEABLE), out
    assert out[3].startswith(b + ": ok   max-sync-pct: "), out
    r = audit("--max-sync-pct", "100", a, b)
    assert r.returncode == 0 and len(lines(r)) == 2, r
    # an unusable trace makes it 2, and the others are still checked
    r = audit("--max-sync-pct", "50", a, os.path.join(d, "missing.db"), b)
    assert r.returncode == 2, r
    assert len(lines(r)) == 2 and "missing.db" in r.stderr, r


def test_audit_read_only():
    d = tmpdir()
    paths = [idle_trace(d), sync_trace(d), pageable_trace(d), launch_bound_trace(d)]
    for p in paths:
        os.utime(p, ns=(1_600_000_000_000_000_000, 1_600_000_000_000_000_000))
    before = {p: fingerprint(p) for p in paths}
    listing = sorted(os.listdir(d))
    args = ["--max-idle-pct", "1", "--max-sync-pct", "1", "--max-pageable-h2d-bytes", "0"]
    r = audit(*(args + paths))
    assert r.returncode == 1, r
    r = audit("--max-launch-bound-pct", "1", paths[3])
    assert r.returncode == 1, r
    assert {p: fingerprint(p) for p in paths} == before
    assert sorted(os.listdir(d)) == listing
    # read-only files and a read-only directory are fine
    for p in paths:
        os.chmod(p, 0o444)
    os.chmod(d, 0o555)
    try:
        r = audit("--max-sync-pct", "100", *paths)
        assert r.returncode == 0, r
    finally:
        os.chmod(d, 0o755)
    assert {p: fingerprint(p) for p in paths} == before
    # a crashed trace's write-ahead log is not folded in either
    wal = mt.make_crashed_trace(os.path.join(d, "wal.db"), calls=[mt.launch("k")] * 3)
    wb = (fingerprint(wal), fingerprint(wal + "-wal"))
    assert audit("--max-sync-pct", "100", wal).returncode == 2
    assert (fingerprint(wal), fingerprint(wal + "-wal")) == wb


def test_audit_help():
    a = subprocess.run([GPUTRACE, "help", "audit"], capture_output=True, text=True)
    b = audit("--help")
    assert a.returncode == 0 and b.returncode == 0 and a.stdout == b.stdout, (a, b)
    assert a.stdout.startswith("usage: gputrace audit"), a.stdout
    for s in ("--max-idle-pct", "--max-pageable-h2d-bytes", "--max-launch-bound-pct", "--max-sync-pct",
              "--budget FILE", "--min-gap", "KiB", "'#'", "max-idle-pct = 20", "exit status: 0", " 1 ", " 2 "):
        assert s in a.stdout, s
    for line in a.stdout.splitlines():
        assert len(line) <= 80, line
    top = subprocess.run([GPUTRACE, "--help"], capture_output=True, text=True).stdout
    assert re.search(r"^  audit ", top, re.M), top


# ---- real traced runs on the simulated GPU ----------------------------------

def _timing_run(env, nbytes=1 << 20):
    run = gtlib.run_traced([gtlib.prog("timing"), str(nbytes)], env=env)
    assert run.proc.returncode == 0, run.proc.stderr
    return run.trace


def test_audit_real_run_timing():
    """A 60 ms kernel, a device sync that waits for it, and one pageable
    and one pinned 1 MiB copy. (The kernel is long enough that the sync is
    most of the run whatever the allocations and the pageable copy's
    memmove cost a busy machine.)"""
    path = _timing_run({"FAKECUDA_KERNEL_NS": "1000,timed_kernel=60000000"})
    r = audit("--max-pageable-h2d-bytes", "1MiB", "--max-launch-bound-pct", "0", "--max-idle-pct", "50", path)
    assert r.returncode == 0, r
    out = lines(r)
    assert out[1] == "ok   max-pageable-h2d-bytes: 1048576 B (1.0 MiB) <= 1048576 B (1.0 MiB)", out
    assert out[2] == "ok   max-launch-bound-pct: 0.0% <= 0%", out
    m = re.match(r"ok   max-idle-pct: (\d+\.\d+)% <= 50%$", out[0])
    assert m and float(m.group(1)) < 50, out
    r = audit("--max-pageable-h2d-bytes", "1048575", "--max-sync-pct", "50", path)
    assert r.returncode == 1, r
    out = lines(r)
    assert re.match(r"FAIL max-pageable-h2d-bytes: 1048576 B \(1\.0 MiB\) > 1048575 B \(1024\.0 KiB\) "
                    r"\(worst: timing\.c:\d+ in main, 1\.0 MiB pageable in 1 copy\)$", out[0]), out
    m = re.match(r"FAIL max-sync-pct: (\d+\.\d+)% > 50% \(worst: timing\.c:\d+ in main, "
                 r"(\d+\.\d+) ms blocked in 1 device sync\)$", out[1])
    assert m, out
    # the blocked time is the sync call's, from the trace: it waited from
    # its start until the 60 ms kernel ended
    (start, end, k_end), = gtlib.query(path, "SELECT c.start_ns, c.end_ns, k.end_ns FROM api_calls c, kernels k "
                                             "WHERE c.name = 'cudaDeviceSynchronize' AND k.mangled_name = "
                                             "'timed_kernel' ORDER BY c.start_ns LIMIT 1")
    assert start < k_end <= end, (start, k_end, end)
    assert_eq = gtlib.assert_eq
    assert_eq(m.group(2), "%.2f" % ((end - start) / 1e6), "the sync's blocked time")
    # the percent, from the public views as docs/audit.md defines it: the
    # device syncs and the async pageable copy, over the span from the first
    # call or GPU operation to the last (most of it the sync, whatever the
    # machine's load adds around it)
    (blocked,), = gtlib.query(path, "SELECT (SELECT sum(end_ns - start_ns) FROM api_calls WHERE name = "
                                    "'cudaDeviceSynchronize') + (SELECT sum(api_end_ns - api_start_ns) FROM memcpys "
                                    "WHERE host_mem = 'pageable' AND async = 1)")
    (span,), = gtlib.query(path, "SELECT max(e) - min(s) FROM (SELECT start_ns s, end_ns e FROM api_calls UNION ALL "
                                 "SELECT start_ns, end_ns FROM gpu_activity)")
    assert_eq(m.group(1), "%.1f" % (100.0 * blocked / span), "sync percent")
    assert 50 < float(m.group(1)) <= 100, out


def test_audit_real_run_launch_bound():
    """20 ms launch calls for a 1 us kernel: the GPU idles while the host
    launches (longer than any other gap, even on a machine whose page faults
    make the copies slow), and the worst gap is blamed on the launch whose
    kernel ended it. The program's one launch is its kernel's first, which
    is never counted launch-bound (docs/report.md)."""
    path = _timing_run({"FAKECUDA_KERNEL_NS": "1000", "FAKECUDA_LAUNCH_NS": "20000000"})
    r = audit("--max-launch-bound-pct", "50", "--max-idle-pct", "50", path)
    assert r.returncode == 1, r
    out = lines(r)
    m = re.match(r"FAIL max-idle-pct: (\d+\.\d+)% > 50% \(worst: timing\.c:\d+ in main, "
                 r"(\d+\.\d+) ms idle before its GPU work, host busy launching\)$", out[0])
    assert m and float(m.group(1)) > 50 and float(m.group(2)) >= 20, out
    assert out[1] == "ok   max-launch-bound-pct: 0.0% <= 50%", out

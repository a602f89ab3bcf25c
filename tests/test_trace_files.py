"""Trace files: nothing lost, nothing mixed (issue 31, items 8, 10, 14).
Each trace file has one writer and is replaced only when asked; a killed
process's trace reads wherever it lies; a bad output location is refused
before the program starts."""
import os
import shutil
import sqlite3
import subprocess

import gtlib
import make_trace as mt
from gtlib import GPUTRACE, SHIM, assert_eq, base_env, prog, query, tmpdir

NOBODY = 65534


def _as_reader():
    """Another user than the directory's owner: root ignores permissions."""
    if os.geteuid() == 0:
        os.setgid(NOBODY)
        os.setgroups([])
        os.setuid(NOBODY)


def _info(path, reader=False):
    return subprocess.run([GPUTRACE, "info", path], capture_output=True, text=True, timeout=60,
                          preexec_fn=_as_reader if reader else None)


def _crashed(d, calls=4):
    path = mt.make_crashed_trace(os.path.join(d, "t.db"), calls=[mt.launch("k")] * calls + [mt.sync("device")])
    assert os.path.getsize(path + "-wal") > 0
    return path


def _read_only(d):
    for f in os.listdir(d):
        os.chmod(os.path.join(d, f), 0o644)
    os.chmod(d, 0o555)


def _row(text, label):
    for line in text.splitlines():
        if line.startswith(label):
            return int(line[len(label):].split()[0])
    raise AssertionError("no %r in %s" % (label, text))


def test_killed_trace_reads_from_a_read_only_directory():
    """Its commits are in PATH-wal, which SQLite reads only through a
    PATH-shm it can make: from a directory the reader cannot write, the
    trace is read from a private copy, every commit included."""
    for keep_shm in (False, True):
        d = tmpdir()
        path = _crashed(d)
        if not keep_shm:
            os.unlink(path + "-shm")  # copied along without it
        elif os.geteuid() == 0:
            os.chmod(path + "-shm", 0o600)  # the dead writer's, not ours to read
        _read_only(d)
        if keep_shm:
            os.chmod(path + "-shm", 0o600)
        before = sorted(os.listdir(d))
        r = _info(path, reader=True)
        assert_eq(r.returncode, 0, r.stderr)
        assert_eq((_row(r.stdout, "kernel launches"), _row(r.stdout, "syncs")), (4, 1), r.stdout)
        assert "did not finish" in r.stdout, r.stdout
        assert "not a gputrace trace" not in r.stderr, r.stderr
        assert_eq(sorted(os.listdir(d)), before)
        os.chmod(d, 0o755)


def test_killed_trace_without_its_wal_says_where_the_data_is():
    d = tmpdir()
    path = _crashed(d)
    os.unlink(path + "-wal")
    os.unlink(path + "-shm")
    r = _info(path)
    assert_eq(r.returncode, 2, r)
    assert_eq(r.stdout, "")
    lines = r.stderr.splitlines()
    assert_eq(len(lines), 1, lines)
    assert "not a gputrace trace" not in lines[0], lines
    assert path + "-wal" in lines[0] and "not beside it" in lines[0], lines
    # nothing made up beside it: no empty log for the next reader to trust
    assert_eq(sorted(os.listdir(d)), ["t.db"])
    # part of it folded into the main file (a checkpoint), the rest lost
    # with the log: what the main file holds, and a warning
    d = tmpdir()
    path = _crashed(d)
    con = sqlite3.connect(path)
    con.execute("PRAGMA wal_checkpoint(PASSIVE)")
    os.unlink(path + "-wal")
    os.unlink(path + "-shm")
    r = _info(path)
    con.close()
    assert_eq(r.returncode, 0, r.stderr)
    assert "write-ahead log %s-wal is missing" % path in r.stderr, r.stderr
    assert "write-ahead log not read" in r.stdout, r.stdout
    assert_eq(_row(r.stdout, "kernel launches"), 4)


def _kernels(db):
    return query(db, "SELECT count(*) FROM kernels")[0][0]


def _meta(db, key):
    r = query(db, "SELECT value FROM meta WHERE key = ?", key)
    return r[0][0] if r else None


def test_processes_given_one_name_each_write_their_own_file():
    """Six processes started at once with one -o name: six files, each with
    its own process's calls and meta, none shared or replaced; each process
    that did not get the name says which file is its in one line."""
    d = tmpdir()
    out = os.path.join(d, "t.db")
    env = base_env({"GPUTRACE_OUTPUT": out, "FAKECUDA_LAUNCH_NS": "20000", "LD_PRELOAD": SHIM})
    procs = [subprocess.Popen([prog("threads"), "1", "3000"], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(6)]
    res = [p.communicate(timeout=120) + (p.returncode, p.pid) for p in procs]
    names = sorted(f for f in os.listdir(d) if f.endswith(".db"))
    assert_eq(names, sorted(["t.db"] + ["t.%d.db" % k for k in range(2, 7)]))
    by_pid = {int(_meta(os.path.join(d, n), "pid")): n for n in names}
    assert_eq(sorted(by_pid), sorted(pid for _, _, _, pid in res))
    for stdout, stderr, rc, pid in res:
        assert_eq((rc, stdout), (0, "threads: 3000 launches\n"), stderr)
        mine = os.path.join(d, by_pid[pid])
        assert_eq((_kernels(mine), _meta(mine, "complete")), (3000, "1"), mine)
        lines = stderr.splitlines()
        if by_pid[pid] == "t.db":
            assert_eq(lines, [])
        else:
            assert_eq(len(lines), 1, lines)
            assert lines[0].endswith("this process writes %s" % mine) or \
                lines[0].startswith("gputrace: %s exists; this process writes %s " % (out, mine)), lines


def test_fork_children_under_one_name_write_their_own_files():
    """A name without %p: each forked child that uses CUDA writes beside the
    parent's trace, which keeps the parent's calls."""
    d = tmpdir()
    out = os.path.join(d, "t.db")
    env = base_env({"GPUTRACE_OUTPUT": out, "LD_PRELOAD": SHIM})
    p = subprocess.run([prog("endings"), "children", "30"], env=env, capture_output=True, text=True, timeout=120,
                       preexec_fn=gtlib.default_signals)
    assert_eq(p.returncode, 0, p.stderr)
    names = sorted(f for f in os.listdir(d) if f.endswith(".db"))
    assert_eq(len(names), 7, names)
    assert_eq(int(_meta(out, "pid")), min(int(_meta(os.path.join(d, n), "pid")) for n in names))
    assert_eq(dict(query(out, "SELECT name, count(*) FROM kernels GROUP BY name")),
              {"ending_kernel": 30, "parent_after": 1})
    for n in names:
        assert_eq(_meta(os.path.join(d, n), "complete"), "1")
        if n != "t.db":
            assert_eq(dict(query(os.path.join(d, n), "SELECT name, count(*) FROM kernels GROUP BY name")),
                      {"child": 30})


def _fingerprint(path):
    with open(path, "rb") as f:
        return f.read()


def test_record_keeps_an_existing_trace_unless_forced():
    d = tmpdir()
    out = os.path.join(d, "t.db")
    env = base_env()
    r = subprocess.run([GPUTRACE, "record", "-q", "-o", out, prog("drv_basic")], env=env, capture_output=True,
                       text=True, timeout=120)
    assert_eq(r.returncode, 0, r.stderr)
    before = _fingerprint(out)
    r = subprocess.run([GPUTRACE, "record", "-o", out, prog("rt_basic")], env=env, capture_output=True,
                       text=True, timeout=120)
    assert_eq((r.returncode, r.stdout), (2, ""), "refused before the command ran")
    assert_eq(r.stderr, "gputrace: record: %s exists; --force replaces it (or give -o another name)\n" % out)
    assert_eq(_fingerprint(out), before)
    r = subprocess.run([GPUTRACE, "record", "-q", "--force", "-o", out, prog("rt_basic")], env=env,
                       capture_output=True, text=True, timeout=120)
    assert_eq((r.returncode, r.stderr), (0, ""))
    assert_eq(_kernels(out), 4)
    assert_eq(query(out, "SELECT count(*) FROM kernels WHERE name = 'drv_kernel'")[0][0], 0)
    assert_eq(sorted(os.listdir(d)), ["t.db"])


def test_record_refuses_an_unwritable_output_before_starting():
    d = tmpdir()
    with open(os.path.join(d, "file"), "w") as f:
        f.write("x")
    env = base_env()
    for out, why in (("/nonexistent-dir/sub/t.db", "No such file or directory"),
                     ("/proc/t.db", ""),
                     (os.path.join(d, "file", "t.db"), "is not a directory"),
                     ("/nonexistent-dir/t-%p.db", "No such file or directory")):
        r = subprocess.run([GPUTRACE, "record", "-o", out, prog("rt_basic")], env=env, capture_output=True,
                           text=True, timeout=120)
        assert_eq((r.returncode, r.stdout), (2, ""), (out, r.stderr))
        lines = r.stderr.splitlines()
        assert_eq(len(lines), 1, lines)
        assert lines[0].startswith("gputrace: record: cannot write the trace ") and why in lines[0], lines
    # a directory named by the process itself (%p) is the process's to find
    # missing: its one line, and nothing false after it
    r = subprocess.run([GPUTRACE, "record", "-o", "/nonexistent-dir/%p/t.db", prog("rt_basic")], env=env,
                       capture_output=True, text=True, timeout=120)
    assert_eq((r.returncode, r.stdout), (0, "rt_basic: round trip ok\n"), r.stderr)
    lines = r.stderr.splitlines()
    assert_eq(len(lines), 1, lines)
    assert "not tracing this process" in lines[0], lines
    # the shim alone: one line
    env = base_env({"GPUTRACE_OUTPUT": "/nonexistent-dir/t.db", "LD_PRELOAD": SHIM})
    p = subprocess.run([prog("rt_basic")], env=env, capture_output=True, text=True, timeout=120)
    assert_eq((p.returncode, p.stdout), (0, "rt_basic: round trip ok\n"))
    assert_eq(len(p.stderr.splitlines()), 1, p.stderr)

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

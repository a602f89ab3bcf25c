"""gputrace record --delay / --duration (issue 19; docs/cli.md): the
command runs in standby and record opens one window in it through its
control channel (docs/standby.md). Ground truth: standby_loop's own log of
each launch (CLOCK_MONOTONIC around the call), as tests/test_standby.py
reads it."""
import os
import subprocess
import time

from gtlib import GPUTRACE, assert_eq, base_env, prog, query, tmpdir
from test_standby import _check_window, _log, _meta


def _record(d, *args, seconds=1.5):
    env = base_env({"GPUTRACE_CONTROL_DIR": os.path.join(d, "ctl")})
    env.pop("GPUTRACE_OUTPUT", None)
    t0 = time.monotonic_ns()
    r = subprocess.run([GPUTRACE, "record", "-o", os.path.join(d, "t-%p.db")] + list(args) +
                       [prog("standby_loop"), str(seconds), os.path.join(d, "log")],
                       env=env, capture_output=True, text=True, timeout=120)
    return r, t0


def test_record_delay_and_duration_one_window():
    d = tmpdir()
    r, t0 = _record(d, "--delay", "400ms", "--duration", "500ms")
    assert_eq(r.returncode, 0, r.stderr)
    dbs = sorted(f for f in os.listdir(d) if f.endswith(".db"))
    assert_eq(len(dbs), 1, dbs)
    assert dbs[0].endswith("-w1.db"), dbs
    db = os.path.join(d, dbs[0])
    m, n = _check_window(db, _log(os.path.join(d, "log")))
    assert_eq((m["mode"], m["window"], m["complete"]), ("standby", "1", "1"))
    ws, we = int(m["window_start_ns"]), int(m["window_end_ns"])
    # opened no sooner than the delay after record started the command,
    # and open for the duration asked (the program's own clock)
    assert ws >= t0 + 400e6, (ws - t0)
    assert 500e6 <= we - ws < 700e6, we - ws
    # the closing summary names the window's trace
    assert db in r.stderr, r.stderr


def test_record_duration_alone_and_delay_alone():
    d = tmpdir()
    r, _ = _record(d, "--duration", "300ms", seconds=1.0)
    assert_eq(r.returncode, 0, r.stderr)
    dbs = [f for f in os.listdir(d) if f.endswith(".db")]
    assert_eq(len(dbs), 1, dbs)
    m, _ = _check_window(os.path.join(d, dbs[0]), _log(os.path.join(d, "log")))
    assert 300e6 <= int(m["window_end_ns"]) - int(m["window_start_ns"]) < 500e6, m
    # --delay alone: recording from the delay to the end of the run
    d = tmpdir()
    r, t0 = _record(d, "--delay", "500ms", seconds=1.0)
    assert_eq(r.returncode, 0, r.stderr)
    dbs = [f for f in os.listdir(d) if f.endswith(".db")]
    assert_eq(len(dbs), 1, dbs)
    db = os.path.join(d, dbs[0])
    m, _ = _check_window(db, _log(os.path.join(d, "log")))
    assert int(m["window_start_ns"]) >= t0 + 500e6, m
    last = max(t1 for _, _, t1 in _log(os.path.join(d, "log")))
    assert int(m["window_end_ns"]) >= last, (m, last)
    assert_eq(query(db, "SELECT value FROM meta WHERE key = 'complete'"), [("1",)])


def test_record_delay_bad_values():
    for args in (["--delay", "soon"], ["--duration", "0"], ["--duration"], ["--delay=-1s"], ["--duration", "10"],
                 ["--delay", "2"]):
        r = subprocess.run([GPUTRACE, "record"] + args + ["true"], capture_output=True, text=True)
        assert_eq(r.returncode, 2, (args, r.stderr))
        assert "needs a duration" in r.stderr, (args, r.stderr)


def test_record_from_the_first_call_misses_none():
    """--delay 0s and --duration D alone record from the command's first
    CUDA call (issue 31): a short program once ended before record reached
    its control channel, and its trace held none of its calls. Truth: the
    same program recorded whole, call by call."""
    d = tmpdir()
    env = base_env({"GPUTRACE_CONTROL_DIR": os.path.join(d, "ctl")})
    env.pop("GPUTRACE_OUTPUT", None)

    def calls(*args):
        sub = tmpdir()
        r = subprocess.run([GPUTRACE, "record", "-q", "-o", os.path.join(sub, "t.db")] + list(args) +
                           [prog("rt_basic")], env=env, capture_output=True, text=True, timeout=120)
        assert_eq((r.returncode, r.stdout, r.stderr), (0, "rt_basic: round trip ok\n", ""), args)
        dbs = [f for f in os.listdir(sub) if f.endswith(".db")]
        assert_eq(len(dbs), 1, (args, dbs))
        db = os.path.join(sub, dbs[0])
        assert_eq(query(db, "SELECT value FROM meta WHERE key = 'complete'"), [("1",)], args)
        return query(db, "SELECT name FROM api_calls ORDER BY start_ns, id")

    whole = calls()
    assert len(whole) > 10, whole
    for args in (["--delay", "0s"], ["--duration", "1s"], ["--delay", "0s", "--duration", "5s"]):
        assert_eq(calls(*args), whole, args)

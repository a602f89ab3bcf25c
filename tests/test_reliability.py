"""Reliability: the traced program never pays, the trace never lies.

Each test is one row of docs/reliability.md: a fault, what the program sees
(the same output and exit status as untraced), what the trace keeps."""
import os
import re
import signal
import subprocess

import gtlib
from gtlib import SHIM, assert_eq, base_env, prog, query, run_plain, run_traced, tmpdir

ENDINGS = prog("endings")


def kernels_by_name(db):
    return dict(query(db, "SELECT name, count(*) FROM kernels GROUP BY name"))


def meta(db, key):
    rows = query(db, "SELECT value FROM meta WHERE key = ?", key)
    return rows[0][0] if rows else None


def integrity(db):
    return query(db, "PRAGMA integrity_check")[0][0]


def same_as_untraced(args, env=None):
    """Runs args untraced and traced; the program's output and status must
    not change. Returns the traced run."""
    plain = run_plain(args, env=env)
    run = run_traced(args, env=env)
    assert_eq(run.proc.returncode, plain.returncode, "exit status")
    assert_eq(run.proc.stdout, plain.stdout, "stdout")
    return run


def test_shim_exports_only_what_it_wraps():
    """The shim's dynamic symbols are the CUDA names of the hook table and
    the few process-level names it must interpose (dlsym, _exit, exec)."""
    # the hook table, as the shim itself writes it into every trace
    hooks = set(r[0] for r in run_traced([ENDINGS, "exit", "1"]).q("SELECT name FROM api_names"))
    assert len(hooks) > 100, len(hooks)
    out = subprocess.run(["nm", "-D", "--defined-only", SHIM], capture_output=True, text=True, check=True).stdout
    exported = set(line.split()[-1] for line in out.splitlines() if line.split()[1] in "TtWiV")
    process = {"dlsym", "_exit", "_Exit", "execve", "execv", "execvp", "execvpe", "execl", "execlp", "execle",
               "fexecve"}
    extra = exported - hooks - process
    assert not extra, sorted(extra)
    assert hooks <= exported, sorted(hooks - exported)


def test_normal_exit_and_exit_in_atexit_handler():
    run = same_as_untraced([ENDINGS, "exit", "100"])
    assert_eq(kernels_by_name(run.trace), {"ending_kernel": 100})
    assert_eq(meta(run.trace, "complete"), "1")
    # an atexit handler that calls CUDA, then exit() again: recorded, and
    # the program's status (7) stands
    run = same_as_untraced([ENDINGS, "atexit", "100"])
    assert_eq(run.proc.returncode, 7)
    assert_eq(kernels_by_name(run.trace), {"ending_kernel": 100, "in_atexit": 1})
    assert_eq(meta(run.trace, "complete"), "1")


def test_underscore_exit_finishes_the_trace():
    run = same_as_untraced([ENDINGS, "_exit", "300"])
    assert_eq(run.proc.returncode, 3)
    assert_eq(kernels_by_name(run.trace), {"ending_kernel": 300}, "nothing lost to _exit")
    assert_eq(meta(run.trace, "complete"), "1")
    assert_eq(os.listdir(run.outdir), [os.path.basename(run.trace)], "one file, no WAL left")


def test_abort_and_segv_leave_a_readable_trace():
    for mode, sig in (("abort", signal.SIGABRT), ("segv", signal.SIGSEGV)):
        run = run_traced([ENDINGS, mode, "200"], env={"ASAN_OPTIONS": ""})
        assert_eq(run.proc.returncode, -sig, mode)
        assert_eq(run.proc.stdout, "ready\n")
        db = run.trace
        assert_eq(integrity(db), "ok")
        k = kernels_by_name(db)
        # what was committed before the crash (the 700 ms pause spans more
        # than two commit intervals): at least the first 200 launches
        assert k.get("ending_kernel") == 200, (mode, k)
        assert_eq(meta(db, "complete"), "0")
        info = subprocess.run([os.path.join(gtlib.BUILD, "gputrace"), "info", db], capture_output=True, text=True)
        assert_eq(info.returncode, 0, info.stderr)
        assert "did not finish" in info.stdout, info.stdout


def test_exit_from_a_thread_while_others_are_in_cuda():
    for _ in range(3):
        run = same_as_untraced([ENDINGS, "thread_exit", "10"])
        assert_eq(run.proc.returncode, 5)
        db = run.trace
        assert_eq(integrity(db), "ok")
        assert_eq(meta(db, "complete"), "1")
        k = kernels_by_name(db)
        assert k["ending_kernel"] == 10 and k.get("spin", 0) > 0, k


def test_threads_that_end_while_others_launch():
    """40 threads, 8 at a time, each launching 500 and exiting: the rings of
    dead threads are still written, to the last event."""
    run = same_as_untraced([ENDINGS, "churn", "500"])
    db = run.trace
    assert_eq(kernels_by_name(db), {"ending_kernel": 500, "churn": 40 * 500})
    assert_eq(meta(db, "dropped_events"), "0")
    assert_eq(query(db, "SELECT count(DISTINCT c.tid) FROM kernels k JOIN calls c ON c.id = k.api_call_id "
                        "WHERE k.name = 'churn'")[0][0], 40)


def test_system_and_popen_leave_no_extra_files():
    run = same_as_untraced([ENDINGS, "system", "10"])
    assert_eq(run.proc.stdout, "ready\npopen-ok\n")
    assert_eq(len(run.traces), 1, "the shells that never call CUDA write nothing")
    assert_eq(kernels_by_name(run.trace), {"ending_kernel": 10, "after_system": 1})


def test_exec_gives_each_image_its_own_file():
    """exec keeps the pid: the image before it keeps its trace, finished,
    and the new image writes one named apart."""
    run = same_as_untraced([ENDINGS, "exec", "50"])
    assert_eq(run.proc.stdout, "ready\nexec-child done\n")
    assert_eq(len(run.traces), 2, run.traces)
    first, second = sorted(run.traces, key=len)
    assert second == first[:-3] + ".2.db", (first, second)
    assert_eq(kernels_by_name(first), {"ending_kernel": 50})
    assert_eq(kernels_by_name(second), {"after_exec": 50})
    for db in (first, second):
        assert_eq(meta(db, "complete"), "1")
        assert_eq(meta(db, "pid"), meta(first, "pid"))
    # an exec that fails: the trace stays finished, one line says so, and
    # the program goes on exactly as it would have
    run = same_as_untraced([ENDINGS, "exec-fail", "20"])
    assert_eq(run.proc.stdout, "ready\nexec failed as expected\n")
    assert_eq(run.proc.stderr, "gputrace: exec failed after this process's trace was finished; "
                               "the rest of the process is not traced\n")
    assert_eq(kernels_by_name(run.trace), {"ending_kernel": 20})


def test_many_short_lived_processes():
    run = same_as_untraced([ENDINGS, "children", "30"])
    assert_eq(len(run.traces), 7, run.traces)
    pids = set()
    for db in run.traces:
        assert_eq(meta(db, "complete"), "1")
        pids.add(meta(db, "pid"))
        k = kernels_by_name(db)
        assert k in ({"child": 30}, {"ending_kernel": 30, "parent_after": 1}), k
    assert_eq(len(pids), 7)

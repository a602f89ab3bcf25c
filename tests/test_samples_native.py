"""Why the GPU waited, in native programs (issue 31, item 2): a C++
program whose main thread blocks in its own functions (a sleep in
load_batch(), a condition-variable wait in wait_for_batch()) while the GPU
idles. The sampler unwinds a blocked thread's stack from the two registers
/proc/self/task/TID/syscall gives and the binaries' .eh_frame (no signal,
no ptrace), so the report names the program's function, and with -g its
line, not libc's clock_nanosleep.

The answers are set from outside the tracer: the functions and lines from
the marker comments in tests/progs/native_wait.cpp, the time the program
logs it spent in each (so each function's share of the idle time), and
every figure of the report recomputed from host_samples and stack_frames
by tests/oracle.py."""
import os
import re
import subprocess

import gtlib
from gtlib import GPUTRACE, assert_eq, prog, run_plain, run_traced
import oracle

MS = 1_000_000
SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "progs", "native_wait.cpp")
# each function and the system calls its thread blocks in there
WANT = {"load_batch": ("clock_nanosleep", "nanosleep"), "wait_for_batch": ("futex",)}
# -O2 -g and -O0 -g (its frames found through rbp, which libc's sleep
# never saves): named by file and line; -O3 without -g: by symbol and module
BUILDS = (("native_wait_g", True), ("native_wait_O3", False), ("native_wait_O0g", True))


def markers():
    """{function: line} from the "// marker: FUNCTION" comments."""
    return gtlib.marker_lines(SRC, r"// marker: (\w+)")


def names(text, fn, line, build):
    """Whether a host-stack text ("WHERE (STATE)") names fn: its file and
    marked line with -g, else its symbol in the program (a compiler's
    clone, "load_batch() [clone .isra.0]", included)."""
    if line:
        return text.startswith("native_wait.cpp:%d in %s(" % (line, fn))
    return text.startswith(fn + "(") and "(%s)" % build in text


def test_blocked_native_thread_named_by_its_own_function():
    m = markers()
    assert set(WANT) <= set(m), m
    steps, stall = 3, 100
    for build, with_lines in BUILDS:
        argv = [prog(build), str(steps), str(stall)]
        plain = run_plain(argv)
        run = run_traced(argv)
        assert_eq((run.proc.returncode, run.proc.stdout), (plain.returncode, plain.stdout), run.proc.stderr)
        assert_eq(plain.returncode, 0, plain.stderr)
        db = run.trace
        rc, doc, err = oracle.run_report([db], 10 * MS)
        assert_eq(rc, 0, err)
        # every figure, the host stacks and each gap's host included, as
        # the oracle recomputes it from host_samples and stack_frames
        errs = oracle.check([db], doc, 10 * MS)
        assert not errs, (build, errs[:10])
        rows = doc["idle_by_host_stack"]
        # the program's own log of its time in each function, against the
        # listed gaps' idle time (the trace's)
        logged = dict(re.findall(r"(\w+) ([0-9.]+) ms", [l for l in run.proc.stderr.splitlines()
                                                         if l.startswith("native_wait: ")][0]))
        idle = sum(g["dur_ns"] for g in doc["idle_gaps"] if g["dur_ns"] >= 10 * MS)
        total = 0
        for fn, calls in WANT.items():
            line = m[fn] if with_lines else None
            mine = [r for r in rows if names(r["stack"], fn, line, build)]
            assert mine, (build, fn, [r["stack"] for r in rows])
            # blocked where its code blocks, for about half of the idle time
            assert all(any(r["stack"].endswith("(blocked in %s)" % c) for c in calls) for r in mine), mine
            share = sum(r["pct"] for r in mine)
            # a sample stands for a tenth of a 100 ms gap: a few either way
            want = 100.0 * float(logged[fn]) * MS / idle
            assert abs(share - want) <= 8, (build, fn, share, want, rows)
            total += share
        assert total >= 75, (build, rows)
        assert_eq(run.q1("SELECT value FROM meta WHERE key = 'sample_native_stacks'"), "blocked_unwound")
        # each stall's gap: its function for most of the gap's samples
        # (other gaps may be listed where the host is slow, as under the
        # sanitizers: starting the loader thread, running)
        tops = {fn: 0 for fn in WANT}
        for g in doc["idle_gaps"]:
            if g["cause"] != "host" or not g["host"] or not g["host"]["stacks"]:
                continue
            top = g["host"]["stacks"][0]
            fn = [f for f in WANT if names(top["stack"], f, m[f] if with_lines else None, build)]
            if fn:
                assert top["pct"] >= 50, (build, g["host"])
                tops[fn[0]] += 1
        assert_eq(tops, {fn: steps for fn in WANT}, (build, doc["idle_gaps"]))
        # the walk goes on past the program's function to main (the main
        # thread's: every thread is sampled, the loader's own stack ends
        # in std::thread's)
        pid = run.q1("SELECT value FROM meta WHERE key = 'pid'")
        deep = run.q1("SELECT count(*) FROM host_samples h WHERE h.state = 'syscall' AND h.tid = ? AND EXISTS "
                      "(SELECT 1 FROM stack_frames f WHERE f.stack_id = h.stack_id AND f.function = 'main')", pid)
        assert deep >= run.q1("SELECT count(*) FROM host_samples WHERE state = 'syscall' AND tid = ?", pid) * 0.9, \
            (build, deep)
        # blocked in cudaDeviceSynchronize under the tracer's hook: the
        # program's function and the runtime's, never the tracer's frames
        syncs = run.q("SELECT group_concat(f.function, '|') FROM host_samples h JOIN stack_frames f "
                      "ON f.stack_id = h.stack_id WHERE h.state = 'syscall' GROUP BY h.id "
                      "HAVING group_concat(f.function, '|') LIKE '%sync_long%'")
        assert len(syncs) >= 3, (build, syncs)
        assert all("cudaDeviceSynchronize" in s[0] for s in syncs), syncs[:2]
        assert_eq(run.q1("SELECT count(*) FROM stack_frames WHERE module LIKE '%libgputrace%'"), 0, build)
        # the text report says the same
        text = subprocess.run([GPUTRACE, "report", "--min-gap", "10ms", db], capture_output=True, text=True).stdout
        section = text.split("GPU idle by host stack")[1].split("\n\n")[0]
        for fn in WANT:
            head = "native_wait.cpp:%d in %s(" % (m[fn], fn) if with_lines else fn + "("
            assert head in section, (build, section)
            # each of its gaps' lines: "host during the gap", then its top stack
            gaps = text.split("GPU idle gaps of")[1].split("\n\n")[0]
            assert_eq(gaps.count("% " + head), steps, (build, gaps))


def test_threads_waking_and_ending_while_unwound():
    """At 1000 Hz, every thread sampled (GPUTRACE_SAMPLE_THREADS=all): a
    ticker thread wakes every 20 us (its walks race its wake-ups) and a
    loader thread starts, blocks and ends each step (its stack unmapped or
    reused). The program is unchanged; every stack kept for the ticker
    goes through ticker() (a walk of a stack that moved under it would
    not: it is dropped, counted in samples_stale); no sample is of a
    thread the process did not have. The same under ASan and TSan. No
    budget (GPUTRACE_SAMPLE_BUDGET=0): the walks are what is tested, as
    many as the sampler can make (under TSan a round costs tens of times
    what it does plain, and the budget would slow it to a few a second)."""
    m = markers()
    for build, with_lines in BUILDS:
        argv = [prog(build), "20", "5", "20"]
        plain = run_plain(argv)
        run = run_traced(argv, env={"GPUTRACE_SAMPLE_HZ": "1000", "GPUTRACE_SAMPLE_THREADS": "all",
                                    "GPUTRACE_SAMPLE_BUDGET": "0"})
        assert_eq((run.proc.returncode, run.proc.stdout), (plain.returncode, plain.stdout), run.proc.stderr)
        assert_eq(plain.returncode, 0, plain.stderr)
        meta = dict(run.q("SELECT key, value FROM meta WHERE key LIKE 'sample%'"))
        assert int(meta["samples_taken"]) > 100, meta
        assert int(meta["samples_stale"]) >= 0, meta
        # the ticker's thread: the one whose blocked stacks reach ticker()
        per_tid = {}
        for tid, sid, fns in run.q("SELECT h.tid, h.stack_id, group_concat(f.function, '|') FROM host_samples h "
                                   "JOIN stack_frames f ON f.stack_id = h.stack_id WHERE h.state = 'syscall' "
                                   "GROUP BY h.id"):
            per_tid.setdefault(tid, []).append(fns.split("|"))
        tick = [t for t, stacks in per_tid.items() if any(any(f.startswith("ticker(") for f in st)
                                                          for st in stacks)]
        assert_eq(len(tick), 1, (build, list(per_tid)))
        stacks = per_tid[tick[0]]
        assert len(stacks) > 50, (build, len(stacks))
        bad = [st for st in stacks if not any(f.startswith("ticker(") for f in st)]
        assert not bad, (build, bad[:3])
        if with_lines:
            lines = {r[0] for r in run.q("SELECT f.line FROM host_samples h JOIN stack_frames f "
                                         "ON f.stack_id = h.stack_id WHERE h.tid = ? AND f.function LIKE 'ticker(%' "
                                         "AND f.file LIKE '%native_wait.cpp'", tick[0])}
            assert_eq(lines, {m["ticker"]}, build)
        assert_eq(run.q1("SELECT count(*) FROM samples WHERE tid NOT IN (SELECT tid FROM threads)"), 0)
    # the shim under ASan+UBSan and under TSan: the walks' reads and the
    # sampler's state, while the threads come, go and wake
    argv = [prog("native_wait_g"), "5", "20", "20"]
    plain = run_plain(argv)
    for san in ("asan", "tsan"):
        run = run_traced(argv, env={"GPUTRACE_SAMPLE_HZ": "1000", "GPUTRACE_SAMPLE_THREADS": "all",
                                    "GPUTRACE_SAMPLE_BUDGET": "0"}, sanitizer=san)
        assert_eq((run.proc.returncode, run.proc.stdout), (plain.returncode, plain.stdout), (san, run.proc.stderr))
        assert run.q1("SELECT count(*) FROM host_samples h JOIN stack_frames f ON f.stack_id = h.stack_id "
                      "WHERE f.function LIKE 'ticker(%'") > 0, san

"""The tracer's own start-up (issue 31, item 5): it runs on the program's
thread inside the program's first CUDA call. It is recorded apart (meta
tracer_startup_ns, the report's summary and CUDA API summary) and never
as that call's time; the trace file's tables are made on the writer
thread, not the program's. Truth: the program's own timing of its calls
(CLOCK_MONOTONIC around each, the trace's clock)."""
import re
import subprocess

import oracle
from gtlib import GPUTRACE, assert_eq, prog, run_traced


def first_call_run():
    run = run_traced([prog("first_call")])
    assert run.proc.returncode == 0, run.proc.stderr
    own = dict((m.group(1), int(m.group(2))) for m in re.finditer(r"first_call: (\w+) (\d+)", run.proc.stdout))
    assert_eq(sorted(own), ["cudaFree", "cudaMalloc", "cudaMemset"])
    return run, own


def test_startup_is_recorded_apart_from_the_first_call():
    run, own = first_call_run()
    startup = int(run.q1("SELECT value FROM meta WHERE key = 'tracer_startup_ns'"))
    calls = run.q("SELECT name, end_ns - start_ns FROM api_calls ORDER BY start_ns")
    assert_eq([c[0] for c in calls], ["cudaMalloc", "cudaMemset", "cudaFree"])
    # the program's own time of its first call holds the tracer's start-up
    # and the call's recorded time, one after the other, and nothing of
    # the start-up is in the call's time
    assert startup > 0
    assert startup + calls[0][1] <= own["cudaMalloc"], (startup, calls[0][1], own)
    for name, dur in calls:
        assert dur <= own[name], (name, dur, own)
    # the trace's tables were not made on the program's thread: the start-up
    # ended before the writer thread had them (the trace's start is the
    # program thread's, its first meta rows the writer's)
    start = int(run.q1("SELECT value FROM meta WHERE key = 'start_ns'"))
    first = run.q1("SELECT min(start_ns) FROM api_calls")
    assert start <= first, (start, first)


def test_report_says_what_was_the_tracers():
    run, own = first_call_run()
    startup = int(run.q1("SELECT value FROM meta WHERE key = 'tracer_startup_ns'"))
    assert_eq(oracle.verify([run.trace]), [])
    rc, doc, err = oracle.run_report([run.trace])
    assert_eq(rc, 0, err)
    assert_eq(doc["summary"]["tracer_startup_ns"], startup)
    api = {r["name"]: r for r in doc["api"]}
    assert_eq(api["cudaMalloc"]["total_ns"], run.q1("SELECT end_ns - start_ns FROM api_calls WHERE name = 'cudaMalloc'"))
    text = subprocess.run([GPUTRACE, "report", run.trace], capture_output=True, text=True).stdout
    sec = text.split("CUDA API summary (host time)\n")[1]
    assert re.search(r"\n  and the tracer's own start-up: [0-9.]+ [mu]?s on the thread of\n"
                     r"  the first CUDA call, before that call's time started \(in no figure above\)\n", sec), sec

"""Calls a tracer used to miss (issue 31, "Calls not recorded"): event and
stream polls, folded run by run into one row with its count, and shown by
the report as the spin-wait they are; stream callbacks; graph updates;
cudaSetDevice. Truth: the program's own count of not-ready answers and
what it called, and the report's figures recomputed by the oracle."""
import re
import subprocess

import oracle
from gtlib import GPUTRACE, assert_eq, prog, run_traced

N = 2
ENV = {"FAKECUDA_KERNEL_NS": "5000,slow_event=20000000,slow_stream=20000000"}


def polls_run():
    run = run_traced([prog("polls"), str(N)], env=ENV)
    assert run.proc.returncode == 0, run.proc.stderr
    lines = run.proc.stdout.splitlines()
    counts = [tuple(int(x) for x in re.match(r"polls: event (\d+) stream (\d+)$", l).groups()) for l in lines[:N]]
    assert_eq(lines[N:], ["polls: updated graph wrote 4096 fives, host functions 0 old 1 new",
                          "polls: callback ran 1 times"])
    # spins answered not-ready (each starts right after a launch of a kernel
    # that runs for 20 ms; a first call's own start-up, slow under a
    # sanitizer, may outlast one, and that spin then polls once)
    assert any(a > 0 for a, _ in counts) and any(b > 0 for _, b in counts), counts
    return run, counts


def test_polls_fold_into_one_row_per_run_with_their_count():
    run, counts = polls_run()
    rows = run.q("SELECT c.name, s.kind, s.polls, c.error, %s FROM api_calls c JOIN sync_args s ON s.call_id = c.id "
                 "WHERE s.kind IN ('event_query', 'stream_query') ORDER BY c.start_ns" %
                 "(SELECT substr(f.function, 1, instr(f.function || '(', '(') - 1) FROM stack_frames f "
                 "WHERE f.stack_id = c.stack_id AND f.depth = 0)")
    want = []
    for a, b in counts:
        want += [("cudaEventQuery", "event_query", a, "cudaErrorNotReady", "spin_event")] * (a > 0)
        want += [("cudaEventQuery", "event_query", 1, None, "spin_event")]
        want += [("cudaStreamQuery", "stream_query", b, "cudaErrorNotReady", "spin_stream")] * (b > 0)
        want += [("cudaStreamQuery", "stream_query", 1, None, "spin_stream")]
    assert_eq(rows, want)
    # a folded run spans its polls: it starts after the event was recorded and
    # before the kernel ended on the GPU (its polls answered not ready), and
    # the poll that answered done ended after the kernel did
    k = run.q("SELECT start_ns, end_ns FROM kernels WHERE name = 'slow_event' ORDER BY start_ns")
    rec = run.q("SELECT end_ns FROM api_calls WHERE name = 'cudaEventRecord' ORDER BY start_ns")
    q = run.q("SELECT c.start_ns, c.end_ns, s.polls FROM api_calls c JOIN sync_args s ON s.call_id = c.id "
              "WHERE s.kind = 'event_query' ORDER BY c.start_ns")
    assert_eq((len(k), len(rec), len(q)), (N, N, N + sum(a > 0 for a, _ in counts)))
    for i, (a, _) in enumerate(counts):
        if not a:
            q.pop(0)
            continue
        (ks, ke), (re_,), run_, done = k[i], rec[i], q.pop(0), q.pop(0)
        assert re_ <= run_[0] < ke <= done[1], (k[i], rec[i], run_, done)
        assert run_[1] <= done[0], (run_, done)


def test_report_shows_the_spin_wait_as_a_sync():
    run, counts = polls_run()
    assert_eq(oracle.verify([run.trace]), [])
    rc, doc, err = oracle.run_report([run.trace])
    assert_eq(rc, 0, err)
    got = sorted((r["kind"], r["count"]) for r in doc["syncs"] if r["kind"].endswith("_query"))
    assert_eq(got, [("event_query", sum(a for a, _ in counts) + N), ("stream_query", sum(b for _, b in counts) + N)])
    text = subprocess.run([GPUTRACE, "report", run.trace], capture_output=True, text=True).stdout
    sec = text.split("Syncs by call site (host time blocked)\n")[1]
    assert re.search(r"  event_query +%d calls, [0-9.]+ ms blocked\n    at polls.c:\d+ in spin_event\n"
                     % (sum(a for a, _ in counts) + N), sec), sec


def test_set_device_callbacks_and_graph_updates_are_recorded():
    run, _ = polls_run()
    names = run.q("SELECT name, category, count(*), sum(result != 0) FROM api_calls WHERE name IN "
                  "('cudaSetDevice', 'cudaStreamAddCallback', 'cudaGraphExecKernelNodeSetParams', "
                  "'cudaGraphExecMemsetNodeSetParams', 'cudaGraphExecHostNodeSetParams', "
                  "'cudaGraphExecMemcpyNodeSetParams1D', "
                  "'cudaGraphKernelNodeSetParams', 'cudaGraphExecUpdate') GROUP BY 1, 2 ORDER BY 1")
    assert_eq(names, [("cudaGraphExecHostNodeSetParams", "graph_build", 1, 0),
                      ("cudaGraphExecKernelNodeSetParams", "graph_build", 1, 0),
                      ("cudaGraphExecMemcpyNodeSetParams1D", "graph_build", 1, 0),
                      ("cudaGraphExecMemsetNodeSetParams", "graph_build", 1, 0),
                      ("cudaGraphExecUpdate", "graph_build", 1, 0),
                      ("cudaGraphKernelNodeSetParams", "graph_build", 1, 0),
                      ("cudaSetDevice", "other", 2, 0),
                      ("cudaStreamAddCallback", "other", 1, 0)])
    # the callback is on its stream, as host functions are
    assert_eq(run.q1("SELECT count(*) FROM api_calls c WHERE name = 'cudaStreamAddCallback' AND stream IN "
                     "(SELECT stream FROM api_calls WHERE name = 'cudaStreamQuery')"), 1)

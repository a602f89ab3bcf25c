"""GPU-side times through CUPTI (the simulated one in build/fakecuda): the
durations the simulated GPU is told to take come back exactly, and every
GPU record is linked to the call that caused it."""
import os

from gtlib import FAKECUDA, assert_eq, prog, run_traced

MB = 1 << 20
# Integral copy times: 1 MiB at 16 and 8 bytes/ns, no fixed latency.
GROUND_TRUTH = {
    "FAKECUDA_KERNEL_NS": "1000,step_kernel=50000,big_kernel=200000",
    "FAKECUDA_PINNED_BW": "16",
    "FAKECUDA_PAGEABLE_BW": "8",
    "FAKECUDA_DTOD_BW": "1024",
    "FAKECUDA_COPY_LATENCY_NS": "0",
}


def test_kernel_and_copy_times_come_back_exactly():
    run = run_traced([prog("rt_basic")], env=GROUND_TRUTH)
    assert run.proc.returncode == 0, run.proc.stderr
    assert_eq(run.proc.stderr, "", "stderr")
    assert_eq(run.q1("SELECT value FROM meta WHERE key = 'gpu_timing'"), "cupti")
    assert run.q1("SELECT value FROM meta WHERE key = 'gpu_timing_detail'").endswith("libcupti.so.13")
    ks = run.q("SELECT name, time_source, end_ns - start_ns, start_ns >= api_start_ns FROM kernels "
               "ORDER BY api_call_id")
    assert_eq(len(ks), 4, "kernels")
    for name, src, dur, after_call in ks:
        assert_eq(src, "gpu", "time source of %s" % name)
        assert_eq(dur, 50000 if name == "step_kernel" else 200000, "GPU duration of %s" % name)
        assert_eq(after_call, 1, "%s starts no earlier than its launch call" % name)
    copies = run.q("SELECT kind, host_mem, time_source, end_ns - start_ns, gpu_src_kind, gpu_dst_kind "
                   "FROM memcpys ORDER BY api_start_ns")
    assert_eq(copies, [
        ("HtoD", "pageable", "gpu", MB // 8, "pageable", "device"),
        ("HtoD", "pinned", "gpu", MB // 16, "pinned", "device"),
        ("DtoH", "pageable", "gpu", MB // 8, "device", "pageable"),
        ("DtoD", "none", "gpu", 4096 // 1024, "device", "device"),
    ])
    assert_eq(run.q("SELECT time_source, end_ns - start_ns FROM memsets ORDER BY api_start_ns"),
              [("gpu", 65536 // 1024), ("gpu", 4096 // 1024)])
    # stream order on the GPU: the three step kernels on one stream do not overlap
    starts = run.q("SELECT start_ns, end_ns FROM kernels WHERE name = 'step_kernel' ORDER BY start_ns")
    for (s0, e0), (s1, _) in zip(starts, starts[1:]):
        assert s1 >= e0, (s0, e0, s1)


def _why_short(run):
    """What a trace missing GPU records says of itself, for the message."""
    meta = dict(run.q("SELECT key, value FROM meta WHERE key IN ('cupti_dropped_records', 'dropped_events', "
                      "'complete', 'gpu_timing_detail', 'events_written')"))
    return "meta %r; kernels by time source %r; stderr %r" % (
        meta, run.q("SELECT time_source, count(*) FROM kernels GROUP BY 1"), run.proc.stderr)


def test_every_gpu_record_linked_to_its_call():
    run = run_traced([prog("threads"), "4", "300"], env=GROUND_TRUTH)
    assert run.proc.returncode == 0, run.proc.stderr
    assert_eq(run.q1("SELECT count(*) FROM gpu_activity WHERE kind = 'kernel'"), 1200, _why_short(run))
    assert_eq(run.q1("SELECT count(*) FROM gpu_activity WHERE linked = 0"), 0)
    # each launch call has exactly its own kernel
    assert_eq(run.q1("SELECT count(DISTINCT api_call_id) FROM gpu_activity WHERE kind = 'kernel'"), 1200)
    assert_eq(run.q1("SELECT count(*) FROM kernels WHERE time_source != 'gpu'"), 0)
    linked = run.q("SELECT a.name, k.name FROM gpu_activity a JOIN kernels k ON k.api_call_id = a.api_call_id "
                   "LIMIT 5")
    assert all(a == b == "thread_kernel" for a, b in linked), linked
    assert_eq(run.q1("SELECT value FROM meta WHERE key = 'cupti_dropped_records'"), "0")


def test_records_in_the_drivers_hands_at_exit_are_kept():
    """The program exits right after its last sync while the driver's
    thread still holds the records of the last work (a loaded machine):
    the flush at exit waits for them, and none is lost."""
    run = run_traced([prog("threads"), "4", "300"], env=dict(GROUND_TRUTH, FAKECUDA_ACTIVITY_LAG_US="200000"))
    assert run.proc.returncode == 0, run.proc.stderr
    assert_eq(run.q1("SELECT count(*) FROM gpu_activity WHERE kind = 'kernel'"), 1200, _why_short(run))
    assert_eq(run.q1("SELECT count(*) FROM kernels WHERE time_source != 'gpu'"), 0)


def test_unintercepted_gpu_work_lands_flagged():
    run = run_traced([prog("unhooked")], env=GROUND_TRUTH)
    assert_eq(run.proc.returncode, 0)
    rows = run.q("SELECT kind, name, linked, bytes FROM gpu_activity ORDER BY start_ns")
    assert_eq(rows, [("memcpy", None, 1, 8192), ("kernel", "unlisted_kernel", 0, None),
                     ("kernel", "linked_kernel", 1, None)])


def test_gpu_timing_off():
    run = run_traced([prog("rt_basic")], env={"GPUTRACE_GPU_TIMING": "off"})
    assert_eq(run.proc.returncode, 0)
    assert_eq(run.proc.stderr, "")
    assert_eq(run.q1("SELECT value FROM meta WHERE key = 'gpu_timing'"), "none")
    assert_eq(run.q1("SELECT count(*) FROM kernels WHERE time_source = 'host'"), 4)
    assert_eq(run.q1("SELECT count(*) FROM gpu_ops"), 0)
    assert_eq(run.q1("SELECT count(*) FROM calls WHERE corr IS NOT NULL"), 0)


def test_missing_or_refusing_cupti_falls_back_to_host_times():
    for env, reason in (({"GPUTRACE_CUPTI_PATH": "/nonexistent/libcupti.so.13"}, "cannot be loaded"),
                        ({"FAKECUDA_CUPTI_FAIL": "1"}, "CUPTI refused")):
        run = run_traced([prog("rt_basic")], env=env)
        assert_eq(run.proc.returncode, 0)
        assert_eq(run.proc.stdout, "rt_basic: round trip ok\n")
        lines = run.proc.stderr.splitlines()
        assert_eq(len(lines), 1, lines)
        assert lines[0].startswith("gputrace: GPU times not recorded") and reason in lines[0], lines
        assert_eq(run.q1("SELECT value FROM meta WHERE key = 'gpu_timing'"), "none")
        assert reason in run.q1("SELECT value FROM meta WHERE key = 'gpu_timing_detail'")
        assert_eq(run.q1("SELECT count(*) FROM kernels WHERE time_source = 'host'"), 4)


def test_subscriber_slot_left_free():
    # another tool holds CUPTI's callback slot: we never ask for it
    run = run_traced([prog("rt_basic")], env=dict(GROUND_TRUTH, FAKECUDA_CUPTI_SUBSCRIBED="1"))
    assert_eq(run.proc.stderr, "")
    assert_eq(run.q1("SELECT count(*) FROM kernels WHERE time_source = 'gpu'"), 4)


def test_explicit_cupti_path():
    run = run_traced([prog("rt_basic")], env=dict(GROUND_TRUTH,
                                                 GPUTRACE_CUPTI_PATH=os.path.join(FAKECUDA, "libcupti.so.13")))
    assert_eq(run.q1("SELECT value FROM meta WHERE key = 'gpu_timing'"), "cupti")
    assert_eq(run.q1("SELECT count(*) FROM gpu_activity WHERE linked = 1"), 4 + 4 + 2)


def test_gpu_records_before_their_correlation_still_link():
    """CUPTI's external-correlation record may come after the GPU records it
    names: the writer stores them unlinked and links them when it comes."""
    run = run_traced([prog("threads"), "4", "300"], env=dict(GROUND_TRUTH, FAKECUDA_CUPTI_EXT_LATE="1"))
    assert run.proc.returncode == 0, run.proc.stderr
    assert_eq(run.q1("SELECT count(*) FROM gpu_activity WHERE kind = 'kernel'"), 1200, _why_short(run))
    assert_eq(run.q1("SELECT count(*) FROM gpu_activity WHERE linked = 0"), 0)
    assert_eq(run.q1("SELECT count(DISTINCT api_call_id) FROM gpu_activity WHERE kind = 'kernel'"), 1200)
    assert_eq(run.q1("SELECT count(*) FROM kernels WHERE time_source != 'gpu'"), 0)


def test_rows_wait_for_records_that_lag_and_let_go_after_a_second():
    """1,600 kernels of 1 ms queued at once: the GPU finishes the last 1.6 s
    after its launch. The rows of the first wait for their records and hold
    them; those the writer stopped waiting for after a second are stored as
    they are, and their records go to gpu_ops, linked by the correlation
    id. Either way each kernel reads back its exact GPU duration."""
    # an unlimited launch queue, so that every launch returns at once
    run = run_traced([prog("launch_loop"), "800", "1", os.devnull],
                     env={"FAKECUDA_KERNEL_NS": "1000000", "FAKECUDA_QUEUE_DEPTH": "0"})
    assert run.proc.returncode == 0, run.proc.stderr
    assert_eq(run.q1("SELECT count(*) FROM kernels"), 1600)
    assert_eq(run.q("SELECT time_source, end_ns - start_ns, count(*) FROM kernels GROUP BY 1, 2"),
              [("gpu", 1000000, 1600)])
    in_row = run.q1("SELECT count(*) FROM events WHERE g_dur_ns IS NOT NULL")
    in_ops = run.q1("SELECT count(*) FROM gpu_ops WHERE kind = 0")
    assert_eq(in_row + in_ops, 1600)
    # about a second's worth (some 1,000 kernels) waited and held its record;
    # the rest came later (wide bounds: a loaded machine delays both sides)
    assert 300 <= in_row <= 1400 and in_ops >= 200, (in_row, in_ops)
    assert_eq(run.q1("SELECT count(*) FROM gpu_activity WHERE kind = 'kernel' AND linked = 1"), 1600)
    assert_eq(run.q1("SELECT count(DISTINCT api_call_id) FROM gpu_activity WHERE kind = 'kernel'"), 1600)
    assert_eq(run.q1("SELECT count(*) FROM kernels k JOIN gpu_activity a ON a.api_call_id = k.api_call_id "
                     "WHERE a.start_ns != k.start_ns OR a.end_ns != k.end_ns"), 0)


def test_waiting_room_grows_while_records_lag():
    """40,000 launches of 10 us kernels: the GPU runs 0.4 s behind the host,
    so tens of thousands of rows wait at once, more than the room's first
    16,384: it grows, and every row gets its record."""
    # an unlimited launch queue: with the default 1,024 the host would wait
    run = run_traced([prog("launch_loop"), "40000", "1", os.devnull],
                     env={"FAKECUDA_KERNEL_NS": "10000", "FAKECUDA_QUEUE_DEPTH": "0"})
    assert run.proc.returncode == 0, run.proc.stderr
    assert_eq(run.q1("SELECT count(*) FROM kernels"), 42000)
    assert_eq(run.q("SELECT time_source, end_ns - start_ns, count(*) FROM kernels GROUP BY 1, 2"),
              [("gpu", 10000, 42000)])
    assert_eq(run.q1("SELECT count(*) FROM events WHERE g_dur_ns IS NOT NULL"), 42000)
    assert_eq(run.q1("SELECT count(*) FROM gpu_ops WHERE kind < 3"), 0)
    assert_eq(run.q1("SELECT value FROM meta WHERE key = 'dropped_events'"), "0")

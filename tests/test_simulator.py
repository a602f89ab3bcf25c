"""The simulated GPU itself (tests/fakecuda): when each call blocks the
host, where its work lands on the GPU's timeline, and the functions real
programs call. The rules are NVIDIA's ("API synchronization behavior" in the
runtime and driver API references); the ground truth (bandwidths, kernel
durations, queue depth, launch latency) is set here, and the answers come
back through a trace gputrace recorded (the simulated CUPTI's records), on
the same clock as the calls' host times."""
from gtlib import assert_eq, prog, run_traced

MB = 1 << 20
# 0.02 bytes/ns: a 1 MiB copy or memset takes 52,429 ns... x1000: 52.4 ms,
# long enough that a call which returns at once returns well before it ends.
SLOW = {"FAKECUDA_PINNED_BW": "0.02", "FAKECUDA_PAGEABLE_BW": "0.02", "FAKECUDA_DTOD_BW": "0.02",
        "FAKECUDA_COPY_LATENCY_NS": "0"}
COPY_NS = -(-MB * 50 // 1)  # ceil(MB / 0.02)

# (view, kind, host memory, async, blocks the host), in sim_sync copies' order
COPIES = [
    ("memcpys", "HtoD", "pageable", 0, True),   # staged: returns when the last chunk is copied
    ("memcpys", "DtoH", "pageable", 0, True),   # returns once the copy is done
    ("memcpys", "HtoD", "pinned", 0, True),     # synchronous with respect to the host
    ("memcpys", "DtoH", "pinned", 0, True),
    ("memcpys", "DtoD", "none", 0, False),      # no host-side synchronization
    ("memcpys", "HtoH", "pageable", 0, True),   # host to host: fully synchronous
    ("memcpys", "HtoD", "pageable", 1, True),   # async through pageable memory: staged
    ("memcpys", "DtoH", "pageable", 1, True),   # async to pageable memory: returns once done
    ("memcpys", "HtoD", "pinned", 1, False),    # async with pinned memory: queued
    ("memcpys", "DtoH", "pinned", 1, False),
    ("memcpys", "DtoD", "none", 1, False),
    ("memcpys", "HtoH", "pinned", 1, True),     # host to host, even async
    ("memcpys", "HtoD", "pinned", 1, False),    # cudaMemcpy2DAsync
    ("memcpys", "HtoD", "pinned", 0, True),     # cudaMemcpy2D
    ("memsets", None, None, 0, False),          # cudaMemset on device memory: asynchronous
    ("memsets", None, None, 0, True),           # cudaMemset on managed memory: synchronous
    ("memsets", None, None, 1, False),          # cudaMemsetAsync: always asynchronous
    ("memsets", None, None, 0, True),           # cudaMemset on pinned host memory: synchronous
]


def gpu_rows(run):
    """Every copy and memset with its call's host times, in call order."""
    return run.q("SELECT 'memcpys', kind, host_mem, async, bytes, start_ns, end_ns, api_start_ns, api_end_ns, "
                 "api_call_id FROM memcpys UNION ALL "
                 "SELECT 'memsets', NULL, NULL, async, bytes, start_ns, end_ns, api_start_ns, api_end_ns, "
                 "api_call_id FROM memsets ORDER BY api_call_id")


def test_each_copy_and_memset_blocks_the_host_as_the_driver_documents():
    run = run_traced([prog("sim_sync"), "copies"], env=SLOW)
    assert run.proc.returncode == 0, run.proc.stderr
    assert_eq(run.proc.stdout, "sim_sync: bytes ok\n")
    rows = gpu_rows(run)[:len(COPIES)]
    assert_eq(len(rows), len(COPIES), "copies and memsets")
    for i, (want, row) in enumerate(zip(COPIES, rows)):
        view, kind, host_mem, is_async, blocks = want
        what = "#%d %s %s %s async=%d" % (i, view, kind, host_mem, is_async)
        assert_eq(row[:4], (view, kind, host_mem, is_async), what)
        bytes_, start, end, api_start, api_end = row[4:9]
        assert_eq(bytes_, MB, what + " bytes")
        assert_eq(end - start, COPY_NS, what + " GPU duration")
        assert start >= api_start, (what, "starts before its call", start, api_start)
        if blocks:
            assert api_end >= end, (what, "returned %d ns before its work ended" % (end - api_end))
        else:
            # returned while its work still had most of its 52 ms to run
            assert api_end < end, (what, "returned %d ns after its work ended" % (api_end - end))


LEGACY = {"FAKECUDA_KERNEL_NS": "1000000,on_blocking_a=20000000,on_nonblocking=60000000,on_legacy=5000000,"
                                "on_blocking_b=1000000,on_nonblocking_2=1000000"}


def test_legacy_default_stream_waits_for_blocking_streams_only():
    run = run_traced([prog("sim_sync"), "legacy"], env=LEGACY)
    assert run.proc.returncode == 0, run.proc.stderr
    k = {name: (start, end, api_start, api_end)
         for name, start, end, api_start, api_end in run.q(
             "SELECT mangled_name, start_ns, end_ns, api_start_ns, api_end_ns FROM kernels")}
    assert_eq(sorted(k), sorted(["on_blocking_a", "on_nonblocking", "on_legacy", "on_blocking_b",
                                 "on_nonblocking_2"]))
    # the legacy stream's kernel starts the moment the blocking stream's ends,
    # not waiting for the non-blocking stream's (which runs 40 ms longer)
    assert_eq(k["on_legacy"][0], k["on_blocking_a"][1], "legacy kernel's start")
    assert k["on_legacy"][0] < k["on_nonblocking"][1]
    # a blocking stream's later work waits for the legacy stream's
    assert_eq(k["on_blocking_b"][0], k["on_legacy"][1], "blocking stream b's start")
    # a second non-blocking stream waits for nobody: it runs as it is launched
    assert k["on_nonblocking_2"][0] <= k["on_nonblocking_2"][3], k["on_nonblocking_2"]
    assert k["on_nonblocking_2"][1] < k["on_legacy"][0]
    # the non-blocking stream started with its launch, beside stream a
    assert k["on_nonblocking"][0] <= k["on_nonblocking"][3]
    assert k["on_nonblocking"][0] < k["on_blocking_a"][1]


def test_a_full_launch_queue_blocks_the_launch_until_its_oldest_work_ends():
    depth, count = 4, 10
    run = run_traced([prog("sim_sync"), "queue", str(count)],
                     env={"FAKECUDA_KERNEL_NS": "20000000", "FAKECUDA_QUEUE_DEPTH": str(depth)})
    assert run.proc.returncode == 0, run.proc.stderr
    ks = run.q("SELECT start_ns, end_ns, api_start_ns, api_end_ns FROM kernels ORDER BY api_call_id")
    assert_eq(len(ks), count)
    for i, (start, end, api_start, api_end) in enumerate(ks):
        assert_eq(end - start, 20000000, "kernel %d duration" % i)
        if i < depth:
            # room in the queue: returns at once, long before the first kernel ends
            assert api_end < ks[0][1], (i, api_end, ks[0][1])
        else:
            # full: returns once the kernel `depth` launches back has ended, and
            # (the queue having room again) before the next one ends
            assert api_end >= ks[i - depth][1], (i, api_end, ks[i - depth][1])
            assert api_end < ks[i - depth + 1][1], (i, api_end, ks[i - depth + 1][1])
        if i:
            assert_eq(start, ks[i - 1][1], "kernel %d starts when the one before ends" % i)


def test_an_unlimited_queue_never_blocks_a_launch():
    run = run_traced([prog("sim_sync"), "queue", "10"],
                     env={"FAKECUDA_KERNEL_NS": "20000000", "FAKECUDA_QUEUE_DEPTH": "0"})
    assert run.proc.returncode == 0, run.proc.stderr
    ks = run.q("SELECT end_ns, api_end_ns FROM kernels ORDER BY api_call_id")
    assert_eq(len(ks), 10)
    assert max(api_end for _, api_end in ks) < ks[0][0]


def test_launch_latency_delays_the_start_of_work_on_an_idle_gpu():
    latency = 3000000
    run = run_traced([prog("sim_sync"), "latency"],
                     env={"FAKECUDA_KERNEL_NS": "1000000", "FAKECUDA_LAUNCH_LATENCY_NS": str(latency)})
    assert run.proc.returncode == 0, run.proc.stderr
    (start, end, api_start, api_end), = run.q("SELECT start_ns, end_ns, api_start_ns, api_end_ns FROM kernels")
    assert_eq(end - start, 1000000)
    # submitted during the call, it starts exactly `latency` after submission
    assert api_start + latency <= start <= api_end + latency, (api_start, api_end, start)

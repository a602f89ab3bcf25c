"""The integration tests again, with every traced program running under the
ASan+UBSan shim, then under the TSan shim (GPUTRACE_TEST_SANITIZER, read by
gtlib.run_traced).

Left out: tests that time the simulated GPU (sanitizers slow the host
several-fold), tests that fork after threads exist (the sanitizer
runtimes do not support it and can hang the child), tests whose program
dies of SIGSEGV or abort (the sanitizers catch those first), tests that
already pick their own sanitizer or preload, and the ones that run no
traced program."""
import os
import subprocess
import sys

from gtlib import ROOT

SELECT = ["test_capture", "test_call_paths", "test_python", "test_reliability", "test_nvtx", "test_graphs", "test_samples",
          "test_cupti_share", "test_polls", "test_startup"]
LEAVE_OUT = [
    # timing, and the writer's pace (threads that end faster than a slowed
    # writer frees their rings find the ring budget spent)
    "host_times_follow", "gpu_times", "sigint", "clock_wins", "killed_process", "small_buffers", "many_threads",
    "threads_that_end",
    # shares of sampled time among threads (loaders' builds against the
    # sampler's rounds, which TSan slows unevenly)
    "loader_that_never_calls", "two_loaders",
    # PyTorch under a sanitizer (test_cupti_share's profiler loop)
    "torch_profiler",
    # fork with threads, sanitizer-handled crashes, own preloads, no programs
    "fork", "short_lived", "abort_and_segv", "sanitized", "allocators", "exports", "full_disk", "file_size",
    "fuzz", "line_tables",
    # the program's own threads dlopen and dlclose at once: TSan cannot see
    # the loader's locks and reports races inside ld.so itself
    "first_calls_while", "layouts", "report_sites", "version_1", "nvtx_record", "nvtx_open_range",
]


def _failure_blocks(out):
    """Each failed test's whole message (from its FAIL line to the next
    test's line), the middle of a long one cut."""
    blocks, cur = [], None
    for line in out.splitlines():
        if line.startswith(("PASS ", "FAIL ", "SKIP ", "why ", "failed: ")):
            if cur:
                blocks.append("\n".join(cur))
            cur = [line] if line.startswith("FAIL ") else None
        elif cur is not None:
            cur.append(line)
    if cur:
        blocks.append("\n".join(cur))
    return [b if len(b) <= 6000 else b[:2000] + "\n[...]\n" + b[-4000:] for b in blocks]


def _suite(kind):
    env = dict(os.environ, GPUTRACE_TEST_SANITIZER=kind)
    args = [sys.executable, os.path.join(ROOT, "tests", "run_tests.py")] + SELECT + ["-" + x for x in LEAVE_OUT]
    r = subprocess.run(args, env=env, capture_output=True, text=True, timeout=1200)
    last = r.stdout.strip().splitlines()[-1] if r.stdout.strip() else ""
    fails = [line for line in r.stdout.splitlines() if line.startswith("FAIL")]
    assert r.returncode == 0 and last.endswith(" 0 failed"), "%s: %s\n%s\n%s" % (
        kind, fails, "\n".join(_failure_blocks(r.stdout)), r.stdout[-2000:])
    passed = int(last.split()[0])
    assert passed >= 20, last


def test_integration_tests_under_asan_ubsan():
    _suite("asan")


def test_integration_tests_under_tsan():
    _suite("tsan")

"""gputrace report on traces with known answers: a real program with planted
problems (tests/progs/stall.c) run on the simulated GPU, and bad inputs."""
import json
import os
import shutil
import subprocess
import tempfile

import make_trace as mt
from gtlib import GPUTRACE, assert_eq, prog, query, run_traced, site_function, tmpdir

STALL_ENV = {"FAKECUDA_LAUNCH_NS": "20000"}
KIB = 1024


def report(*args):
    return subprocess.run([GPUTRACE, "report"] + list(args), capture_output=True, text=True, timeout=120)


def _stall_trace(env=None):
    run = run_traced([prog("stall")], env=dict(STALL_ENV, **(env or {})))
    assert run.proc.returncode == 0, run.proc.stderr
    return run.trace


def _json(*args):
    out = report("--format", "json", *args)
    assert_eq(out.returncode, 0, out.stderr)
    return json.loads(out.stdout)


def test_report_finds_the_planted_stall():
    doc = _json("--top", "0", _stall_trace())
    gaps = doc["idle_gaps"]
    stall = gaps[0]  # longest first
    assert 49_000_000 <= stall["dur_ns"] <= 80_000_000, stall
    assert_eq(stall["cause"], "host")
    # the GPU work that ended before the gap is first_kernel's (the sync in
    # wait_first ran no GPU work); the work that ended it, second_kernel's
    assert site_function(stall["before"][0]) == "launch_first", stall["before"]
    assert_eq(stall["before_api"], "cudaLaunchKernel")
    assert site_function(stall["after"][0]) == "launch_second", stall["after"]
    assert_eq(stall["after_api"], "cudaLaunchKernel")
    assert_eq(stall["device"], 0)
    # the only long one (a loaded machine may add gaps of a few ms)
    assert_eq(sum(1 for g in gaps if g["dur_ns"] >= 45_000_000), 1, gaps)
    assert doc["summary"]["idle_by_cause_ns"]["host"] >= 49_000_000
    assert doc["summary"]["gpu_times"] is True
    devs = doc["devices"]
    assert_eq([d["device"] for d in devs], [0])
    assert_eq(devs[0]["busy_ns"], doc["summary"]["busy_ns"])  # one device: its own idle is the total
    # aggregated by the call that ended the idle time: the stall's end leads
    top = doc["idle_by_site"][0]
    assert site_function(top["site"][0]) == "launch_second", top
    assert top["idle_ns"] >= stall["dur_ns"], top
    # every breakdown adds up: by site and by cause, start-up and tear-down included
    assert_eq(sum(x["idle_ns"] for x in doc["idle_by_site"]), doc["summary"]["idle_ns"])
    assert_eq(sum(doc["summary"]["idle_by_cause_ns"].values()), doc["summary"]["idle_ns"])


def test_report_launch_bound_kernels_and_sites():
    doc = _json("--top", "0", _stall_trace())
    s = doc["summary"]
    assert_eq(s["launches"], 202)
    # 1 us kernels behind 20 us launches, the first of them apart (a kernel's
    # first launch never counts); not the two 1 ms ones
    assert_eq(s["launch_bound"], 199)
    kernels = {k["kernel"]: k for k in doc["launch_overhead"]["kernels"]}
    tiny = kernels["tiny_kernel"]
    assert_eq((tiny["count"], tiny["launch_bound"]), (200, 199))
    assert tiny["api_p50_ns"] >= 20000 and tiny["api_mean_ns"] >= 20000, tiny
    assert_eq(tiny["gpu_mean_ns"], 1000)
    assert_eq(kernels["first_kernel"]["gpu_total_ns"], 1_000_000)
    assert_eq(kernels["first_kernel"]["launch_bound"], 0)
    sites = doc["launch_overhead"]["sites"]
    assert site_function(sites[0]["site"][0]) == "launch_burst", sites[0]
    assert_eq(sites[0]["count"], 200)
    assert any("CUDA Graph" in a for a in doc["advice"]), doc["advice"]
    # launch-caused idle: the GPU waits on the host's launches between tiny kernels
    small = _json("--top", "0", "--min-gap", "10us", _stall_trace())
    assert sum(1 for g in small["idle_gaps"] if g["cause"] == "launch") >= 150


def test_report_h2d_hotspots_and_syncs():
    trace = _stall_trace()
    doc = _json("--top", "0", trace)
    h2d = doc["h2d_hotspots"]
    assert_eq(len(h2d), 1)
    h = h2d[0]
    assert site_function(h["site"][0]) == "feed", h
    assert_eq((h["bytes"], h["count"], h["pageable_bytes"], h["pinned_bytes"]), (150 * 4 * KIB, 150, 600 * KIB, 0))
    assert_eq((h["blocking"], h["async"], h["small_copy_storm"]), (150, 0, True))
    assert_eq(doc["summary"]["pageable_h2d_bytes"], 600 * KIB)
    syncs = [(x["kind"], x["count"], site_function(x["site"][0])) for x in doc["syncs"]]
    assert ("device", 1, "wait_first") in syncs and ("device", 1, "launch_second") in syncs, syncs
    waited = [x for x in doc["syncs"] if site_function(x["site"][0]) == "wait_first"][0]
    # it blocked until the 1 ms kernel was done: no longer than the kernel
    # (plus slack), and it returned after the kernel ended on the GPU (how
    # much of the kernel it waited for depends on when the host got there)
    assert waited["dur_ns"] <= 1_500_000, waited
    first_sync_end = query(trace, "SELECT min(end_ns) FROM syncs WHERE kind = 'device'")[0][0]
    first_kernel_end = query(trace, "SELECT end_ns FROM kernels WHERE name = 'first_kernel'")[0][0]
    assert first_sync_end >= first_kernel_end, (first_sync_end, first_kernel_end)


def test_report_pinned_vs_pageable_and_implicit_syncs():
    run = run_traced([prog("rt_basic")])
    doc = _json("--top", "0", run.trace)
    h = doc["h2d_hotspots"]
    # two call sites (two lines of upload_batch): one pageable and blocking, one pinned and async
    assert_eq(len(h), 2)
    assert all(site_function(x["site"][0]) == "upload_batch" for x in h), h
    by_kind = sorted((x["bytes"], x["pageable_bytes"], x["pinned_bytes"], x["blocking"], x["async"]) for x in h)
    assert_eq(by_kind, [(1 << 20, 0, 1 << 20, 0, 1), (1 << 20, 1 << 20, 0, 1, 0)])
    kinds = sorted((x["kind"], site_function(x["site"][0])) for x in doc["syncs"])
    assert ("memcpy_dtoh", "download") in kinds, kinds
    assert ("stream", "wait_all") in kinds and ("event", "wait_all") in kinds, kinds


def test_report_text_fits_80_columns():
    out = report(_stall_trace())
    assert_eq(out.returncode, 0, out.stderr)
    long = [l for l in out.stdout.splitlines() if len(l) > 80]
    assert_eq(long, [], "lines over 80 columns")
    for section in ("Findings, by the time they cost", "Kernels by GPU time", "Launch overhead by kernel",
                    "Transfers by kind and size", "H2D hotspots", "GPU idle gaps", "Syncs by call site",
                    "Streams and devices", "CUDA API summary"):
        assert section in out.stdout, section


def test_report_host_times_without_cupti():
    doc = _json(_stall_trace({"GPUTRACE_GPU_TIMING": "off"}))
    assert_eq(doc["summary"]["gpu_times"], False)
    assert_eq(doc["summary"]["launch_bound"], 0)  # unknowable without GPU times
    out = report(_stall_trace({"GPUTRACE_GPU_TIMING": "off"}))
    assert "NOT recorded" in out.stdout


def test_report_several_processes():
    a, b = _stall_trace(), run_traced([prog("rt_basic")]).trace
    doc = _json(a, b)
    assert_eq(len(doc["processes"]), 2)
    total = doc["summary"]
    assert_eq(total["launches"], sum(p["summary"]["launches"] for p in doc["processes"]))
    assert_eq(total["launches"], 202 + 4)
    pids = {row["pid"] for row in doc["launch_overhead"]["kernels"]}
    assert_eq(pids, {p["pid"] for p in doc["processes"]})
    out = report(a, b)
    assert "== totals over 2 processes" in out.stdout


def test_report_bad_inputs_exit_2():
    d = tmpdir()
    missing = os.path.join(d, "missing.db")
    out = report(missing)
    assert_eq(out.returncode, 2)
    assert "no such file" in out.stderr, out.stderr
    # a trace whose process did not finish is read as far as it was
    # committed, and says so first; so is one with no calls at all
    crashed = mt.make_example_trace(os.path.join(d, "crashed.db"), complete=False)
    out = report(crashed)
    assert_eq(out.returncode, 0, out.stderr)
    assert out.stdout.splitlines()[1].startswith("! partial trace: the process did not finish"), out.stdout
    empty = mt.make_trace(os.path.join(d, "empty.db"), calls=[])
    out = report(empty)
    assert_eq(out.returncode, 0, out.stderr)
    assert "! the trace holds no CUDA calls" in out.stdout, out.stdout
    # the same run twice, as one file or a copy of it: refused
    ok = mt.make_example_trace(os.path.join(d, "ok.db"))
    shutil.copy(ok, os.path.join(d, "copy.db"))
    for pair in ((ok, ok), (ok, os.path.join(d, "copy.db"))):
        out = report(*pair)
        assert_eq(out.returncode, 2)
        assert "are the same run" in out.stderr, out.stderr
    foreign = os.path.join(d, "foreign.db")
    import sqlite3
    sqlite3.connect(foreign).execute("CREATE TABLE x(y)").connection.commit()
    assert_eq(report(foreign).returncode, 2)
    junk = os.path.join(d, "junk.db")
    with open(junk, "wb") as f:
        f.write(os.urandom(4096))
    assert_eq(report(junk).returncode, 2)
    for bad in (["--format", "xml"], ["--top", "-1"], ["--min-gap", "soon"], []):
        assert_eq(report(*(bad + ([crashed] if bad else []))).returncode, 2, bad)


def test_report_never_modifies_the_trace():
    import hashlib
    path = _stall_trace()
    before = (hashlib.sha256(open(path, "rb").read()).hexdigest(), os.stat(path).st_mtime_ns)
    assert_eq(report(path).returncode, 0)
    assert_eq(report("--format", "json", path).returncode, 0)
    after = (hashlib.sha256(open(path, "rb").read()).hexdigest(), os.stat(path).st_mtime_ns)
    assert_eq(after, before)


def test_report_counts_graph_work_not_captured_calls():
    run = run_traced([prog("graph")], env={"FAKECUDA_KERNEL_NS": "1000,graph_a=20000,graph_b=30000"})
    assert run.proc.returncode == 0, run.proc.stderr
    doc = _json("--top", "0", run.trace)
    # captured launches ran nothing: only the plain launch is a launch
    assert_eq(doc["summary"]["launches"], 1)
    assert_eq([k["kernel"] for k in doc["launch_overhead"]["kernels"]], ["plain_kernel"])
    # the graphs' kernels kept the GPU busy: 5 x (20 + 30 + 20) us of kernels at least
    assert doc["summary"]["busy_ns"] >= 5 * 70000, doc["summary"]
    # and are in the kernels table by name, as run by graphs, with their GPU time
    k = {x["name"]: x for x in doc["kernels"]}
    assert_eq((k["graph_a"]["count"], k["graph_a"]["graph_count"], k["graph_a"]["total_ns"]), (10, 10, 200000))
    assert_eq((k["graph_b"]["count"], k["graph_b"]["graph_count"], k["graph_b"]["total_ns"]), (5, 5, 150000))
    assert_eq((k["plain_kernel"]["count"], k["plain_kernel"]["graph_count"]), (1, 0))
    assert doc["summary"]["captured_calls"] >= 3 and doc["summary"]["graph_launches"] == 5, doc["summary"]


def test_report_two_devices_count_device_time():
    """One process, two devices: device 0 busy 40 ms (20 kernels of 2 ms
    back to back), device 1 one 5 us kernel (tests/progs/two_gpus.c). The
    GPUs as a whole were nearly always busy, but half the device time was
    idle: the headline and the findings count device time (span x
    devices), and say so."""
    import oracle
    run = run_traced([prog("two_gpus")], env={"FAKECUDA_DEVICES": "2",
                                              "FAKECUDA_KERNEL_NS": "busy_kernel=2000000,blip_kernel=5000"})
    assert_eq(run.proc.returncode, 0, run.proc.stderr[-2000:])
    doc = _json("--top", "0", run.trace)
    s = doc["summary"]
    assert_eq((s["devices"], s["device_ns"]), (2, 2 * s["span_ns"]))
    assert_eq(s["busy_ns"], 20 * 2_000_000 + 5_000)  # the program's own kernels
    assert_eq(s["idle_ns"], 2 * s["span_ns"] - s["busy_ns"])
    assert 45.0 <= s["idle_pct"] <= 55.0, s
    assert_eq(sum(s["idle_by_cause_ns"].values()), s["idle_ns"])
    assert_eq(sum(x["idle_ns"] for x in doc["idle_by_site"]), s["idle_ns"])
    assert_eq(sorted(d["device"] for d in doc["devices"]), [0, 1])
    assert_eq(sum(d["busy_ns"] for d in doc["devices"]), s["busy_ns"])
    text = report(run.trace)
    assert_eq(text.returncode, 0, text.stderr)
    assert "GPUs busy 40.01 ms" in text.stdout and "of device time: 2 devices x span" in text.stdout, text.stdout
    errs = oracle.check([run.trace], doc)
    assert not errs, "\n".join(e[:400] for e in errs[:20])

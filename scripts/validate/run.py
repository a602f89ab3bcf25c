#!/usr/bin/env python3
"""The body of scripts/gpu-validate.sh: runs each workload under gputrace,
checks its trace against what CUPTI saw and against the script's own
lines, times the PyTorch loop three ways, and writes validation.json and
validation.md into --out. Exit status 0 when every check passed."""
import argparse
import datetime
import json
import os
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
BUILD = os.path.join(ROOT, "build")
GPUTRACE = os.path.join(BUILD, "gputrace")
SHIM = os.path.join(BUILD, "libgputrace.so")
NVCC = os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "bin", "nvcc")

checks = []   # {"workload", "check", "ok", "detail"}
figures = {}  # what was measured, by name


def check(workload, what, ok, detail=""):
    checks.append({"workload": workload, "check": what, "ok": bool(ok), "detail": str(detail)})
    print("%s  %-18s %s%s" % ("ok  " if ok else "FAIL", workload, what, (": " + str(detail)) if detail else ""),
          flush=True)
    return ok


def q(db, sql, *args):
    con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    try:
        return con.execute(sql, args).fetchall()
    finally:
        con.close()


def markers(path):
    out = {}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            m = re.search(r"# @(\w+)\s*$", line)
            if m:
                out[m.group(1)] = n
    return out


def run(argv, env=None, timeout=300, traced_as=None, out=None):
    """Runs argv; traced_as names its traces (DIR/NAME-%p.db). Returns
    (completed process, trace paths, wall seconds)."""
    e = dict(os.environ)
    for k in list(e):
        if k.startswith("GPUTRACE_"):
            del e[k]
    e.update(env or {})
    before = set()
    if traced_as:
        e["LD_PRELOAD"] = SHIM + (" " + e["LD_PRELOAD"] if e.get("LD_PRELOAD") else "")
        e["GPUTRACE_OUTPUT"] = os.path.join(out, traced_as + "-%p.db")
        before = set(os.listdir(out))
    t0 = time.monotonic()
    p = subprocess.run(argv, env=e, capture_output=True, text=True, timeout=timeout)
    wall = time.monotonic() - t0
    traces = []
    if traced_as:
        traces = sorted(os.path.join(out, f) for f in set(os.listdir(out)) - before
                        if f.startswith(traced_as + "-") and f.endswith(".db"))
    return p, traces, wall


def report_json(db):
    r = subprocess.run([GPUTRACE, "report", "--format", "json", "--top", "0", "--min-gap", "1ms", db],
                       capture_output=True, text=True)
    return json.loads(r.stdout) if r.returncode == 0 else None


def linking_checks(name, db):
    """Every GPU record CUPTI delivered is linked to its call, and each
    launch and copy call has exactly its record."""
    check(name, "trace is complete", q(db, "SELECT value FROM meta WHERE key = 'complete'") == [("1",)])
    check(name, "GPU times from CUPTI", q(db, "SELECT value FROM meta WHERE key = 'gpu_timing'") == [("cupti",)],
          q(db, "SELECT value FROM meta WHERE key = 'gpu_timing_detail'"))
    drops = dict(q(db, "SELECT key, value FROM meta WHERE key IN ('dropped_events', 'cupti_dropped_records', "
                       "'dropped_stacks', 'dropped_python_stacks')"))
    check(name, "nothing dropped", all(v == "0" for v in drops.values()), drops)
    for kind, n, linked in q(db, "SELECT kind, count(*), total(linked) FROM gpu_activity GROUP BY kind"):
        check(name, "every %s record CUPTI delivered is linked to its call" % kind, n == int(linked),
              "%d of %d" % (int(linked), n))
    calls = q(db, "SELECT count(*) FROM api_calls WHERE category = 'launch' AND captured = 0 AND result = 0")[0][0]
    with_record = q(db, "SELECT count(DISTINCT g.api_call_id) FROM gpu_activity g JOIN api_calls c "
                        "ON c.id = g.api_call_id WHERE g.kind = 'kernel' AND c.category = 'launch'")[0][0]
    check(name, "kernel launch calls = launch calls CUPTI saw a kernel for", calls == with_record,
          "%d calls, %d with a kernel record" % (calls, with_record))
    copies = q(db, "SELECT count(*) FROM copy_args a JOIN api_calls c ON c.id = a.call_id "
                   "WHERE c.captured = 0 AND c.result = 0 AND a.bytes > 0")[0][0]
    with_copy = q(db, "SELECT count(DISTINCT g.api_call_id) FROM gpu_activity g JOIN api_calls c "
                      "ON c.id = g.api_call_id WHERE g.kind = 'memcpy' AND c.category = 'memcpy'")[0][0]
    check(name, "copy calls = copy calls CUPTI saw a copy for", copies == with_copy,
          "%d calls, %d with a copy record" % (copies, with_copy))
    startup = q(db, "SELECT value FROM meta WHERE key = 'tracer_startup_ns'")
    if startup:
        figures["tracer_startup_ms_%s" % name] = round(int(startup[0][0]) / 1e6, 2)
    return calls, copies


def cuda_cpp(out, simulated):
    src = os.path.join(ROOT, "tests", "progs", "vecadd.cu")
    by_cat = {}
    for cudart in ("shared", "static"):
        name = "vecadd-" + cudart
        if simulated and cudart == "static":
            check(name, "not run on the simulated GPU (NVIDIA's static runtime needs the real driver)", True)
            continue
        exe = os.path.join(out, name)
        b = subprocess.run([NVCC, "-cudart", cudart, "-O1", "-o", exe, src], capture_output=True, text=True)
        if not check(name, "built with nvcc -cudart %s" % cudart, b.returncode == 0, b.stderr[-300:]):
            continue
        plain, _, _ = run([exe])
        p, traces, _ = run([exe], traced_as=name, out=out)
        check(name, "same output and status as untraced", (p.returncode, p.stdout) == (plain.returncode, plain.stdout),
              p.stderr[-300:])
        if not check(name, "one trace", len(traces) == 1, traces):
            continue
        db = traces[0]
        linking_checks(name, db)
        names = dict(q(db, "SELECT name, count(*) FROM kernels GROUP BY name"))
        check(name, "kernels: 2 vec_add, 1 ops::scale (the program's own count)",
              sum(v for k, v in names.items() if k.startswith("vec_add(")) == 2 and
              sum(v for k, v in names.items() if k.startswith("ops::scale(")) == 1 and len(names) == 2, names)
        copies = q(db, "SELECT kind, count(*), sum(bytes) FROM memcpys GROUP BY kind ORDER BY kind")
        check(name, "copies: 1 DtoH and 2 HtoD of 4096 B", copies == [("DtoH", 1, 4096), ("HtoD", 2, 8192)], copies)
        cats = q(db, "SELECT category, count(*) FROM api_calls GROUP BY 1 ORDER BY 1")
        figures["calls_by_category_%s" % name] = ", ".join("%s %d" % c for c in cats)
        figures["calls_by_name_%s" % name] = ", ".join(
            "%s %d" % c for c in q(db, "SELECT name, count(*) FROM api_calls GROUP BY 1 ORDER BY 1"))
        by_cat[cudart] = {c: n for c, n in cats if c in ("launch", "memcpy", "sync", "alloc", "free")}
    if "shared" in by_cat and "static" in by_cat:
        check("vecadd-static", "the static runtime's launches, copies, syncs, allocations and frees all seen, "
              "as many as the shared runtime's", by_cat["static"] == by_cat["shared"], by_cat)


def torch_available():
    r = subprocess.run([sys.executable, "-c", "import torch; print(torch.__version__, torch.cuda.is_available())"],
                       capture_output=True, text=True)
    return r.returncode == 0 and r.stdout.split()[-1] == "True", r.stdout.strip() or r.stderr[-200:]


def torch_loop(out):
    script = os.path.join(HERE, "torch_loop.py")
    m = markers(script)
    steps = 30
    p, traces, _ = run([sys.executable, script, "plain", str(steps), os.path.join(out, "loop-traced.json")],
                       traced_as="torch-loop", out=out)
    if not check("torch-loop", "ran under gputrace", p.returncode == 0, p.stderr[-500:]):
        return
    main = [t for t in traces if q(t, "SELECT count(*) FROM kernels")[0][0] > 0]
    check("torch-loop", "one trace with kernels (DataLoader workers never call CUDA)", len(main) == 1,
          "%d traces, %d with kernels" % (len(traces), len(main)))
    if not main:
        return
    db = main[0]
    linking_checks("torch-loop", db)

    def at(line, sql_filter, kind):
        return q(db, "SELECT m.host_mem, count(*) FROM memcpys m JOIN api_calls c ON c.id = m.api_call_id "
                     "JOIN py_stack_frames f ON f.pystack_id = c.pystack_id AND f.depth = 0 "
                     "WHERE f.file = ? AND f.line = ? AND m.kind = ? " + sql_filter + " GROUP BY 1",
                 script, line, kind)
    got = at(m["pageable_copy"], "", "HtoD")
    check("torch-loop", "each step's pageable H2D copy, at torch_loop.py:%d" % m["pageable_copy"],
          got == [("pageable", steps)], got)
    got = at(m["pinned_copy"], "", "HtoD")
    check("torch-loop", "each step's pinned H2D copy, at torch_loop.py:%d" % m["pinned_copy"],
          got == [("pinned", steps)], got)
    got = at(m["item_sync"], "", "DtoH")
    check("torch-loop", "each step's .item() DtoH copy, at torch_loop.py:%d" % m["item_sync"],
          sum(n for _, n in got) == steps, got)
    r = report_json(db)
    if not check("torch-loop", "gputrace report reads it", r is not None):
        return
    # after the first step: the DataLoader's start (its workers, first
    # imports) leaves the GPU idle before it, for as long as the host takes
    first_step_end = q(db, "SELECT min(end_ns) FROM ranges WHERE name = 'step'")[0][0] or 0
    startup = [g for g in r["idle_gaps"] if g["start_ns"] < first_step_end]
    if startup:
        figures["torch_loop_idle_before_first_step_ms"] = round(max(g["dur_ns"] for g in startup) / 1e6, 1)
    gaps = [g for g in r["idle_gaps"] if g["dur_ns"] >= 150_000_000 and g["start_ns"] >= first_step_end]
    check("torch-loop", "report finds the planted 200 ms stall (after the first step), cause host",
          len(gaps) == 1 and gaps[0]["cause"] == "host", gaps[:2])
    if gaps:
        before = gaps[0]["before"][0] if gaps[0]["before"] else ""
        check("torch-loop", "the last call before the stall is the .item() at torch_loop.py:%d" % m["item_sync"],
              before.startswith("torch_loop.py:%d " % m["item_sync"]), before)
    pageable = [h for h in r["h2d_hotspots"] if h["site"] and
                h["site"][0].startswith("torch_loop.py:%d " % m["pageable_copy"])]
    check("torch-loop", "report's H2D hotspots name the pageable copy's line",
          len(pageable) == 1 and pageable[0]["pageable_bytes"] > 0, pageable[:1])
    steps_seen = q(db, "SELECT count(*) FROM ranges WHERE name = 'step'")[0][0]
    check("torch-loop", "NVTX: each step's torch.cuda.nvtx range seen with LD_PRELOAD alone", steps_seen == steps,
          "%d of %d" % (steps_seen, steps))
    s = r["summary"]
    check("torch-loop", "report finds launch-bound kernels", s["launch_bound"] > 0,
          "%d of %d launches" % (s["launch_bound"], s["launches"]))
    figures["torch_loop_launch_bound"] = "%d of %d launches" % (s["launch_bound"], s["launches"])


def torch_compile_graph(out):
    script = os.path.join(HERE, "torch_compile_graph.py")
    m = markers(script)
    replays = 20
    p, traces, _ = run([sys.executable, script, str(replays)], traced_as="torch-compile", out=out, timeout=400)
    if not check("compile+graph", "ran under gputrace", p.returncode == 0, p.stderr[-500:]):
        return
    main = [t for t in traces if q(t, "SELECT count(*) FROM kernels")[0][0] > 0]
    if not check("compile+graph", "one trace with kernels", len(main) == 1, traces):
        return
    db = main[0]
    linking_checks("compile+graph", db)
    triton = q(db, "SELECT count(*), total(k.time_source = 'gpu') FROM kernels k WHERE k.name LIKE 'triton%'")[0]
    check("compile+graph", "Triton kernels of torch.compile traced, with GPU times", triton[0] > 0 and
          int(triton[1]) == triton[0], triton)
    at_line = q(db, "SELECT count(*) FROM kernels k JOIN api_calls c ON c.id = k.api_call_id JOIN py_stack_frames f "
                    "ON f.pystack_id = c.pystack_id WHERE k.name LIKE 'triton%' AND f.file = ? AND f.line = ?",
                script, m["compiled"])[0][0]
    check("compile+graph", "Triton launches map to torch_compile_graph.py:%d" % m["compiled"], at_line > 0, at_line)
    # the script's innermost frame (CUDAGraph.replay's own Python frame is innermost)
    launches = q(db, "SELECT c.id FROM api_calls c WHERE c.category = 'graph_launch' AND "
                     "(SELECT f.line FROM py_stack_frames f WHERE f.pystack_id = c.pystack_id AND f.file = ? "
                     "ORDER BY f.depth LIMIT 1) = ?", script, m["replay"])
    check("compile+graph", "%d graph replays at torch_compile_graph.py:%d" % (replays, m["replay"]),
          len(launches) == replays, len(launches))
    per = q(db, "SELECT g.api_call_id, count(*) FROM gpu_activity g JOIN api_calls c ON c.id = g.api_call_id "
                "WHERE c.category = 'graph_launch' AND g.kind = 'kernel' GROUP BY 1")
    counts = sorted(set(n for _, n in per))
    check("compile+graph", "each replay's kernels linked to its graph launch, the same number each time",
          len(per) == replays and len(counts) == 1 and counts[0] > 0, counts)
    in_kernels = q(db, "SELECT count(*) FROM kernels WHERE via = 'graph' AND time_source = 'gpu'")[0][0]
    records = sum(n for _, n in per)
    check("compile+graph", "the replays' kernels are rows of kernels, via 'graph'", in_kernels == records,
          "%d rows, %d records" % (in_kernels, records))


def torch_libs(out):
    """cuBLAS, cuDNN, fused attention and ATen's own kernels: each traced
    with its GPU time and linked to the Python line that asked for it."""
    script = os.path.join(HERE, "torch_libs.py")
    m = markers(script)
    reps = 5
    p, traces, _ = run([sys.executable, script, str(reps)], traced_as="torch-libs", out=out, timeout=300)
    if not check("torch-libs", "ran under gputrace", p.returncode == 0, p.stderr[-500:]):
        return
    main = [t for t in traces if q(t, "SELECT count(*) FROM kernels")[0][0] > 0]
    if not check("torch-libs", "one trace with kernels", len(main) == 1, traces):
        return
    db = main[0]
    linking_checks("torch-libs", db)
    # the script's innermost frame: F.layer_norm's own Python frame is innermost
    rows = q(db, "SELECT (SELECT f.line FROM py_stack_frames f WHERE f.pystack_id = c.pystack_id AND f.file = ? "
                 "ORDER BY f.depth LIMIT 1), k.name, k.time_source, k.end_ns - k.start_ns FROM kernels k "
                 "JOIN api_calls c ON c.id = k.api_call_id", script)
    unplaced = [r for r in rows if r[0] is None]
    by_line = {}
    for line, kname, src, dur in rows:
        by_line.setdefault(line, []).append((kname, src, dur))
    names = {}
    for what, line in sorted(m.items(), key=lambda kv: kv[1]):
        ks = by_line.get(line, [])
        gpu = [k for k in ks if k[1] == "gpu"]
        check("torch-libs", "%s (torch_libs.py:%d): kernels traced with GPU times, linked to the line" % (what, line),
              len(ks) >= reps and len(gpu) == len(ks), "%d kernels, %d with GPU times: %s" %
              (len(ks), len(gpu), ", ".join(sorted(set(k[0][:60] for k in ks)))[:300]))
        for kname, _, dur in ks:
            n, t = names.get((what, kname), (0, 0))
            names[(what, kname)] = (n + 1, t + dur)
    figures["torch_libs_kernels_not_at_a_marked_line"] = len(unplaced)
    with open(os.path.join(out, "kernel_names.tsv"), "w") as f:
        f.write("line\tkernel\tlaunches\tgpu_ns\n")
        for (what, kname), (n, t) in sorted(names.items()):
            f.write("%s\t%s\t%d\t%d\n" % (what, kname, n, t))
        for line, kname, _, dur in unplaced:
            f.write("(no marked line)\t%s\t1\t%d\n" % (kname, dur))


def perf_probe(out):
    """Whether perf callchains are allowed on this machine: the sampler
    asked for them (GPUTRACE_SAMPLE_NATIVE=perf) on a busy thread."""
    try:
        with open("/proc/sys/kernel/perf_event_paranoid") as f:
            figures["perf_event_paranoid"] = f.read().strip()
    except OSError as e:
        figures["perf_event_paranoid"] = "unreadable: %s" % e
    script = os.path.join(HERE, "perf_probe.py")
    p, traces, _ = run([sys.executable, script, "3"], traced_as="perf", out=out,
                       env={"GPUTRACE_SAMPLE_NATIVE": "perf", "GPUTRACE_SAMPLE_THREADS": "all"})
    if not check("perf", "ran under gputrace with GPUTRACE_SAMPLE_NATIVE=perf", p.returncode == 0, p.stderr[-300:]):
        return
    main = [t for t in traces if q(t, "SELECT count(*) FROM kernels")[0][0] > 0]
    if not check("perf", "one trace with kernels", len(main) == 1, traces):
        return
    db = main[0]
    native = q(db, "SELECT value FROM meta WHERE key = 'sample_native_stacks'")
    running = q(db, "SELECT count(*), count(stack_id) FROM host_samples WHERE state = 'running'")[0]
    figures["perf_sample_native_stacks"] = native[0][0] if native else "(no meta)"
    figures["perf_running_samples_with_native_stack"] = "%d of %d" % (running[1], running[0])
    figures["perf_stderr"] = p.stderr.strip()[-200:]
    check("perf", "perf callchains: running samples with a native stack", running[1] > 0,
          "%s; %d of %d running samples; stderr: %s" % (figures["perf_sample_native_stacks"], running[1], running[0],
                                                         p.stderr.strip()[-150:]))


def profiler_together(out):
    """torch.profiler inside a traced script: both see the kernels."""
    script = os.path.join(HERE, "torch_loop.py")
    steps = 30
    dest = os.path.join(out, "loop-both.json")
    p, traces, _ = run([sys.executable, script, "profile", str(steps), dest], traced_as="both", out=out)
    if not check("profiler+gputrace", "torch.profiler ran inside a traced script", p.returncode == 0,
                 p.stderr[-500:]):
        return
    with open(dest) as f:
        seen = json.load(f).get("profiler_gpu_events", 0)
    main = [t for t in traces if q(t, "SELECT count(*) FROM kernels")[0][0] > 0]
    if not check("profiler+gputrace", "gputrace's trace has the kernels", len(main) == 1, traces):
        return
    linking_checks("profiler+gputrace", main[0])
    kernels = q(main[0], "SELECT count(*) FROM kernels WHERE time_source = 'gpu'")[0][0]
    check("profiler+gputrace", "the profiler saw GPU events too", seen > 0,
          "profiler %d GPU events, gputrace %d kernels" % (seen, kernels))
    figures["profiler_gpu_events_vs_gputrace_kernels"] = "%d / %d" % (seen, kernels)


def standby_idle(out):
    """GPUTRACE_TRIGGER=idle>50% with the real NVML: one window, opened
    during the planted 3 s stall, saying how idle the GPU was."""
    script = os.path.join(HERE, "torch_idle.py")
    dest = os.path.join(out, "idle.json")
    p, traces, _ = run([sys.executable, script, dest], traced_as="idle", out=out,
                       env={"GPUTRACE_MODE": "standby", "GPUTRACE_TRIGGER": "idle>50%",
                            "GPUTRACE_TRIGGER_DURATION": "2s", "GPUTRACE_CONTROL_DIR": os.path.join(out, "ctl")})
    if not check("standby-idle", "ran in standby with the idle rule", p.returncode == 0, p.stderr[-300:]):
        return
    check("standby-idle", "NVML found (no warning)", p.stderr.strip() == "", p.stderr[-300:])
    with open(dest) as f:
        stall = json.load(f)
    if not check("standby-idle", "one window", len(traces) == 1, traces):
        return
    m = dict(q(traces[0], "SELECT key, value FROM meta"))
    ws = int(m.get("window_start_ns", 0))
    check("standby-idle", "opened during the stall", stall["stall_start_ns"] < ws < stall["stall_end_ns"],
          "%.3f s into a 3 s stall" % ((ws - stall["stall_start_ns"]) / 1e9))
    why = m.get("window_trigger", "")
    check("standby-idle", "meta.window_trigger says how idle", why.startswith("idle>50%: GPU "), why)
    figures["idle_window_opened_s_into_stall"] = round((ws - stall["stall_start_ns"]) / 1e9, 3)


def timing(out):
    script = os.path.join(HERE, "torch_loop.py")
    steps = 200
    res = {}
    for mode in ("untraced", "gputrace", "pytorch profiler", "gputrace + pytorch profiler"):
        dest = os.path.join(out, "loop-%s.json" % mode.replace(" ", "-").replace("+", "and"))
        argv = [sys.executable, script, "profile" if "profiler" in mode else "plain", str(steps), dest]
        p, _, _ = run(argv, traced_as="timing" if "gputrace" in mode else None, out=out)
        if not check("timing", "loop ran %s" % mode, p.returncode == 0, p.stderr[-300:]):
            return
        with open(dest) as f:
            t = json.load(f)["step_ns"]
        # steady state: after 10 warm-up steps, the stall step left out
        res[mode] = statistics.median(t[10:])
    base = res["untraced"]
    for mode, ns in res.items():
        key = mode.replace(" + ", "_and_").replace(" ", "_")
        figures["step_%s_us" % key] = round(ns / 1e3, 1)
        figures["step_%s_ratio" % key] = round(ns / base, 3)
    check("timing", "median step: untraced %.1f us, gputrace %.1f us (x%.2f), PyTorch profiler %.1f us (x%.2f)"
          % (base / 1e3, res["gputrace"] / 1e3, res["gputrace"] / base, res["pytorch profiler"] / 1e3,
             res["pytorch profiler"] / base), True)


def environment():
    env = {"date": datetime.date.today().isoformat()}
    smi = shutil.which("nvidia-smi")
    if smi:
        r = subprocess.run([smi, "--query-gpu=name,driver_version", "--format=csv,noheader"], capture_output=True,
                           text=True)
        env["gpu"] = r.stdout.strip()
    r = subprocess.run([NVCC, "--version"], capture_output=True, text=True)
    env["nvcc"] = r.stdout.strip().splitlines()[-1] if r.returncode == 0 else "not found"
    r = subprocess.run([sys.executable, "-c", "import sys, torch, triton; print(sys.version.split()[0], "
                        "torch.__version__, torch.version.cuda, triton.__version__)"], capture_output=True, text=True)
    env["python, torch, torch CUDA, triton"] = r.stdout.strip() if r.returncode == 0 else "not importable"
    return env


def write_results(out, env, simulated):
    with open(os.path.join(out, "validation.json"), "w") as f:
        json.dump({"environment": env, "simulated": simulated, "checks": checks, "figures": figures}, f, indent=1)
    lines = ["# gputrace on a real GPU" + (" (SIMULATED GPU: a dry run of the script)" if simulated else ""), ""]
    lines += ["| | |", "| --- | --- |"] + ["| %s | %s |" % (k, v) for k, v in env.items()] + [""]
    lines += ["| workload | check | result | detail |", "| --- | --- | --- | --- |"]
    lines += ["| %s | %s | %s | %s |" % (c["workload"], c["check"], "ok" if c["ok"] else "**FAIL**",
                                         c["detail"].replace("|", "/")[:200]) for c in checks]
    if figures:
        lines += ["", "| figure | value |", "| --- | --- |"] + ["| %s | %s |" % kv for kv in figures.items()]
    with open(os.path.join(out, "validation.md"), "w") as f:
        f.write("\n".join(lines) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--simulated", action="store_true")
    a = ap.parse_args()
    out = os.path.abspath(a.out)
    os.makedirs(out, exist_ok=True)
    t0 = time.monotonic()
    env = environment()
    cuda_cpp(out, a.simulated)
    if a.simulated and not os.environ.get("GPUTRACE_VALIDATE_TORCH"):
        check("pytorch", "not run on the simulated GPU (GPUTRACE_VALIDATE_TORCH=1 runs it)", True)
    else:
        ok, why = torch_available()
        if check("pytorch", "PyTorch with CUDA importable", ok, why):
            for workload in (torch_loop, torch_libs, torch_compile_graph, profiler_together, perf_probe,
                             standby_idle, timing):
                try:
                    workload(out)
                except Exception as e:  # one workload's surprise must not cost the others their run
                    check(workload.__name__, "raised %s" % type(e).__name__, False, str(e)[-300:])
    figures["wall_s"] = round(time.monotonic() - t0, 1)
    write_results(out, env, a.simulated)
    failed = [c for c in checks if not c["ok"]]
    print("%d checks, %d failed; %s" % (len(checks), len(failed), os.path.join(out, "validation.md")))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()

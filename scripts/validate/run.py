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
    return calls, copies


def cuda_cpp(out, simulated):
    src = os.path.join(ROOT, "tests", "progs", "vecadd.cu")
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
    gaps = [g for g in r["idle_gaps"] if g["dur_ns"] >= 150_000_000]
    check("torch-loop", "report finds the planted 200 ms stall, cause host",
          len(gaps) == 1 and gaps[0]["cause"] == "host", gaps[:1])
    if gaps:
        before = gaps[0]["before"][0] if gaps[0]["before"] else ""
        check("torch-loop", "the last call before the stall is the .item() at torch_loop.py:%d" % m["item_sync"],
              before.startswith("torch_loop.py:%d " % m["item_sync"]), before)
    pageable = [h for h in r["h2d_hotspots"] if h["site"] and
                h["site"][0].startswith("torch_loop.py:%d " % m["pageable_copy"])]
    check("torch-loop", "report's H2D hotspots name the pageable copy's line",
          len(pageable) == 1 and pageable[0]["pageable_bytes"] > 0, pageable[:1])
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
    launches = q(db, "SELECT c.id FROM api_calls c JOIN py_stack_frames f ON f.pystack_id = c.pystack_id "
                     "AND f.depth = 0 WHERE c.category = 'graph_launch' AND f.file = ? AND f.line = ?",
                 script, m["replay"])
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
    for mode in ("untraced", "gputrace", "pytorch profiler"):
        dest = os.path.join(out, "loop-%s.json" % mode.replace(" ", "-"))
        argv = [sys.executable, script, "profile" if mode == "pytorch profiler" else "plain", str(steps), dest]
        p, _, _ = run(argv, traced_as="timing" if mode == "gputrace" else None, out=out)
        if not check("timing", "loop ran %s" % mode, p.returncode == 0, p.stderr[-300:]):
            return
        with open(dest) as f:
            t = json.load(f)["step_ns"]
        # steady state: after 10 warm-up steps, the stall step left out
        res[mode] = statistics.median(t[10:])
    base = res["untraced"]
    for mode, ns in res.items():
        figures["step_%s_us" % mode.replace(" ", "_")] = round(ns / 1e3, 1)
        figures["step_%s_ratio" % mode.replace(" ", "_")] = round(ns / base, 3)
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
    if a.simulated:
        check("pytorch", "not run on the simulated GPU", True)
    else:
        ok, why = torch_available()
        if check("pytorch", "PyTorch with CUDA importable", ok, why):
            torch_loop(out)
            torch_compile_graph(out)
            standby_idle(out)
            timing(out)
    figures["wall_s"] = round(time.monotonic() - t0, 1)
    write_results(out, env, a.simulated)
    failed = [c for c in checks if not c["ok"]]
    print("%d checks, %d failed; %s" % (len(checks), len(failed), os.path.join(out, "validation.md")))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()

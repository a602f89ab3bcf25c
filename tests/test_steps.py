"""The report's steps section (issue 19; docs/report.md, Steps), on
tests/progs/steps_work.c: training steps marked with NVIDIA's NVTX v3
headers, one of them slow with a stall planted in load_batch_slow. Each
expected answer is written from what the program does; every figure is
then checked against tests/oracle.py (Process.steps: plain SQL over the
views and interval arithmetic, apart from the C analyzer)."""
import json
import os
import subprocess
import sys

from gtlib import GPUTRACE, assert_eq, prog, tmpdir
from test_nvtx import run_nvtx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import oracle  # noqa: E402

STEPS, SLOW, STALL_US, KERNEL_NS = 8, 5, 50000, 200000
MB = 1 << 20


def steps_run(naming, steps=STEPS, slow=SLOW, stall_us=STALL_US):
    run = run_nvtx([prog("steps_work"), naming, str(steps), str(slow), str(stall_us)],
                   env={"FAKECUDA_KERNEL_NS": str(KERNEL_NS)})
    return run


def report(trace, *args):
    r = subprocess.run([GPUTRACE, "report", "--format", "json", "--top", "0"] + list(args) + [trace],
                       capture_output=True, text=True)
    assert_eq(r.returncode, 0, r.stderr)
    return json.loads(r.stdout)


def check_planted(st, first_number):
    """What steps_work plants, read from the program: STEPS steps (the
    nested "step" ranges are not steps), step SLOW the slowest, slow by
    GPU idle while the host was outside CUDA in load_batch_slow; every step
    one sync and one 1 MiB copy."""
    assert_eq(st["count"], STEPS, "steps")
    slowest = st["slowest"]
    assert 1 <= len(slowest) <= 5, slowest
    top = slowest[0]
    assert_eq(top["number"], first_number + SLOW, "the slowest step's number")
    assert top["dur_ns"] >= STALL_US * 1000, top
    assert_eq(st["max_ns"], top["dur_ns"])
    assert st["p50_ns"] < STALL_US * 1000 <= st["p99_ns"], st
    for x in slowest:
        assert_eq((x["syncs"], x["copies"], x["copy_bytes"]), (1, 1, MB), "step %d" % x["number"])
        assert x["dur_ns"] > st["p50_ns"], x
    over = top["over_median"][0]
    assert_eq(over["what"], "host", "what the slow step spent more time on")
    assert over["ns"] >= STALL_US * 1000 and over["over_ns"] == over["ns"] - over["median_ns"], over
    assert "load_batch_slow" in over["site"][0], over
    # the slowest first
    durs = [x["dur_ns"] for x in slowest]
    assert_eq(durs, sorted(durs, reverse=True))


def test_steps_planted_and_against_the_oracle():
    run = steps_run("train_step")
    assert_eq(run.proc.stdout, "steps_work: %d steps\n" % STEPS)
    rc, doc, err = oracle.run_report([run.trace])
    assert_eq(rc, 0, err)
    assert_eq(len(doc["steps"]), 1)
    st = doc["steps"][0]
    assert_eq(st["rule"], None)
    # named "train_step", without numbers: numbered by start from 0
    check_planted(st, 0)
    errs = oracle.check([run.trace], doc)
    assert not errs, "the report disagrees with the oracle:\n  " + "\n  ".join(errs[:20])
    # --top leaves the steps section whole
    top1 = report(run.trace, "--top", "1")
    assert_eq(top1["steps"], doc["steps"])
    # text and HTML
    text = subprocess.run([GPUTRACE, "report", run.trace], capture_output=True, text=True).stdout
    assert "Steps (NVTX ranges named like train_step: %d)" % STEPS in text, text
    assert ("  step %d (train_step) at +" % SLOW) in text and "in load_batch_slow" in text, text
    assert "GPU idle, host outside CUDA" in text, text
    html = os.path.join(tmpdir(), "r.html")
    subprocess.run([GPUTRACE, "report", "--format", "html", "-o", html, run.trace], check=True)
    with open(html) as f:
        page = f.read()
    assert "<h2 id=steps>Steps (%d)</h2>" % STEPS in page and "load_batch_slow" in page


def test_steps_profiler_step_numbers_from_names():
    run = steps_run("profiler")
    rc, doc, err = oracle.run_report([run.trace])
    assert_eq(rc, 0, err)
    st = doc["steps"][0]
    check_planted(st, 100)
    assert all(x["name"] == "ProfilerStep#%d" % x["number"] for x in st["slowest"]), st["slowest"]
    errs = oracle.check([run.trace], doc)
    assert not errs, "the report disagrees with the oracle:\n  " + "\n  ".join(errs[:20])


def test_steps_given_by_glob():
    """"iter N" is no step name: without --step the nested "step" ranges
    are the steps; --step 'iter*' takes the iterations."""
    run = steps_run("iter")
    doc = report(run.trace)
    st = doc["steps"][0]
    assert_eq(st["count"], STEPS)
    assert all(x["name"] == "step" for x in st["slowest"]), st["slowest"]
    errs = oracle.check([run.trace], doc)
    assert not errs, "\n  ".join(errs[:20])
    doc = report(run.trace, "--step", "iter*")
    st = doc["steps"][0]
    assert_eq(st["rule"], "iter*")
    check_planted(st, 0)
    c = oracle.Checker()
    oracle.check_steps(c, doc["steps"], [oracle.Process(run.trace).steps("iter*")])
    assert not c.errs, "\n  ".join(c.errs[:20])
    text = subprocess.run([GPUTRACE, "report", "--step", "iter*", run.trace], capture_output=True, text=True).stdout
    assert "Steps (NVTX ranges named iter*: %d)" % STEPS in text, text
    # a glob that names no range: no section
    assert_eq(report(run.trace, "--step", "nothing*")["steps"], [])
    r = subprocess.run([GPUTRACE, "report", "--step", "", run.trace], capture_output=True, text=True)
    assert_eq(r.returncode, 2, r.stderr)
    assert "--step" in r.stderr, r.stderr


def test_steps_name_rule():
    """steps_work names: of its 11 names, 6 are step names by the rule
    (Step 3, step#4, train_step_5, TRAINING_STEP-7, ProfilerStep#9,
    step12); step_, stepper, my_step, "step 1a" and warmup are not."""
    run = run_nvtx([prog("steps_work"), "names"])
    assert_eq(run.proc.stdout, "steps_work: names\n")
    rc, doc, err = oracle.run_report([run.trace])
    assert_eq(rc, 0, err)
    st = doc["steps"][0]
    assert_eq(st["count"], 6)
    assert all(x["name"] in ("Step 3", "step#4", "train_step_5", "TRAINING_STEP-7", "ProfilerStep#9", "step12")
               for x in st["slowest"]), st["slowest"]
    errs = oracle.check([run.trace], doc)
    assert not errs, "\n  ".join(errs[:20])


def test_steps_none_without_step_ranges():
    run = run_nvtx([prog("nvtx_phases"), "2", "100"])
    rc, doc, err = oracle.run_report([run.trace])
    assert_eq(rc, 0, err)
    assert_eq(doc["steps"], [])
    text = subprocess.run([GPUTRACE, "report", run.trace], capture_output=True, text=True).stdout
    assert "Steps (" not in text


# ---------------------------------------------------------------------------
# Windows: report --from/--to/--range (docs/report.md, Windows)


def _step_bounds(run):
    """The train_step ranges by start, from the view (the program pushes
    one per step on its main thread, nothing nested in another)."""
    return run.q("SELECT start_ns, end_ns FROM ranges WHERE name = 'train_step' ORDER BY start_ns")


def _window_check(trace, doc, window):
    errs = oracle.check([trace], doc, procs=[oracle.Process(trace, window=window)])
    assert not errs, "the windowed report disagrees with the oracle:\n  " + "\n  ".join(errs[:20])


def test_window_steps_times_and_ranges_against_the_oracle():
    run = steps_run("train_step")
    steps = _step_bounds(run)
    assert_eq(len(steps), STEPS)
    start = int(run.q1("SELECT value FROM meta WHERE key = 'start_ns'"))
    first = int(run.q1("SELECT min(start_ns) FROM api_calls"))
    cases = [
        (["--from", "step:2", "--to", "step:5"], [(steps[2][0], steps[5][1])]),
        (["--from", "step:5", "--to", "step:5"], [(steps[5][0], steps[5][1])]),
        # 20 to 40 ms into the run (its start-up, longer on a loaded machine,
        # before): inside it, whatever starts there
        (["--from", "%dns" % (first - start + 20000000), "--to", "%dns" % (first - start + 40000000)],
         [(first + 20000000, first + 40000000)]),
        (["--from", "step:6"], [(steps[6][0], 2 ** 63 - 1)]),
        (["--to", "step:1"], [(0, steps[1][1])]),
        (["--range", "train_step"], [tuple(x) for x in oracle.union(steps)]),
        (["--range", "train_step", "--from", "step:3", "--to", "step:4"],
         [tuple(x) for x in oracle.union(steps[3:5])]),
        (["--range", "warmup"], run.q("SELECT start_ns, end_ns FROM ranges WHERE name = 'warmup'")),
    ]
    for args, window in cases:
        doc = report(run.trace, *args)
        w = doc["traces"][0]["window"]
        assert_eq((w["from_ns"], w["to_ns"], w["intervals"]), (window[0][0], window[-1][1], len(window)), args)
        _window_check(run.trace, doc, window)
        # exactly the calls that started in it, by the view
        want = {}
        for name, s0 in run.q("SELECT name, start_ns FROM api_calls"):
            if any(a <= s0 < b for a, b in window):
                want[name] = want.get(name, 0) + 1
        assert_eq({a["name"]: a["count"] for a in doc["api"]}, want, args)
    # past the run's end nothing starts: an empty window is an error
    # (docs/report.md, Windows), not a report of nothing
    r = subprocess.run([GPUTRACE, "report", "--format", "json", "--from", "10s", run.trace], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 2 and "window is empty" in r.stderr and r.stdout == "", (r.returncode, r.stderr)
    # the whole report is the report without a window
    whole = report(run.trace)
    assert_eq(whole["traces"][0]["window"], None)


def test_window_of_the_slow_step_finds_the_stall():
    """step 5 alone: its 50 ms GPU idle is the host's (the window's start
    is no start-up), named at load_batch_slow; its steps section holds
    step 5 only."""
    run = steps_run("train_step")
    doc = report(run.trace, "--from", "step:%d" % SLOW, "--to", "step:%d" % SLOW)
    s = doc["summary"]
    assert s["idle_by_cause_ns"]["host"] >= STALL_US * 1000, s
    assert_eq(s["idle_by_cause_ns"]["startup"], 0)
    f = doc["findings"][0]
    assert_eq(f["kind"], "idle_host")
    assert "load_batch_slow" in f["site"][0], f
    assert_eq([(x["count"], x["p50_ns"]) for x in doc["steps"]], [(1, s["span_ns"])])
    assert_eq([p["name"] for p in doc["phases"]], ["train_step"])
    text = subprocess.run([GPUTRACE, "report", "--from", "step:%d" % SLOW, "--to", "step:%d" % SLOW, run.trace],
                          capture_output=True, text=True).stdout
    assert "! window: from " in text, text


def test_window_bad_bounds_exit_2():
    run = steps_run("train_step")
    for args, words in [
        (["--from", "step:99"], "no step 99 (its steps are numbered 0 to %d)" % (STEPS - 1)),
        (["--range", "nosuch*"], "no range of that name"),
        (["--from", "2s", "--to", "1s"], "the window is empty"),
        (["--from", "step:3", "--to", "step:2"], "the window is empty"),
        (["--from", "abc"], "--from must be a time"),
        (["--to", "step:"], "--to must be a time"),
        (["--range", ""], "--range needs"),
    ]:
        r = subprocess.run([GPUTRACE, "report"] + args + [run.trace], capture_output=True, text=True)
        assert_eq(r.returncode, 2, (args, r.stderr))
        assert words in r.stderr, (args, r.stderr)
    plain = run_nvtx([prog("rt_basic")])
    r = subprocess.run([GPUTRACE, "report", "--range", "x", plain.trace], capture_output=True, text=True)
    assert_eq(r.returncode, 2, r.stderr)
    assert "no range of that name" in r.stderr, r.stderr
    r = subprocess.run([GPUTRACE, "report", "--from", "step:0", plain.trace], capture_output=True, text=True)
    assert_eq(r.returncode, 2, r.stderr)
    assert "the trace has no steps" in r.stderr, r.stderr


def test_audit_step_p99_and_window_budgets():
    run = steps_run("train_step")
    durs = sorted(e - s for s, e in _step_bounds(run))
    p99 = oracle.nearest_rank(durs, 99)

    def audit(*args):
        return subprocess.run([GPUTRACE, "audit"] + list(args) + [run.trace], capture_output=True, text=True)
    r = audit("--max-step-p99", "%dns" % p99)
    assert_eq(r.returncode, 0, r.stdout + r.stderr)
    assert r.stdout.startswith("ok   max-step-p99: ") and "(%d steps)" % STEPS in r.stdout, r.stdout
    r = audit("--max-step-p99", "%dns" % (p99 - 1))
    assert_eq(r.returncode, 1, r.stdout + r.stderr)
    assert r.stdout.startswith("FAIL max-step-p99: "), r.stdout
    assert "(slowest: step %d, " % SLOW in r.stdout and "host outside CUDA at " in r.stdout, r.stdout
    assert "in load_batch_slow" in r.stdout, r.stdout
    # the first five steps hold no slow one: p99 is their longest
    first5 = sorted(e - s for s, e in _step_bounds(run)[:5])
    r = audit("--to", "step:4", "--max-step-p99", "%dns" % first5[-1])
    assert_eq(r.returncode, 0, r.stdout + r.stderr)
    assert "(5 steps)" in r.stdout, r.stdout
    # a budget for a window: the GPU idle of step SLOW, from the oracle
    window = [(s, e) for s, e in _step_bounds(run)[SLOW:SLOW + 1]]
    idle = oracle.Process(run.trace, window=window).summary()["idle_pct"]
    assert idle > 90, idle
    r = audit("--range", "train_step", "--from", "step:%d" % SLOW, "--to", "step:%d" % SLOW,
              "--max-idle-pct", "%.3f" % (idle - 0.5))
    assert_eq(r.returncode, 1, r.stdout + r.stderr)
    assert "FAIL max-idle-pct: " in r.stdout and "load_batch_slow" in r.stdout, r.stdout
    r = audit("--range", "train_step", "--from", "step:%d" % SLOW, "--to", "step:%d" % SLOW,
              "--max-idle-pct", "%.3f" % min(100, idle + 0.5))
    assert_eq(r.returncode, 0, r.stdout + r.stderr)
    # no steps, no such step: status 2
    plain = run_nvtx([prog("rt_basic")])
    r = subprocess.run([GPUTRACE, "audit", "--max-step-p99", "1ms", plain.trace], capture_output=True, text=True)
    assert_eq(r.returncode, 2, r.stdout + r.stderr)
    assert "max-step-p99 needs steps" in r.stderr, r.stderr
    r = audit("--from", "step:99", "--max-idle-pct", "50")
    assert_eq(r.returncode, 2, r.stdout + r.stderr)
    assert "no step 99" in r.stderr, r.stderr


def test_export_steps_and_ranges_are_times():
    """export --from step:N / --range NAME: the same file as the times
    they stand for, read from the view; a bad one writes nothing."""
    run = steps_run("train_step")
    steps = _step_bounds(run)
    start = int(run.q1("SELECT value FROM meta WHERE key = 'start_ns'"))
    d = tmpdir()

    def export(name, *args):
        out = os.path.join(d, name)
        r = subprocess.run([GPUTRACE, "export", "--format", "chrome-json", "-o", out] + list(args) + [run.trace],
                           capture_output=True, text=True)
        assert_eq(r.returncode, 0, r.stderr)
        with open(out) as f:
            return f.read()
    a = export("a.json", "--from", "step:2", "--to", "step:5")
    b = export("b.json", "--from", "%dns" % (steps[2][0] - start), "--to", "%dns" % (steps[5][1] - start))
    assert_eq(a, b)
    a = export("c.json", "--range", "train_step", "--from", "step:6")
    b = export("d.json", "--from", "%dns" % (steps[6][0] - start), "--to", "%dns" % (steps[7][1] - start))
    assert_eq(a, b)
    # exactly the calls that started in the window, and the ranges
    evs = json.loads(a)["traceEvents"]
    calls = [e for e in evs if e.get("ph") == "X" and e.get("name", "").startswith("cuda")]
    want = run.q("SELECT count(*) FROM api_calls WHERE start_ns >= ? AND start_ns < ?", steps[6][0], steps[7][1])
    assert_eq(len(calls), want[0][0])
    assert_eq(sorted(e["name"] for e in evs if e.get("cat") == "nvtx"), sorted(["train_step", "step"] * 2))
    out = os.path.join(d, "bad.json")
    r = subprocess.run([GPUTRACE, "export", "-o", out, "--range", "nosuch", run.trace], capture_output=True,
                       text=True)
    assert_eq(r.returncode, 2, r.stderr)
    assert "no range of that name" in r.stderr and not os.path.exists(out), r.stderr

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

"""make demo (issue 31, item 4): demo/train.cu built as a program is built
to be profiled (nvcc -O2 -g, Makefile) and run by scripts/demo.sh; the
first report anyone sees names each planted problem at the program's own
file, line and function: the stall and the pageable copy in load_batch,
the launch-bound kernels in forward, the sync in step_end. The expected
lines are read from demo/train.cu, not from the tracer."""
import json
import os
import re
import subprocess

from gtlib import BUILD, GPUTRACE, ROOT, assert_eq, base_env, tmpdir

SRC = os.path.join(ROOT, "demo", "train.cu")


def _line_of(text):
    """The line of demo/train.cu that holds `text` (once)."""
    with open(SRC) as f:
        hits = [n for n, line in enumerate(f, 1) if text in line]
    assert len(hits) == 1, (text, hits)
    return hits[0]


def _dwarf(exe):
    out = subprocess.run(["readelf", "-S", exe], capture_output=True, text=True, check=True).stdout
    return ".debug_line" in out and ".debug_info" in out


def test_demo_report_names_the_planted_functions():
    exe = os.path.join(BUILD, "demo", "train")
    assert _dwarf(exe), "build/demo/train is built with -g"
    out_dir = tmpdir()
    env = base_env({"DEMO_DIR": out_dir})
    del env["FAKECUDA_LAUNCH_NS"]  # demo.sh sets the simulated GPU's costs itself
    r = subprocess.run([os.path.join(ROOT, "scripts", "demo.sh")], env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    copy = "train.cu:%d in load_batch(" % _line_of("check(cudaMemcpy(")
    launch = "train.cu:%d in forward(float*, int)" % _line_of("tiny_op<<<")
    sync = "train.cu:%d in step_end()" % _line_of("check(cudaDeviceSynchronize()")
    # record's summary line: the top finding, at the data loader's copy
    top = [line for line in r.stderr.splitlines() + r.stdout.splitlines() if "top finding" in line]
    assert top and copy in top[0], top
    # the text report
    for want in (copy, launch, sync):
        assert "at " + want in r.stdout, (want, r.stdout)
    assert "[clone" not in r.stdout and "__device_stub" not in r.stdout, r.stdout
    # and each finding at its planted function
    trace = re.search(r"demo: the trace is (\S+)", r.stdout).group(1)
    rep = json.loads(subprocess.run([GPUTRACE, "report", "--format", "json", trace], capture_output=True,
                                    text=True, check=True).stdout)
    where = {f["kind"]: f["site"][0] for f in rep["findings"]}
    for kind, want in (("idle_host", copy), ("pageable_h2d", copy), ("idle_launch", launch)):
        assert kind in where and where[kind].startswith(want), (kind, where)
    assert_eq([s["site"][0] for s in rep["syncs"]], [sync], "sync site")
    assert rep["launch_overhead"]["sites"][0]["site"][0] == launch, rep["launch_overhead"]["sites"]

"""Why the GPU waited when the thread that launches was itself only waiting
(issue 36; docs/report.md, "Host during the gap"): every thread is sampled
by default, a Python thread's stack whether or not it ever called CUDA, and
a gap whose launching thread waited on a lock, a queue, a condition or
slept names the threads that ran meanwhile, with their shares; "GPU idle
by host stack" gives them the waiting part of the gap.

The truth is the programs' own: the lines carrying their marker comments,
and their logs of the time each loader spent building batches. Every
figure is recomputed from host_samples by tests/oracle.py
(oracle_threads.py)."""
import json
import os
import re
import subprocess

import gtlib
import oracle
import oracle_threads
import test_python as tp
from gtlib import GPUTRACE, ROOT, assert_eq, prog, query, run_traced, tmpdir

MS = 1_000_000
MIN_GAP = 10 * MS
WAITED = oracle_threads.WAITED


def _report(db, fmt="json"):
    r = subprocess.run([GPUTRACE, "report", "--format", fmt, "--top", "0", "--min-gap", "10ms", db],
                       capture_output=True, text=True, timeout=300)
    assert_eq(r.returncode, 0, r.stderr[-2000:])
    return json.loads(r.stdout) if fmt == "json" else r.stdout


def _log(stderr, prog_name):
    """{key: value} of the program's own log lines on stderr."""
    out = {}
    for m in re.finditer(r"^%s: (\S+) (\S+)$" % prog_name, stderr, re.M):
        out[m.group(1)] = float(m.group(2))
    return out


def _waited_gaps(doc):
    return [g for g in doc["idle_gaps"] if g["host"] and g["host"]["waited"] and g["host"]["others_samples"]]


def _rows(doc):
    return {r["stack"]: r for r in doc["idle_by_host_stack"]}


def _check_oracle(db, doc):
    errs = oracle.check([db], doc, MIN_GAP)
    assert not errs, "\n".join(e[:400] for e in errs[:20])


def _py_run(script, *args):
    minor = 11 if 11 in tp.supported() else max(tp.supported())
    return minor, tp.run_py(minor, script, *args)


def test_python_loader_that_never_calls_cuda_is_named():
    """The main thread takes batches from a queue.Queue and copies each to
    the GPU; a loader thread that never calls CUDA builds each with about
    60 ms of zlib: each gap says the main thread waited, and names the
    loader's line, which gets the idle time its builds took; under every
    CPython 3.11 or later found (3.10 keeps no thread id in its thread
    states: its loader has no Python stack)."""
    steps = 8
    m = tp.markers("queue_loader.py")
    for minor in sorted(x for x in tp.supported() if x >= 11):
        run = tp.run_py(minor, "queue_loader.py", 1, steps, 60)
        db = run.trace
        assert_eq(run.proc.stdout, "queue_loader: done\n")
        built = _log(run.proc.stderr, "queue_loader")["build"] * 1e9
        assert_eq(query(db, "SELECT value FROM meta WHERE key = 'sample_threads'")[0][0], "all")
        doc = _report(db)
        build = "queue_loader.py:%d in build" % m["build"]
        waited = _waited_gaps(doc)
        assert len(waited) >= steps - 2, (minor, [g["host"] for g in doc["idle_gaps"]])
        for g in waited:
            assert g["host"]["stacks"][0]["stack"].endswith("(blocked in futex)"), (minor, g["host"])
        named = [g for g in waited if g["host"]["others"][0]["frame"] == build]
        assert len(named) >= steps - 2, (minor, build, [g["host"]["others"] for g in waited])
        # the loader's share of the idle: about what its builds took, by its log
        top = doc["idle_by_host_stack"][0]
        assert_eq(top["stack"], "%s %s" % (build, WAITED), (minor, doc["idle_by_host_stack"][:4]))
        assert 0.5 * built <= top["idle_ns"] <= built + steps * 10 * MS, (minor, top, built)
        text = _report(db, "text")
        assert "the launching thread waited; other threads ran" in text, text[-3000:]
        assert re.search(r"thread \d+: %s" % re.escape(build), text), text[-3000:]
        html = _report(db, "html")
        assert "the launching thread waited; meanwhile ran:" in html
        assert WAITED in html  # the flame graph's leaves and the table
        _check_oracle(db, doc)


def test_record_closing_finding_names_the_loader():
    """`gputrace record`'s closing finding says the launching thread
    waited, and names the loader's line."""
    m = tp.markers("queue_loader.py")
    minor = 11 if 11 in tp.supported() else max(tp.supported())
    exe, include = tp.interpreters()[minor]
    d = tmpdir()
    env = gtlib.base_env({"PYTHONPATH": tp.build_ext(minor, include), "PYTHONDONTWRITEBYTECODE": "1"})
    env.pop("LD_PRELOAD", None)
    r = subprocess.run([GPUTRACE, "record", "-o", os.path.join(d, "t.db"), "--", exe,
                        os.path.join(tp.PYDIR, "queue_loader.py"), "1", "6", "60"],
                       env=env, capture_output=True, text=True, timeout=300)
    assert_eq(r.returncode, 0, r.stderr[-2000:])
    line = [x for x in r.stderr.splitlines() if x.startswith("gputrace: top finding:")]
    assert line, r.stderr
    assert "the launching thread waited" in line[0], line[0]
    assert "queue_loader.py:%d in build" % m["build"] in line[0], line[0]


def test_python_two_loaders_the_slow_one_first():
    """Two loaders take turns, one five times slower: the slow one's line
    is the top cause, and the two share the idle as their logs say."""
    steps = 6
    m = tp.markers("queue_loader.py")
    _, run = _py_run("queue_loader.py", 2, steps, 80)
    db = run.trace
    log = _log(run.proc.stderr, "queue_loader")
    slow, fast = log["build_slow"], log["build_fast"]
    doc = _report(db)
    slow_at = "queue_loader.py:%d in build_slow" % m["build_slow"]
    fast_at = "queue_loader.py:%d in build_fast" % m["build_fast"]
    waited = _waited_gaps(doc)
    assert len(waited) >= steps - 2, [g["host"] for g in doc["idle_gaps"]]
    firsts = [g["host"]["others"][0]["frame"] for g in waited]
    assert firsts.count(slow_at) >= steps - 2, firsts
    rows = _rows(doc)
    assert_eq(doc["idle_by_host_stack"][0]["stack"], "%s %s" % (slow_at, WAITED), doc["idle_by_host_stack"][:4])
    got_slow = rows["%s %s" % (slow_at, WAITED)]["idle_ns"]
    got_fast = rows.get("%s %s" % (fast_at, WAITED), {"idle_ns": 0})["idle_ns"]
    # while the main thread waits for the slow batch the fast loader
    # builds its next one and then waits to put it: both builds fall in
    # the gaps, shared as their times (a CPU each, or both queued)
    want = slow / (slow + fast)
    share = got_slow / (got_slow + got_fast)
    assert abs(share - want) <= 0.15, (share, want, log)
    _check_oracle(db, doc)


def _cpp_marker():
    with open(os.path.join(ROOT, "tests", "progs", "queue_loader.cpp")) as f:
        lines = [i + 1 for i, t in enumerate(f) if "// marker: build_batch" in t]
    assert_eq(len(lines), 1)
    return lines[0]


def test_cpp_loader_thread_and_condition_variable():
    """A std::thread loader computes each batch while the main thread
    waits on a std::condition_variable; built -O3 without -g and -O0 -g.
    The loader (its thread id from the program's log) is the thread that
    ran in each gap, and gets about the time its builds took; where perf
    events give running threads their stacks (GPUTRACE_SAMPLE_NATIVE=auto),
    its build_batch is the top cause, with its line where there is -g."""
    steps, line = 6, _cpp_marker()
    for build, with_lines in (("queue_loader_O3", False), ("queue_loader_O0g", True)):
        run = run_traced([prog(build), str(steps), "60"], env={"GPUTRACE_SAMPLE_NATIVE": "auto"})
        assert_eq(run.proc.returncode, 0, run.proc.stderr[-2000:])
        db = run.trace
        m = re.search(r"^queue_loader: loader tid (\d+)$", run.proc.stderr, re.M)
        loader = int(m.group(1))
        built = float(re.search(r"^queue_loader: build_batch ([\d.]+) ms$", run.proc.stderr, re.M).group(1)) * MS
        doc = _report(db)
        waited = _waited_gaps(doc)
        assert len(waited) >= steps - 2, (build, [g["host"] for g in doc["idle_gaps"]])
        for g in waited:
            assert "(blocked in futex)" in g["host"]["stacks"][0]["stack"], g["host"]
        assert sum(g["host"]["others"][0]["tid"] == loader for g in waited) >= steps - 2, (build, loader, waited)
        # every running sample that took the waiting part is the loader's
        moved = sum(r["idle_ns"] for r in doc["idle_by_host_stack"] if r["stack"].endswith(WAITED))
        assert 0.5 * built <= moved <= built + steps * 10 * MS, (build, moved, built)
        native = query(db, "SELECT value FROM meta WHERE key = 'sample_native_stacks'")[0][0]
        if native == "perf_callchain":
            # the top named frame of the time moved to the threads that
            # ran (a round that finds no perf sample of the loader since
            # the last reads "(no stack)": most rounds on a loaded machine,
            # docs/performance.md)
            named = [r["stack"] for r in doc["idle_by_host_stack"]
                     if r["stack"].endswith(WAITED) and not r["stack"].startswith("(no stack)")]
            assert named, (build, doc["idle_by_host_stack"][:4])
            head = "queue_loader.cpp:%d in build_batch(" % line if with_lines else "build_batch("
            assert named[0].startswith(head), (build, named[:3])
            if not with_lines:
                assert "(%s)" % build in named[0], named[0]
        else:
            print("  (%s: perf events refused here, %s: the loader named by thread alone)" % (build, native))
        _check_oracle(db, doc)


def test_torch_autograd_thread_waits_on_a_loader():
    """PyTorch (on the simulated GPU): backward's kernels are launched by
    autograd's own thread, which waits, in a custom Function's backward,
    for a loader thread's zlib work: the gaps' launching thread is
    autograd's (not the main thread), it waited, and the loader's line is
    named, with about the time its log says."""
    steps = 6
    script = os.path.join(tp.PYDIR, "torch_autograd_wait.py")
    m = gtlib.marker_lines(script)
    d = tmpdir("gputrace-torch-")
    db = os.path.join(d, "t.db")
    r = subprocess.run([GPUTRACE, "record", "-o", db, "--", gtlib.PYENV_PYTHON, script, str(steps), "40"],
                       env=gtlib.torch_env(), capture_output=True, text=True, timeout=600)
    assert_eq(r.returncode, 0, r.stderr[-3000:])
    assert "torch_autograd_wait: done" in r.stdout, r.stdout
    built = _log(r.stderr, "torch_autograd_wait")["build"] * 1e9
    pid = int(query(db, "SELECT value FROM meta WHERE key = 'pid'")[0][0])
    doc = _report(db)
    build = "torch_autograd_wait.py:%d in build" % m["build"]
    waited = _waited_gaps(doc)
    assert len(waited) >= steps - 2, [g["host"] for g in doc["idle_gaps"]]
    # autograd's thread launched them (not the main thread), waiting
    mine = [g for g in waited if g["host"]["tid"] != pid]
    assert len(mine) >= steps - 2, [g["host"] for g in waited]
    for g in mine:
        assert g["host"]["stacks"][0]["stack"].endswith("(blocked in futex)"), g["host"]
    assert sum(g["host"]["others"][0]["frame"] == build for g in mine) >= steps - 2, mine
    top = doc["idle_by_host_stack"][0]
    assert_eq(top["stack"], "%s %s" % (build, WAITED), doc["idle_by_host_stack"][:4])
    assert 0.5 * built <= top["idle_ns"] <= built + steps * 10 * MS, (top, built)
    line = [x for x in r.stderr.splitlines() if x.startswith("gputrace: top finding:")]
    assert line and build in line[0], r.stderr[-2000:]
    _check_oracle(db, doc)


def test_thread_list_layouts_match_the_headers():
    """gt_py_thread_layouts (preload/hot/gt_py_layouts.h) holds, for each
    interpreter found with its internal headers, what they say
    (scripts/py_layout.c's `threads` row): where the sampler finds the
    interpreter's thread states and each one's thread id."""
    with open(os.path.join(ROOT, "preload", "hot", "gt_py_layouts.h")) as f:
        table = f.read().split("gt_py_thread_layouts[]")[1]
    d = tmpdir()
    checked = 0
    for minor, (exe, include) in sorted(tp.supported().items()):
        if minor >= 13 or not os.path.exists(os.path.join(include, "internal", "pycore_interp.h")):
            continue  # 3.13 and later: the interpreter's own debug offsets
        out = os.path.join(d, "layout-%d" % minor)
        r = subprocess.run(["cc", "-I" + include, "-o", out, os.path.join(ROOT, "scripts", "py_layout.c")],
                           capture_output=True, text=True)
        assert_eq(r.returncode, 0, r.stderr)
        row = subprocess.run([out, "threads"], capture_output=True, text=True).stdout
        assert row.strip() and row in table, "3.%d: %r not in gt_py_thread_layouts" % (minor, row)
        checked += 1
    assert checked >= 1

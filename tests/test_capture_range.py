"""Capture ranges (issue 19; docs/standby.md, Capture ranges; docs/cli.md):
`gputrace record --capture-range=cudaProfilerApi|nvtx:NAME[@DOMAIN]` and
GPUTRACE_CAPTURE_RANGE record only inside the ranges the program marks.
Ground truth: tests/progs/capture_range.c, whose kernels are named by the
range they are launched in (`in_rR`; `before`, `between`, `after` and
`decoy` outside every range) and which prints, per range, how many CUDA
calls it made inside it; an untraced run of the same program gives the
output the traced one must keep. Also `export --range NAME` over several
matching ranges: their union, checked by SQL over the public views."""
import json
import os
import re
import subprocess

import oracle
from gtlib import GPUTRACE, SHIM, assert_eq, base_env, prog, query, run_plain, run_traced, tmpdir
from test_nvtx import _shim, run_nvtx

RANGES = 3


def _record(how, *opts, ranges=RANGES):
    d = tmpdir()
    env = base_env({"GPUTRACE_CONTROL_DIR": os.path.join(d, "ctl")})
    r = subprocess.run([GPUTRACE, "record", "-o", os.path.join(d, "t-%p.db")] + list(opts) +
                       [prog("capture_range"), how, str(ranges)], env=env, capture_output=True, text=True,
                       timeout=120)
    return r, d


def _by_env(how, rule, end=None, ranges=RANGES):
    """The shim alone, driven by the environment (no `gputrace record`);
    under the sanitized shims too (tests/test_sanitized_suite.py)."""
    d = tmpdir()
    env = {"GPUTRACE_CONTROL_DIR": os.path.join(d, "ctl"), "NVTX_INJECTION64_PATH": _shim(),
           "GPUTRACE_CAPTURE_RANGE": rule}
    if end:
        env["GPUTRACE_CAPTURE_RANGE_END"] = end
    run = run_traced([prog("capture_range"), how, str(ranges)], env=env, outdir=d)
    return run.proc, d


def _dbs(d):
    return sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith(".db"))


def _printed(stdout):
    """range -> (calls, launches, bytes), as the program printed them."""
    return {int(m.group(1)): tuple(int(x) for x in m.groups()[1:])
            for m in re.finditer(r"^range (\d+) calls (\d+) launches (\d+) bytes (\d+)$", stdout, re.M)}


def _plain(how, ranges=RANGES):
    r = run_plain([prog("capture_range"), how, str(ranges)])
    assert_eq(r.returncode, 0, r.stderr)
    return r.stdout


def _check_range(db, r, printed, nvtx=False, inner_depth=1):
    """Trace `db` holds exactly range r's calls, GPU work included."""
    calls, launches, nbytes = printed[r]
    meta = dict(query(db, "SELECT key, value FROM meta"))
    assert_eq((meta["mode"], meta["window"], meta["complete"]), ("standby", str(r), "1"), db)
    assert meta["window_trigger"].startswith("capture range "), meta["window_trigger"]
    got = dict(query(db, "SELECT name, count(*) FROM api_calls GROUP BY name"))
    assert_eq(got, {"cudaLaunchKernel": launches, "cudaMemcpy": 1, "cudaMemset": 1, "cudaDeviceSynchronize": 1},
              db)
    assert_eq(sum(got.values()), calls, db)
    # the kernels are the range's own, each with its GPU times
    assert_eq(query(db, "SELECT name, count(*) FROM kernels GROUP BY name"), [("in_r%d" % r, launches)], db)
    # (20 us each on the simulated GPU: the program's setting)
    assert_eq(query(db, "SELECT time_source, end_ns - start_ns, count(*) FROM kernels GROUP BY 1, 2"),
              [("gpu", 20000, launches)], db)
    assert_eq(query(db, "SELECT kind, bytes FROM memcpys"), [("HtoD", nbytes)], db)
    assert_eq(query(db, "SELECT time_source, count(*) FROM memsets WHERE end_ns > start_ns GROUP BY 1"),
              [("gpu", 1)], db)
    ws, we = int(meta["window_start_ns"]), int(meta["window_end_ns"])
    assert_eq(query(db, "SELECT count(*) FROM api_calls WHERE start_ns < ? OR end_ns > ?", ws, we), [(0,)], db)
    if nvtx:
        # the capture range itself, and the range nested in it (its pop did
        # not end the capture; pushed on the default domain, it is at depth
        # 0 of that domain's stack when the capture range is in "dom"); the
        # decoy ranges were outside
        assert_eq(sorted(query(db, "SELECT name, depth FROM ranges")), [("capture", 0), ("inner", inner_depth)], db)


def test_profiler_api_repeat_one_trace_per_range():
    want = _plain("rt")
    for how in ("rt", "drv"):
        r, d = _record(how, "--capture-range=cudaProfilerApi", "--capture-range-end=repeat")
        assert_eq(r.returncode, 0, r.stderr)
        assert_eq(r.stdout, want, "the program's output")
        printed = _printed(r.stdout)
        assert_eq(sorted(printed), list(range(1, RANGES + 1)))
        dbs = _dbs(d)
        assert_eq([os.path.basename(x)[-6:] for x in dbs], ["-w%d.db" % i for i in range(1, RANGES + 1)], how)
        for i, db in enumerate(dbs, 1):
            _check_range(db, i, printed)
            assert db in r.stderr, r.stderr  # the closing summary names each


def test_profiler_api_stop_is_the_default_and_repeat_n():
    r, d = _record("rt", "--capture-range=cudaProfilerApi")
    assert_eq(r.returncode, 0, r.stderr)
    dbs = _dbs(d)
    assert_eq(len(dbs), 1, dbs)
    _check_range(dbs[0], 1, _printed(r.stdout))
    r, d = _record("drv", "--capture-range=cudaProfilerApi", "--capture-range-end=repeat:2")
    assert_eq(r.returncode, 0, r.stderr)
    dbs = _dbs(d)
    assert_eq(len(dbs), 2, dbs)
    for i, db in enumerate(dbs, 1):
        _check_range(db, i, _printed(r.stdout))


def test_no_range_no_trace_and_the_program_unaffected():
    """A program that never calls cudaProfilerStart: no file (a window
    that never opened recorded nothing to put in one), the same output and
    exit status, and the closing summary says why there is no trace."""
    want = _plain("none")
    r, d = _record("none", "--capture-range=cudaProfilerApi")
    assert_eq((r.returncode, r.stdout), (0, want))
    assert_eq(_dbs(d), [])
    assert "no capture range (cudaProfilerApi) was entered, no trace written" in r.stderr, r.stderr
    # an NVTX rule whose name never comes: the same
    r, d = _by_env("nvtx", "nvtx:nosuch")
    assert_eq((r.returncode, r.stdout, _dbs(d)), (0, _plain("nvtx"), []), r.stderr)


def test_nvtx_ranges_push_pop_start_end_and_domain():
    want = _plain("nvtx")
    for how, rule in (("nvtx", "nvtx:capture"), ("startend", "nvtx:capture"), ("domain", "nvtx:capture@dom"),
                      ("nvtx", "nvtx:capt?re"), ("registered", "nvtx:capture")):
        r, d = _by_env(how, rule, "repeat")
        assert_eq(r.returncode, 0, (how, r.stderr))
        if how == "nvtx":
            assert_eq(r.stdout, want)
        printed = _printed(r.stdout)
        dbs = _dbs(d)
        assert_eq(len(dbs), RANGES, (how, rule, dbs))
        for i, db in enumerate(dbs, 1):
            _check_range(db, i, printed, nvtx=how != "startend", inner_depth=0 if how == "domain" else 1)
            if how == "startend":  # a start/end range has no depth
                assert_eq(sorted(query(db, "SELECT name, kind FROM ranges")),
                          [("capture", "start"), ("inner", "push")], db)
            meta = dict(query(db, "SELECT key, value FROM meta"))
            assert_eq(meta["window_trigger"], "capture range " + rule)


def test_nvtx_range_that_is_the_first_call():
    """nvtx_phases starts its start/end range "run" before any CUDA call:
    that first NVTX call starts the session and opens the window. The
    window's calls are those a whole-run trace of the same program has
    inside "run" (by SQL over its views)."""
    argv = [prog("nvtx_phases"), "2", "2000"]
    full = run_nvtx(argv)
    (a, b), = full.q("SELECT start_ns, end_ns FROM ranges WHERE name = 'run'")
    want = dict(full.q("SELECT name, count(*) FROM api_calls WHERE start_ns >= ? AND start_ns < ? GROUP BY name",
                       a, b))
    assert want.get("cudaMalloc") == 1, want  # init's first call: inside the range
    cap = run_nvtx(argv, env={"GPUTRACE_CAPTURE_RANGE": "nvtx:run"})
    assert_eq(dict(cap.q("SELECT name, count(*) FROM api_calls GROUP BY name")), want)
    assert_eq(cap.q("SELECT kind FROM ranges WHERE name = 'run'"), [("start",)])
    assert_eq(cap.q1("SELECT value FROM meta WHERE key = 'window_trigger'"), "capture range nvtx:run")


def test_nvtx_any_domain_and_record_to_the_end():
    """NAME@* matches the decoy in domain "dom" first (pushed before range
    1); capture-range-end=none records from it to the end of the run."""
    r, d = _record("nvtx", "--capture-range=nvtx:capture@*", "--capture-range-end=none")
    assert_eq(r.returncode, 0, r.stderr)
    dbs = _dbs(d)
    assert_eq(len(dbs), 1, dbs)
    kernels = dict(query(dbs[0], "SELECT name, count(*) FROM kernels GROUP BY name"))
    want = {"decoy": RANGES, "between": 2 * RANGES, "after": 2}
    want.update({"in_r%d" % i: i + 1 for i in range(1, RANGES + 1)})
    assert_eq(kernels, want)


def test_bad_values():
    for args, says in ((["--capture-range=bogus"], "is not cudaProfilerApi or nvtx:NAME[@DOMAIN]"),
                       (["--capture-range=nvtx:"], "needs a range name"),
                       (["--capture-range=nvtx:x@"], "and a domain after @"),
                       (["--capture-range="], "is not cudaProfilerApi"),
                       (["--capture-range=cudaProfilerApi", "--capture-range-end=repeat:0"], "is not stop, repeat"),
                       (["--capture-range=cudaProfilerApi", "--capture-range-end=stop-shutdown"],
                        "gputrace never does"),
                       (["--capture-range-end=stop"], "needs --capture-range"),
                       (["--capture-range=cudaProfilerApi", "--delay", "1s"], "does not go with --delay")):
        r = subprocess.run([GPUTRACE, "record"] + args + ["--", prog("capture_range"), "rt", "1"],
                           capture_output=True, text=True)
        assert_eq(r.returncode, 2, (args, r.stderr))
        assert says in r.stderr and r.stdout == "", (args, r.stderr)
    # the shim given a bad value: one warning line, and it records as it
    # would without the setting (the whole run)
    r, d = _by_env("rt", "cudaProfilerAPI")
    assert_eq((r.returncode, r.stdout), (0, _plain("rt")))
    assert "gputrace: GPUTRACE_CAPTURE_RANGE='cudaProfilerAPI' is not cudaProfilerApi" in r.stderr, r.stderr
    dbs = _dbs(d)
    assert_eq(len(dbs), 1, dbs)
    assert ("before", 3) in query(dbs[0], "SELECT name, count(*) FROM kernels GROUP BY name")


def test_export_range_is_the_union_of_the_matching_ranges():
    """nvtx_phases pushes "data" in each of its steps with "compute"
    between: export --range data holds the calls inside the data ranges
    (their union, by SQL over the ranges view), none of those between, as
    report --range reads them."""
    run = run_nvtx([prog("nvtx_phases"), "3", "2000"], env={"FAKECUDA_KERNEL_NS": "20000"})
    data = run.q("SELECT start_ns, end_ns FROM ranges WHERE name = 'data' AND end_ns IS NOT NULL "
                 "ORDER BY start_ns")
    assert len(data) >= 3, data
    # the union of the data ranges
    union = oracle.union(data)
    inside = [n for n, s in run.q("SELECT name, start_ns FROM api_calls") if any(a <= s < b for a, b in union)]
    hull = run.q1("SELECT count(*) FROM api_calls WHERE start_ns >= ? AND start_ns < ?", union[0][0], union[-1][1])
    assert len(inside) < hull, (len(inside), hull)  # calls between the ranges: the two readings differ
    out = os.path.join(tmpdir(), "data.json")
    r = subprocess.run([GPUTRACE, "export", "--format", "chrome-json", "-o", out, "--range", "data", run.trace],
                       capture_output=True, text=True)
    assert_eq(r.returncode, 0, r.stderr)
    with open(out) as f:
        evs = json.load(f)["traceEvents"]
    calls = sorted(e["name"] for e in evs if e.get("ph") == "X" and e.get("name", "").startswith("cuda"))
    assert_eq(calls, sorted(inside))
    # the kernels: those the GPU started inside the union
    kin = run.q("SELECT count(*) FROM kernels k WHERE " +
                " OR ".join("(k.start_ns >= %d AND k.start_ns < %d)" % (a, b) for a, b in union))[0][0]
    kx = [e for e in evs if e.get("ph") == "X" and e.get("cat") == "kernel"]
    assert_eq(len(kx), kin)
    # report --range reads the same window: the same calls
    rep = subprocess.run([GPUTRACE, "report", "--format", "json", "--range", "data", run.trace],
                         capture_output=True, text=True)
    assert_eq(rep.returncode, 0, rep.stderr)
    doc = json.loads(rep.stdout)
    assert_eq(sum(a["count"] for a in doc["api"]), len(inside))


def test_failures_said_once_and_the_program_unaffected():
    """A trace path that cannot be written: one line for all the ranges,
    the program's output and status its own. A control directory that
    cannot be used: `gputrace trigger` cannot reach the process, its
    capture ranges still record."""
    want = _plain("rt")
    d = tmpdir()
    r = run_plain([prog("capture_range"), "rt", str(RANGES)],
                  env={"LD_PRELOAD": SHIM, "GPUTRACE_CAPTURE_RANGE": "cudaProfilerApi",
                       "GPUTRACE_CAPTURE_RANGE_END": "repeat", "GPUTRACE_CONTROL_DIR": os.path.join(d, "ctl"),
                       "GPUTRACE_OUTPUT": os.path.join(d, "no", "such", "dir", "t-%p.db")})
    assert_eq((r.returncode, r.stdout), (0, want))
    lines = [x for x in r.stderr.splitlines() if x.startswith("gputrace:")]
    assert_eq(len(lines), 1, r.stderr)
    assert "capture range not recorded: cannot create" in lines[0], lines
    notdir = os.path.join(d, "a-file")
    open(notdir, "w").close()
    r = run_plain([prog("capture_range"), "rt", str(RANGES)],
                  env={"LD_PRELOAD": SHIM, "GPUTRACE_CAPTURE_RANGE": "cudaProfilerApi",
                       "GPUTRACE_CONTROL_DIR": notdir, "GPUTRACE_OUTPUT": os.path.join(d, "t-%p.db")})
    assert_eq((r.returncode, r.stdout), (0, want))
    assert "capture ranges still record, gputrace trigger cannot" in r.stderr, r.stderr
    dbs = _dbs(d)
    assert_eq(len(dbs), 1, dbs)
    _check_range(dbs[0], 1, _printed(r.stdout))

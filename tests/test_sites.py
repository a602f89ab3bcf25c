"""Launch sites on programs built the ways users build them (issue 31, item
1): tests/progs/sites_cu.cu launches from main, a noinline function, a
static function, a template function (a template kernel), a call through a
function pointer and a second thread, each its own kernel a number of times
of its own, built -O0 -g, -O2, -O3, -O3 -g and -O3 -lineinfo. nvcc's stub
and host wrapper are then called, tail-called or inlined; every launch site
in `report` (JSON and text), its findings, idle gaps and `diff` must name
the function that launches, and with -g its line.

What is right is set from outside the analyzer twice over: from the source
(its LAUNCH:function markers, and the binary's symbol table for whether the
compiler kept that function or inlined it into main), and by
tests/oracle_sites.py, which recomputes each launch stack's launching frame
from stack_frames' modules and offsets with addr2line and nm."""
import json
import os
import re
import subprocess
from collections import Counter

import oracle
import gtlib
import oracle_sites
from gtlib import GPUTRACE, ROOT, assert_eq, prog, query, run_traced

SRC = os.path.join(ROOT, "tests", "progs", "sites_cu.cu")
# each kernel, the function that launches it and how many times
KERNELS = {"k_main(float*)": ("main", 1), "k_noinline(float*)": ("launch_noinline", 2),
           "k_static(float*)": ("launch_static", 3), "void k_tmpl<4>(float*)": ("launch_tmpl<...>", 4),
           "k_pointer(float*)": ("launch_pointer", 5), "k_thread(float*)": ("launch_thread", 6)}


def _markers():
    return gtlib.marker_lines(SRC, r"LAUNCH:(\w+)")


def _functions(exe):
    """Bare names of the functions the binary's symbol table defines."""
    out = subprocess.run(["nm", "-C", "--defined-only", exe], capture_output=True, text=True, check=True).stdout
    return {oracle_sites.bare_name(line.split(" ", 2)[2]) for line in out.splitlines() if line.count(" ") >= 2
            and line.split(" ")[1] in "tTwW"}


def _frame_key(frame, with_lines):
    """A site frame as it identifies a launcher: (function, line) with
    DWARF, else (function, module, offset)."""
    m = re.match(r"^([^ ]+):(\d+) in (.+)$", frame)
    if m:
        return (oracle_sites.bare_name(m.group(3)), int(m.group(2))) if with_lines else None
    m = re.match(r"^(.*) \(([^ ()]+)\+0x([0-9a-f]+)\)$", frame)
    if m and not with_lines:
        return (oracle_sites.bare_name(m.group(1)), m.group(2), int(m.group(3), 16))
    return None


def _oracle_key(launcher, with_lines):
    fn = oracle_sites.bare_name(launcher.function)
    if with_lines:
        return fn, launcher.line
    return fn, os.path.basename(launcher.module), launcher.offset


def _report(trace, fmt="json"):
    out = subprocess.run([GPUTRACE, "report", "--top", "0", "--format", fmt, trace], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout) if fmt == "json" else out.stdout


def _text_sites(text, heading):
    """(count, first frame) of each row of a text report section whose rows
    read "N launches, ..." then "    at FRAME"."""
    sec = text.split("\n" + heading + "\n", 1)[1].split("\n\n", 1)[0].splitlines()
    rows = []
    for i, line in enumerate(sec):
        m = re.match(r"^  (\d+) launch(es)?, ", line)
        if m:
            at = re.match(r"^    at (.*)$", sec[i + 1])
            rows.append((int(m.group(1)), at.group(1)))
    return rows


def _check_build(variant, with_lines):
    exe = prog("sites_cu_" + variant)
    runs = [run_traced([exe]) for _ in range(2)]
    for r in runs:
        assert r.proc.returncode == 0 and "sites_cu ok" in r.proc.stdout, r.proc.stderr
    trace = runs[0].trace
    marks = _markers()
    defined = _functions(exe)

    # 1. the oracle's launchers, from the binary's own symbols, are the source's
    launchers = oracle_sites.launch_frames(trace)
    by_stack = query(trace, "SELECT c.stack_id, k.name, count(*) FROM api_calls c JOIN kernels k "
                     "ON k.api_call_id = c.id GROUP BY 1, 2")
    assert_eq(sorted((k, n) for _, k, n in by_stack), sorted((k, v[1]) for k, v in KERNELS.items()),
              "%s: kernels, launches" % variant)
    want = Counter()
    for sid, kernel, n in by_stack:
        caller = KERNELS[kernel][0]
        got = launchers[sid]
        assert got, "%s: no launcher for %s" % (variant, kernel)
        # a function the compiler kept is the launcher; one it inlined (no
        # symbol of its own, and no DWARF to say so) is read as main's code
        if with_lines:
            assert_eq((oracle_sites.bare_name(got.function), got.line), (caller, marks[caller.split("<")[0]]),
                      "%s: %s's launcher from addr2line" % (variant, kernel))
        else:
            fn = caller if caller in defined else "main"
            assert_eq(oracle_sites.bare_name(got.function), fn, "%s: %s's launcher from nm" % (variant, kernel))
        want[_oracle_key(got, with_lines)] += n
    keys = set(want)
    assert_eq(len(keys), 6, "%s: six launch sites, none merged" % variant)

    # 2. report --format json: launch sites, findings, gaps, idle by site
    rep = _report(trace)
    got = Counter()
    for s in rep["launch_overhead"]["sites"]:
        got[_frame_key(s["site"][0], with_lines)] += s["count"]
    assert_eq(got, want, "%s: launch sites (JSON)" % variant)
    for f in rep["findings"]:
        if f["kind"] == "idle_host":  # the gaps end at launches (each caller sleeps first)
            assert _frame_key(f["site"][0], with_lines) in keys, (variant, f)
    ended = [g for g in rep["idle_gaps"] if g["after_api"] == "__cudaLaunchKernel"]
    assert_eq({_frame_key(g["after"][0], with_lines) for g in ended}, keys,
              "%s: the gaps each caller's sleep left end at its launch" % variant)
    for g in rep["idle_gaps"]:
        if g["before_api"] == "__cudaLaunchKernel":
            assert _frame_key(g["before"][0], with_lines) in keys, (variant, g)
    assert_eq({_frame_key(s["site"][0], with_lines) for s in rep["idle_by_site"] if s["site"][0][0] != "("},
              keys, "%s: idle by site" % variant)
    # the whole report against the oracle written from the spec
    assert_eq(oracle.check([trace], rep), [], "%s: oracle" % variant)

    # 3. the text report reads the same
    text = _report(trace, "text")
    got = Counter()
    for n, frame in _text_sites(text, "Launch sites"):
        got[_frame_key(frame, with_lines)] += n
    assert_eq(got, want, "%s: launch sites (text)" % variant)
    assert "__device_stub" not in text and "at _start" not in text, text

    # 4. diff, which matches sites by their text without offsets
    out = subprocess.run([GPUTRACE, "diff", "--format", "json", trace, "--vs", runs[1].trace],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    stripped = Counter()
    for k, n in want.items():
        stripped[k[:2]] += n  # (function, line) or (function, module)
    got = Counter()
    for row in json.loads(out.stdout)["rows"]:
        if row["kind"] == "launch_site" and row.get("measure", "count") == "count":
            first = row["name"].split(" < ")[0]
            m = re.match(r"^(.*) \(([^ ()]+)\)$", first)
            key = _frame_key(first, True) if with_lines else (
                oracle_sites.bare_name(m.group(1)), m.group(2)) if m else None
            assert_eq((row["base_count"], row["new_count"]), (stripped[key], stripped[key]),
                      "%s: diff row %s" % (variant, row["name"]))
            got[key] += row["base_count"]
    assert_eq(got, stripped, "%s: diff's launch sites" % variant)


def test_sites_O0_g():
    _check_build("O0g", True)


def test_sites_O2():
    _check_build("O2", False)


def test_sites_O3():
    _check_build("O3", False)


def test_sites_O3_g():
    _check_build("O3g", True)


def test_sites_O3_lineinfo():
    _check_build("O3lineinfo", False)


def test_sites_plumbing_by_what_it_is_synthetic():
    """Site texts of a synthetic trace, set from docs/report.md ("Call
    sites"): a kernel's host wrapper without its stub (the stub inlined into
    it), a DWARF-named inlined wrapper of a namespaced kernel beside a host
    overload of the same name (the user's), a runtime header template, a
    compiler clone, and a thread whose every frame of the program is nvcc's
    (the innermost frames other than nvcc's stand in: the runtime's, then
    libstdc++'s and libc's, not the stub). The oracle agrees."""
    import sqlite3

    import make_trace as mt
    from gtlib import tmpdir
    app, rt = "/bin/app", "/usr/lib/libcudart.so.13"
    wrapper_only = [(rt, "cudaLaunchKernel"), (app, "kernel(float*)"), (app, "run(int) [clone .constprop.0]"),
                    (app, "main")]
    overload = [(rt, "cudaLaunchKernel"), (app, "__device_stub__ZN2ns5scaleEPff(float*, float)"), (app, "scale"),
                (app, "ns::scale(std::vector<float, std::allocator<float> >&)"), (app, "main")]
    template = [(rt, "cudaMemcpyToSymbol"),
                (app, "cudaError cudaMemcpyToSymbol<float>(float const&, void const*, unsigned long, unsigned long, "
                      "cudaMemcpyKind)"), (app, "upload(float*)"), (app, "main")]
    thread = [(rt, "cudaLaunchKernel"), (app, "__device_stub__Z6kernelPf(float*)"), (app, "kernel(float*)"),
              ("/usr/lib/libstdc++.so.6", None), ("/usr/lib/libc.so.6", None)]
    calls = [mt.launch("_Z6kernelPf", demangled="kernel(float*)", stack=wrapper_only),
             mt.launch("_ZN2ns5scaleEPff", demangled="ns::scale(float*, float)", stack=overload),
             mt.launch("_ZN2ns5scaleEPff", demangled="ns::scale(float*, float)", stack=overload),
             mt.memcpy("HtoD", 4096, stack=template),
             mt.launch("_Z6kernelPf", demangled="kernel(float*)", stack=thread, tid=1001),
             mt.launch("_Z6kernelPf", demangled="kernel(float*)", stack=thread, tid=1001),
             mt.launch("_Z6kernelPf", demangled="kernel(float*)", stack=thread, tid=1001)]
    path = mt.make_trace(os.path.join(tmpdir(), "t.db"), calls=calls)
    db = sqlite3.connect(path)
    # the inlined wrapper as DWARF names it, inside the user's overload at its line
    db.execute("UPDATE frames SET file = '/src/scale.cu', line = 5, inlined = 1 WHERE function = 'scale'")
    db.execute("UPDATE frames SET file = '/src/scale.cu', line = 40 WHERE function LIKE 'ns::scale(%'")
    db.commit()
    db.close()
    rep = _report(path)

    def functions(site):
        return [re.sub(r" \([^ ()]+\+0x[0-9a-f]+\)$", "", f) for f in site]
    launches = sorted((s["count"], functions(s["site"])) for s in rep["launch_overhead"]["sites"])
    assert_eq(launches, [(1, ["run(int)", "main"]),
                         (2, ["scale.cu:40 in ns::scale(std::vector<...>&)", "main"]),
                         (3, ["cudaLaunchKernel", "libstdc++.so.6+0x%x" % query(path, "SELECT offset FROM stack_frames WHERE module "
                                                                  "LIKE '%libstdc++%'")[0][0],
                              "libc.so.6+0x%x" % query(path, "SELECT offset FROM stack_frames WHERE module "
                                                             "LIKE '%libc.so%'")[0][0]])],
              "launch sites")
    assert_eq([functions(h["site"]) for h in rep["h2d_hotspots"]], [["upload(float*)", "main"]], "copy site")
    assert_eq(oracle.check([path], rep), [], "oracle")

"""Native call sites with source file and line (issue 21): known stacks of
programs built with -g (C and nvcc), an inlined helper, a stripped binary
whose debug information is found by build-id or .gnu_debuglink, and a
binary without debug information. The expected lines are read from the
programs' sources (their LINE:name markers), not from the tracer."""
import json
import os
import re
import shutil
import subprocess

from gtlib import GPUTRACE, ROOT, assert_eq, prog, query, run_traced, tmpdir

SRC = os.path.join(ROOT, "tests", "progs")


def _markers(src):
    """LINE:name markers of a source file -> their line numbers."""
    out = {}
    with open(os.path.join(SRC, src)) as f:
        for n, text in enumerate(f, 1):
            m = re.search(r"LINE:(\w+)", text)
            if m:
                out[m.group(1)] = n
    return out


def _stack_of(db, api):
    """The frames of the stack of the (only) call to api, innermost first."""
    sids = query(db, "SELECT DISTINCT stack_id FROM api_calls WHERE name = ?", api)
    assert len(sids) == 1, (api, sids)
    return query(db, "SELECT function, file, line, \"column\", inlined, module, offset FROM stack_frames "
                 "WHERE stack_id = ? ORDER BY depth", sids[0][0])


def _run(path, env=None):
    r = run_traced([path], env=env)
    assert r.proc.returncode == 0, r.proc.stderr
    return r


def _report(db):
    out = subprocess.run([GPUTRACE, "report", "--format", "json", db], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def _h2d_sites(db):
    rep = _report(db)
    return [r["site"] for r in rep["h2d_hotspots"]]


def _check_copy_stack(frames, mk, src="lines.c"):
    """inner_copy (inlined) < inline_copy (inlined) < middle_copy < outer_copy < main, each at its line."""
    want = [("inner_copy", mk["inner_copy"], 1), ("inline_copy", mk["inline_copy"], 1),
            ("middle_copy", mk["middle_copy"], 0), ("outer_copy", mk["outer_copy"], 0), ("main", mk["main_copy"], 0)]
    got = [(f[0], f[2], f[4]) for f in frames[:5]]
    assert_eq(got, want, "copy stack (function, line, inlined)")
    for f in frames[:5]:
        assert f[1] and os.path.basename(f[1]) == src, f
    # the inlined frames and the one they were inlined into: one instruction
    assert_eq(frames[0][5:], frames[2][5:], "inlined frames' module and offset")
    assert_eq(frames[1][5:], frames[2][5:], "inlined frames' module and offset")


def test_lines_c_exact_lines_inlined_helper():
    mk = _markers("lines.c")
    r = _run(prog("lines"))
    _check_copy_stack(_stack_of(r.trace, "cudaMemcpy"), mk)
    launch = _stack_of(r.trace, "cudaLaunchKernel")
    assert_eq([(f[0], f[2], f[4]) for f in launch[:2]],
              [("launch_step", mk["launch_step"], 0), ("main", mk["main_launch"], 0)], "launch stack")
    assert launch[0][3] and launch[0][3] > 0, launch[0]  # a column
    # the report reads them as Python frames are read: file:LINE in function
    assert_eq(_h2d_sites(r.trace), [["lines.c:%d in inner_copy" % mk["inner_copy"],
                                      "lines.c:%d in inline_copy" % mk["inline_copy"],
                                      "lines.c:%d in middle_copy" % mk["middle_copy"]]], "H2D site")
    # info: how many call instructions have lines (all but _start's here, libc's depending on its debug files)
    info = json.loads(subprocess.run([GPUTRACE, "info", "--format", "json", r.trace], capture_output=True,
                                     text=True).stdout)
    n, with_lines = query(r.trace, "SELECT count(*), count(line) FROM frames WHERE inlined = 0")[0]
    assert_eq((info["native_frames"], info["native_frames_with_lines"]), (n, with_lines), "info frames")
    user = query(r.trace, "SELECT count(*), count(f.line) FROM frames f JOIN modules m ON m.id = f.module_id "
                 "WHERE m.path LIKE '%/lines' AND f.function != '_start' AND inlined = 0")[0]
    assert user[0] >= 6 and user[0] == user[1], user
    text = subprocess.run([GPUTRACE, "info", r.trace], capture_output=True, text=True).stdout
    assert "%d of %d native frames have a source line" % (with_lines, n) in text, text


def _split_debug(tmp):
    """lines, its DWARF moved to lines.debug and the binary fully stripped."""
    exe = os.path.join(tmp, "lines")
    shutil.copy(prog("lines"), exe)
    dbg = os.path.join(tmp, "lines.debug")
    subprocess.run(["objcopy", "--only-keep-debug", exe, dbg], check=True)
    subprocess.run(["strip", "--strip-all", exe], check=True)
    return exe, dbg


def _build_id(path):
    out = subprocess.run(["readelf", "-n", path], capture_output=True, text=True, check=True).stdout
    return re.search(r"Build ID: ([0-9a-f]+)", out).group(1)


def test_lines_stripped_build_id():
    mk = _markers("lines.c")
    tmp = tmpdir()
    exe, dbg = _split_debug(tmp)
    # without its debug information: no lines, and no function names either (fully stripped)
    bare = _run(exe)
    frames = _stack_of(bare.trace, "cudaMemcpy")
    assert frames[0][2] is None and frames[0][1] is None, frames[0]
    # found by build-id under a /usr/lib/debug-like directory
    root = os.path.join(tmp, "debugroot")
    bid = _build_id(exe)
    d = os.path.join(root, ".build-id", bid[:2])
    os.makedirs(d)
    shutil.move(dbg, os.path.join(d, bid[2:] + ".debug"))
    r = _run(exe, env={"GPUTRACE_DEBUG_DIR": root})
    # names from DWARF, since the symbol table is gone
    _check_copy_stack(_stack_of(r.trace, "cudaMemcpy"), mk)


def test_lines_stripped_debuglink():
    mk = _markers("lines.c")
    tmp = tmpdir()
    exe, dbg = _split_debug(tmp)
    subprocess.run(["objcopy", "--add-gnu-debuglink=%s" % dbg, exe], cwd=tmp, check=True)
    os.makedirs(os.path.join(tmp, ".debug"))
    shutil.move(dbg, os.path.join(tmp, ".debug", "lines.debug"))  # found in the file's .debug/
    r = _run(exe)
    _check_copy_stack(_stack_of(r.trace, "cudaMemcpy"), mk)


def test_lines_without_debug_info_keep_function_offset():
    r = _run(prog("lines_nodebug"))
    frames = _stack_of(r.trace, "cudaMemcpy")
    own = [f for f in frames if f[5].endswith("/lines_nodebug")]  # libc may have its debug files
    assert len(own) >= 4 and all(f[1] is None and f[2] is None and f[4] == 0 for f in own), frames
    # no inlined frame without DWARF: middle_copy holds the call
    assert_eq([f[0] for f in frames[:3]], ["middle_copy", "outer_copy", "main"], "functions")
    site = _h2d_sites(r.trace)[0]
    assert_eq(site[:2], ["middle_copy (lines_nodebug+0x%x)" % frames[0][6],
                         "outer_copy (lines_nodebug+0x%x)" % frames[1][6]], "site")


def test_lines_nvcc_launch_names_users_line():
    mk = _markers("lines_cu.cu")
    r = _run(prog("lines_cu"))
    frames = _stack_of(r.trace, "__cudaLaunchKernel")  # what CUDA 13's <<<>>> calls
    fns = [f[0] or "" for f in frames]
    # nvcc's stub is in the stack, the user's line after it
    stub = next(i for i, f in enumerate(fns) if f.startswith("__device_stub__"))
    user = next(i for i, f in enumerate(fns) if f.startswith("launch_storm"))
    assert stub < user, fns
    assert_eq((os.path.basename(frames[user][1]), frames[user][2]), ("lines_cu.cu", mk["launch_storm"]),
              "launch_storm's line")
    # the report names the user's line, not the stub nor the runtime's wrappers
    rep = _report(r.trace)
    sites = [s["site"] for s in rep["launch_overhead"]["sites"]]
    assert_eq(sites, [["lines_cu.cu:%d in launch_storm(float*, int)" % mk["launch_storm"],
                       "lines_cu.cu:%d in main" % mk["main_storm"], sites[0][2]]], "launch site")


def test_lines_site_text_shortening_and_plumbing():
    """Site texts of a synthetic version 6 trace, set from the spec
    (docs/report.md, "Call sites"): template arguments elided, long names
    cut to 80 characters with the location kept, nvcc's plumbing and the
    kernel's host-side function skipped; the oracle reads them the same."""
    import make_trace as mt
    import oracle
    long_fn = "void very::long_namespace::name<float>::" + "x" * 90 + "(int)"
    stub = [("/bin/app", "__device_stub__Z6kernelPf(float*)"), ("/bin/app", "kernel(float*)"),
            ("/bin/app", "void ns::run<std::vector<int, std::allocator<int> >, 3>(std::vector<int>&)"),
            ("/bin/app", "main")]
    # the kernel's host wrapper is known by the launched kernel's name, not by following the stub
    calls = [mt.launch("_Z6kernelPf", demangled="kernel(float*)",
                       stack=[("/usr/lib/libcudart.so.13", "cudaLaunchKernel")] + stub),
             mt.memcpy("HtoD", 4096, stack=[("/bin/app", "ns::Foo<int>::operator<<(ns::Bar<int> const&)"),
                                            ("/bin/app", long_fn), ("/bin/app", None)])]
    d = tmpdir()
    path = mt.make_trace(os.path.join(d, "t.db"), calls=calls)
    import sqlite3
    db = sqlite3.connect(path)
    # source lines for some frames (as the writer stores them), none for the others
    for fn, file, line in (("void ns::run<std::vector<int, std::allocator<int> >, 3>(std::vector<int>&)",
                            "/src/train.cu", 21), ("main", "/src/train.cu", 30),
                           ("kernel(float*)", "/src/train.cu", 5)):
        db.execute("UPDATE frames SET file = ?, line = ? WHERE function = ?", (file, line, fn))
    db.execute("UPDATE frames SET file = '/src/io.cc', line = 7 WHERE function IS NULL")
    db.commit()
    db.close()
    rep = _report(path)
    want_launch = ["train.cu:21 in void ns::run<...>(std::vector<...>&)", "train.cu:30 in main"]
    assert_eq([s["site"] for s in rep["launch_overhead"]["sites"]], [want_launch], "launch site")
    short_long = ("void very::long_namespace::name<...>::" + "x" * 90)[:77] + "..."
    off = query(path, "SELECT offset FROM frames WHERE function IS NULL")[0][0]
    want_copy = ["ns::Foo<...>::operator<<(ns::Bar<...> const&) (app+0x%x)" % query(
        path, "SELECT offset FROM frames WHERE function LIKE 'ns::Foo%'")[0][0],
        "%s (app+0x%x)" % (short_long, query(path, "SELECT offset FROM frames WHERE function = ?", long_fn)[0][0]),
        "io.cc:7 in app+0x%x" % off]
    assert_eq([h["site"] for h in rep["h2d_hotspots"]], [want_copy], "copy site")
    # the oracle, written from the spec, reads the same
    assert_eq(oracle.short_function("a<b<c>>::operator<=(x<y>)"), "a<...>::operator<=(x<...>)")
    con = sqlite3.connect(path)
    sites = oracle.Sites(con, 6)
    sid = query(path, "SELECT stack_id FROM api_calls WHERE category = 'launch'")[0][0]
    assert_eq(list(sites.site(sid, None)), want_launch, "oracle launch site")
    con.close()

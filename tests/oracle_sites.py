"""The oracle's launch-site attribution, from the binaries themselves.

For each stack a launch call was made from, the frame that launched: the
innermost frame, in a module of the program's own, that is not nvcc's
launch plumbing. Recomputed from what `stack_frames` stores of each frame
(its module and the offset of the call instruction) and what the module
itself says about that instruction: `addr2line -a -f -i -C` (the function
holding it, and with DWARF the functions inlined there, each at its line)
and `nm` (nvcc's stubs, and so the kernels whose host wrappers they are).
The function names the tracer stored are not read, nor the analyzer's code:

    launch_frames(trace) -> {stack_id: Launcher}
    disagreements(trace, sites) -> [message]: where oracle.Sites (the spec's
        reading of the stored frames, which oracle.check holds the report to)
        names another launcher than the binary does

Plumbing, as nvcc writes it into the program: the stub `__device_stub__*`,
a template kernel's `__wrapper__device_stub_*`, the runtime header's
`__cuda*` helpers and `cudaLaunchKernel<T>`, code from `cuda_runtime.h`,
`device_functions.h` or the `*.stub.c` nvcc generates, and the kernel's
host wrapper: the host function that has the kernel's own name. Every
kernel with a stub has a symbol naming it (the stub, or when the stub was
inlined everywhere, its static locals: `_ZZ27__device_stub__Z8k_staticPfPfE5__tmp`),
so the wrappers' names are read from those.
"""
import os
import re
import sqlite3
import subprocess
from collections import namedtuple

# Modules that are not the program's: CUDA's, the tracer, the C and C++
# runtimes, Python, the frameworks (as docs/report.md lists them).
LIBRARY = re.compile(r"^(lib(cuda|cudart|cupti|nvidia-|cublas|cudnn|nccl|cufft|curand|cusparse|cusolver|nvrtc|"
                     r"nvJitLink|nvToolsExt|npp|nvjpeg|gputrace|torch|c10|python|stdc\+\+|pthread|dl[.-]|m\.so|"
                     r"rt\.so|gcc_s)|libc\.so|libc-|ld-linux|ld64|python)")

Launcher = namedtuple("Launcher", "function file line module offset")


def bare_name(fn):
    """A function's name as two readings of it compare: template arguments
    elided (docs/report.md's <...>), no " [clone ...]", no return type, no
    parameters, no namespace."""
    fn = fn.split(" [clone ", 1)[0]
    out, level = [], 0
    for i, c in enumerate(fn):
        if level == 0 and c == "<" and not fn[:i].endswith("operator"):
            out.append("<...>")
            level = 1
        elif level and c == "<":
            level += 1
        elif level and c == ">":
            level -= 1
        elif level == 0:
            out.append(c)
    s = "".join(out)
    if s.endswith(")"):  # the parameter list
        depth = 0
        for i in range(len(s) - 1, -1, -1):
            depth += {")": 1, "(": -1}.get(s[i], 0)
            if depth == 0:
                s = s[:i]
                break
    s = s.rsplit(" ", 1)[-1]  # a return type ("void launch_tmpl<...>")
    return s.rsplit("::", 1)[-1]


def _demangle(names):
    if not names:
        return []
    out = subprocess.run(["c++filt"], input="\n".join(names) + "\n", capture_output=True, text=True, check=True)
    return out.stdout.splitlines()


def kernel_wrappers(module):
    """Bare names of the kernels nvcc wrote stubs for in `module`, from its
    symbol table: each symbol holding `NN__device_stub_<kernel>` (a C++
    name of NN characters) names one."""
    out = subprocess.run(["nm", "-a", module], capture_output=True, text=True)
    kernels = set()
    for m in re.finditer(r"(\d+)(__device_stub__)", out.stdout):
        n = int(m.group(1))
        stub = out.stdout[m.start(2):m.start(2) + n]
        rest = stub[len("__device_stub__"):]
        kernels.add("_" + rest if rest.startswith("Z") else rest)  # a C++ kernel's mangled name, or a C one's
    return {bare_name(k) for k in _demangle(sorted(kernels))}


def _addr2line(module, offsets):
    """{offset: [(function, file, line), ...]} innermost first."""
    if not offsets:
        return {}
    out = subprocess.run(["addr2line", "-a", "-f", "-i", "-C", "-e", module] + ["0x%x" % o for o in offsets],
                         capture_output=True, text=True, check=True).stdout.splitlines()
    chains, cur, i = {}, None, 0
    while i < len(out):
        line = out[i]
        if re.match(r"^0x[0-9a-f]+$", line):
            cur = chains.setdefault(int(line, 16), [])
            i += 1
            continue
        fn, loc = line, out[i + 1] if i + 1 < len(out) else "??:0"
        m = re.match(r"^(.*):(\d+|\?)", loc)
        file = m.group(1) if m and m.group(1) != "??" else None
        num = int(m.group(2)) if m and m.group(2).isdigit() and int(m.group(2)) > 0 else None
        cur.append((fn, file, num))
        i += 2
    return chains


def _plumbing(fn, file, wrappers, line=None):
    base = os.path.basename(file) if file else ""
    if base in ("cuda_runtime.h", "device_functions.h") or base.endswith(".stub.c"):
        return True
    # NVIDIA's runtime linked statically into the module (docs/report.md):
    # its internal functions, and its cuda* API functions without a line
    static_cudart = fn.startswith("libcudart_static_") or (line is None and re.match(r"^cuda[A-Z]", fn))
    return bool(fn.startswith(("__device_stub__", "__wrapper__device_stub_", "__cuda")) or "cudaLaunchKernel<" in fn
                or bare_name(fn) in wrappers or static_cudart)


def launch_frames(trace, native_only=False):
    """{stack_id: Launcher} for every stack a launch call was made from
    (native_only: by a thread not running Python); Launcher None when no
    frame of the program's own is not plumbing."""
    con = sqlite3.connect("file:%s?mode=ro" % trace, uri=True)
    version = con.execute("PRAGMA user_version").fetchone()[0]
    py = " AND pystack_id IS NULL" if native_only and version >= 2 else ""
    sids = [r[0] for r in con.execute("SELECT DISTINCT stack_id FROM api_calls WHERE category = 'launch' "
                                      "AND stack_id IS NOT NULL" + py)]
    inlined = "inlined" if version >= 6 else "0"
    stacks = {}
    for sid in sids:
        # one row per return address: the inlined rows repeat its module and offset
        rows = con.execute("SELECT module, offset FROM stack_frames WHERE stack_id = ? AND %s = 0 ORDER BY depth"
                           % inlined, (sid,)).fetchall()
        stacks[sid] = [(m, o - (1 if version < 5 else 0)) for m, o in rows]
    con.close()
    own = {}
    for frames in stacks.values():
        for module, offset in frames:
            if module and not LIBRARY.search(os.path.basename(module)) and os.path.exists(module):
                own.setdefault(module, set()).add(offset)
    chains = {m: _addr2line(m, sorted(offs)) for m, offs in own.items()}
    wrappers = {m: kernel_wrappers(m) for m in own}
    result = {}
    for sid, frames in stacks.items():
        result[sid] = None
        for module, offset in frames:
            if module not in own:
                continue
            hit = next(((fn, f, n) for fn, f, n in chains[module].get(offset, [])
                        if not _plumbing(fn, f, wrappers[module], n)), None)
            if hit:
                result[sid] = Launcher(hit[0], hit[1], hit[2], module, offset)
                break
    return result


def _frame_parts(frame):
    """A site frame's (function, line) or (function, module, offset)."""
    m = re.match(r"^[^ ]+:(\d+) in (.+)$", frame)
    if m:
        return bare_name(m.group(2)), int(m.group(1))
    m = re.match(r"^(.*) \(([^ ()]+)\+0x([0-9a-f]+)\)$", frame)
    if m:
        return bare_name(m.group(1)), m.group(2), int(m.group(3), 16)
    return None


def disagreements(trace, sites):
    """Launch stacks of threads not running Python whose site, as `sites`
    (an oracle.Sites of the trace) reads it, does not start at the frame the
    binary's own symbols say launched: another function, line or offset."""
    out = []
    for sid, got in sorted(launch_frames(trace, native_only=True).items()):
        if got is None:
            continue
        first = (sites.site(sid, None) or ("(no stack)",))[0]
        parts = _frame_parts(first)
        fn = bare_name(got.function)
        if parts is not None and len(parts) == 2:
            want = (fn, got.line)
        else:
            want = (fn, os.path.basename(got.module), got.offset)
        if parts != want:
            out.append("launch stack %d: the site starts at %r; the binary says %r launched (%s+0x%x)"
                       % (sid, first, want, os.path.basename(got.module), got.offset))
    return out

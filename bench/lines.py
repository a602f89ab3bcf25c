"""bench/run.py's lines section: what resolving native source lines (libdw,
preload/writer/gt_lines.c) costs the writer, and the trace's size with
them: a program of --lines-frames distinct launching frames, built with
-g and without DWARF, untraced and traced (GPU timing off), CPU seconds
of the whole process, medians of --rounds."""
import os
import statistics
import subprocess
import sys
import tempfile

import gtlib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _lines_program(d, nfuncs, debug):
    """C source with nfuncs launching functions, each called once from main."""
    src = os.path.join(d, "many_frames.c")
    with open(src, "w") as f:
        f.write("#include <cuda_runtime_api.h>\n#include \"fakecuda.h\"\n")
        f.write("static dim3 g = {1, 1, 1}, b = {32, 1, 1};\n")
        for i in range(nfuncs):
            f.write("__attribute__((noinline)) void f%d(const void *k) { cudaLaunchKernel(k, g, b, 0, 0, 0); "
                    "__asm__ volatile(\"\" ::: \"memory\"); }\n" % i)
        f.write("int main(void) {\n  const void *k = fakecuda_runtime_kernel(\"k\", 0);\n")
        for i in range(nfuncs):
            f.write("  f%d(k);\n" % i)
        f.write("  cudaDeviceSynchronize();\n  return 0;\n}\n")
    exe = os.path.join(d, "many_frames" + ("_g" if debug else ""))
    subprocess.run(["cc", "-O1", "-g" if debug else "-g0", "-I/usr/local/cuda/include",
                    "-I" + os.path.join(ROOT, "tests", "fakecuda"), "-o", exe, src,
                    "-L" + gtlib.FAKECUDA, "-lcudart", "-lcuda"], check=True)
    return exe


def _cpu_run(exe, env):
    """CPU seconds (user + system) of one run of exe."""
    p = subprocess.Popen([exe], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    if status != 0:
        sys.exit("bench: %s failed" % exe)
    return ru.ru_utime + ru.ru_stime


def lines(args, results):
    """Native source lines: the writer's libdw cost and the trace's size."""
    nfuncs = args.lines_frames // 2
    print("lines: %d distinct native frames (%d functions), GPU timing off, %d rounds"
          % (2 * nfuncs, nfuncs, args.rounds))
    with tempfile.TemporaryDirectory(prefix="gputrace-bench-") as d:
        exes = {"no DWARF": _lines_program(d, nfuncs, False), "-g": _lines_program(d, nfuncs, True)}
        cpu = {}
        for name, exe in exes.items():
            base_env = gtlib.base_env({"FAKECUDA_KERNEL_NS": "0"})
            traced_env = dict(base_env, LD_PRELOAD=gtlib.SHIM, GPUTRACE_GPU_TIMING="off",
                              GPUTRACE_OUTPUT=os.path.join(d, name.replace(" ", "_") + ".db"),
                              GPUTRACE_FORCE_OVERWRITE="1")  # each round replaces the last
            plain, traced = [], []
            for _ in range(args.rounds):
                plain.append(_cpu_run(exe, base_env))
                traced.append(_cpu_run(exe, traced_env))
            db = traced_env["GPUTRACE_OUTPUT"]
            n, with_lines = gtlib.query(db, "SELECT count(*), count(line) FROM frames WHERE inlined = 0")[0]
            size = os.path.getsize(db)
            cpu[name] = (statistics.median(plain), statistics.median(traced), n, with_lines, size)
            print("  %-9s untraced %6.1f ms CPU, traced %6.1f ms CPU; %d frames, %d with lines; trace %.1f KiB"
                  % (name, cpu[name][0] * 1e3, cpu[name][1] * 1e3, n, with_lines, size / 1024))
        g, nog = cpu["-g"], cpu["no DWARF"]
        extra = (g[1] - g[0]) - (nog[1] - nog[0])
        per = extra / max(1, g[3] - nog[3])
        print("  lines cost %+.1f ms CPU in all, %.1f us per frame resolved; trace %+.1f KiB (%+.0f%%)"
              % (extra * 1e3, per * 1e6, (g[4] - nog[4]) / 1024, 100.0 * (g[4] - nog[4]) / max(1, nog[4])))
        results["lines"] = {"frames": g[2], "with_lines": g[3], "extra_cpu_s": extra, "per_frame_s": per,
                            "size_lines": g[4], "size_no_lines": nog[4]}

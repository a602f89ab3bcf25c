"""Helpers for the gputrace integration tests: run a program on the
simulated GPU with the shim preloaded, find its trace, query it."""
import atexit
import re
import glob
import os
import shutil
import sqlite3
import subprocess
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BUILD = os.path.join(ROOT, "build")
FAKECUDA = os.path.join(BUILD, "fakecuda")
PROGS = os.path.join(BUILD, "tests", "progs")
SHIM = os.path.join(BUILD, "libgputrace.so")
GPUTRACE = os.path.join(BUILD, "gputrace")


def pyenv_python():
    """The python of the tests' virtual environment with the pinned PyPI
    clients (scripts/setup-python.sh; GPUTRACE_PYENV as there)."""
    venv = os.environ.get("GPUTRACE_PYENV") or os.path.join(BUILD, "pyenv")
    return os.path.join(os.path.abspath(venv) if os.path.isabs(venv) else os.path.join(ROOT, venv), "bin", "python")

# Sanitizer builds of the shim go behind their runtimes in LD_PRELOAD.
SANITIZED = {
    "asan": (os.path.join(BUILD, "asan", "libgputrace.so"), "libasan.so"),
    "tsan": (os.path.join(BUILD, "tsan", "libgputrace.so"), "libtsan.so"),
}


_tmpdirs = []


def default_signals():
    """preexec_fn for a child that a test signals: SIGINT and SIGQUIT at
    their default action even when the suite itself runs as a background
    job of a shell, which starts it with both ignored."""
    import signal
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGQUIT, signal.SIG_DFL)


def tmpdir(prefix="gputrace-test-"):
    """A fresh directory, removed when the test run ends."""
    d = tempfile.mkdtemp(prefix=prefix)
    _tmpdirs.append(d)
    return d


@atexit.register
def _cleanup():
    for d in _tmpdirs:
        shutil.rmtree(d, ignore_errors=True)


def prog(name):
    return os.path.join(PROGS, name)


def sanitizer_runtime(kind):
    out = subprocess.run(["gcc", "-print-file-name=%s" % SANITIZED[kind][1]], capture_output=True, text=True)
    return os.path.realpath(out.stdout.strip())


class Run:
    """One traced run: its process result and the trace files it left."""

    def __init__(self, proc, outdir):
        self.proc = proc
        self.outdir = outdir
        self.traces = sorted(glob.glob(os.path.join(outdir, "*.db")))

    @property
    def trace(self):
        assert len(self.traces) == 1, "expected one trace, found %r (stderr: %s)" % (self.traces, self.proc.stderr)
        return self.traces[0]

    def q(self, sql, *args):
        return query(self.trace, sql, *args)

    def q1(self, sql, *args):
        rows = self.q(sql, *args)
        assert len(rows) == 1 and len(rows[0]) == 1, rows
        return rows[0][0]


def base_env(extra=None):
    env = dict(os.environ)
    for k in list(env):
        if k.startswith("GPUTRACE_") or k.startswith("FAKECUDA_"):
            del env[k]
    env["LD_LIBRARY_PATH"] = FAKECUDA
    env["FAKECUDA_LAUNCH_NS"] = "0"
    if extra:
        env.update(extra)
    # a None in extra removes that variable
    return {k: v for k, v in env.items() if v is not None}


def run_traced(argv, env=None, output=None, sanitizer=None, timeout=120, outdir=None, preload=True):
    """Runs argv with the shim preloaded; traces go to a fresh directory.
    GPUTRACE_TEST_SANITIZER=asan|tsan in the environment runs every such
    program under that sanitized shim (tests/test_sanitized_suite.py)."""
    outdir = outdir or tmpdir()
    e = base_env(env)
    sanitizer = sanitizer or os.environ.get("GPUTRACE_TEST_SANITIZER") or None
    if preload:
        if sanitizer:
            shim, rt = SANITIZED[sanitizer][0], sanitizer_runtime(sanitizer)
            e["LD_PRELOAD"] = "%s %s" % (rt, shim)
            e.setdefault("ASAN_OPTIONS", "detect_leaks=0:abort_on_error=0:exitcode=99")
            e.setdefault("UBSAN_OPTIONS", "halt_on_error=1:exitcode=99:print_stacktrace=1")
            e.setdefault("TSAN_OPTIONS", "exitcode=99:halt_on_error=0")
            # a sanitized shim makes every sampling round cost many times
            # what it does plain: no budget, so that the sampler makes the
            # rounds a plain run makes (the sanitizer checks what they do)
            if not (env and "GPUTRACE_SAMPLE_BUDGET" in env):
                e["GPUTRACE_SAMPLE_BUDGET"] = "0"
        else:
            e["LD_PRELOAD"] = SHIM
    if "GPUTRACE_OUTPUT" not in e:
        e["GPUTRACE_OUTPUT"] = output or os.path.join(outdir, "trace-%p.db")
    proc = subprocess.run(argv, env=e, capture_output=True, text=True, timeout=timeout)
    return Run(proc, outdir)


def run_plain(argv, env=None, timeout=120):
    return subprocess.run(argv, env=base_env(env), capture_output=True, text=True, timeout=timeout)


def query(db, sql, *args):
    con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    try:
        return con.execute(sql, args).fetchall()
    finally:
        con.close()


def stack_functions(db, stack_id, limit=8):
    rows = query(db, "SELECT function FROM stack_frames WHERE stack_id = ? ORDER BY depth LIMIT ?", stack_id, limit)
    return [r[0] for r in rows]


def assert_eq(a, b, what=""):
    assert a == b, "%s: expected %r, got %r" % (what, b, a)


def site_function(frame):
    """The function a site frame names, in either form docs/report.md
    gives: `file:LINE in function` (native with lines, Python) or
    `function (module+0xOFF)`."""
    import re
    m = re.match(r"^[^ ]+:(\d+|\?) in (.*)$", frame)
    if m:
        return m.group(2).split("(")[0]
    return frame.split(" ")[0]


PYENV_PYTHON = os.path.join(BUILD, "pyenv", "bin", "python")


def torch_env(extra=None):
    """The environment PyTorch from PyPI runs on the simulated GPU in: its
    own CUDA runtime (libcudart.so.13, in its nvidia wheel) is replaced by
    the simulated one of the same soname, preloaded so that torch's
    libraries bind to it whatever RPATH they carry; the simulated driver
    comes from LD_LIBRARY_PATH (docs/testing.md, "PyTorch")."""
    e = {"LD_PRELOAD": os.path.join(FAKECUDA, "libcudart.so.13")}
    e.update(extra or {})
    return base_env(e)


PY_MARKER = r"# @(\w+)\s*$"


def marker_lines(path, pattern=PY_MARKER):
    """{name: line} of a source's marker comments: pattern's first group
    names the line (Python's "# @name" by default), so tests take the
    lines they expect from the source, never from numbers written down."""
    out = {}
    with open(path) as f:
        for n, text in enumerate(f, 1):
            m = re.search(pattern, text)
            if m:
                out[m.group(1)] = n
    return out

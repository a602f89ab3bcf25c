"""The commands README.md and docs/ show work as written.

Every fenced `sh` block of README.md and docs/*.md runs (bash -e, one block
at a time, in a scratch directory that sees the checkout's build/, demo/,
scripts/ and tests/), unless an HTML comment `<!-- notest: WHY -->` right
above it says why it cannot (the suite's own commands, a GPU). Every
console block, one whose lines start with `$ `, runs each command and
checks the output lines the docs quote at the left margin (the tool's
messages, each section's heading and first line; the indented rows under
them vary with timing): each must match an output line, with numbers, hex
offsets and paths left free. A block with `<!-- file: PATH -->` right
above it shows that file of the checkout, whole and as it is (a script
another test runs, e.g. docs/ranks.md's Dask recipe)."""
import glob
import os
import re
import subprocess

from gtlib import BUILD, ROOT, assert_eq, base_env, tmpdir

DOCS = [os.path.join(ROOT, "README.md")] + sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)


def _blocks(with_comment=False):
    """(file, line, language, text, skipped) of each fenced block; with_comment: and the line above it."""
    for path in DOCS:
        with open(path) as f:
            text = f.read()
        for m in FENCE.finditer(text):
            before = text[:m.start()].rstrip().splitlines()[-1:] or [""]
            skip = before[0].strip().startswith("<!-- notest:")
            where = (path, text.count("\n", 0, m.start()) + 1, m.group(1), m.group(2), skip)
            yield where + (before[0].strip(),) if with_comment else where


def _scratch():
    """A directory that looks like the checkout (every top-level entry
    linked in) so the docs' relative paths and make work, while the files
    the commands write land apart."""
    d = tmpdir()
    for name in os.listdir(ROOT):
        if name != ".git":
            os.symlink(os.path.join(ROOT, name), os.path.join(d, name))
    return d


def _env():
    env = base_env()
    env.pop("LD_LIBRARY_PATH", None)  # as a user's shell: the programs find the simulated GPU themselves
    env["PATH"] = BUILD + os.pathsep + env.get("PATH", "")
    return env


def _pattern(line):
    """A quoted output line as a regex: numbers, hex offsets, durations and
    paths free, the words fixed."""
    out, pos = [], 0
    token = re.compile(r"(/\S*\.db|0x[0-9a-f]+|\d[\d.,]*)")
    for m in token.finditer(line):
        out.append(re.escape(line[pos:m.start()]))
        out.append(r"\S*\.db" if m.group(0).endswith(".db") else r"0x[0-9a-f]+" if m.group(0).startswith("0x")
                   else r"\d[\d.,]*")
        pos = m.end()
    out.append(re.escape(line[pos:]))
    return re.compile("".join(out).replace(r"\ ", r"\s+") + r"\s*$")


def test_shell_blocks_run():
    ran = 0
    for path, line, lang, text, skip in _blocks():
        if lang != "sh" or skip:
            continue
        d = _scratch()
        r = subprocess.run(["bash", "-e", "-c", text], cwd=d, env=_env(), capture_output=True, text=True,
                           timeout=600)
        assert_eq(r.returncode, 0, "%s:%d: %s\nstdout: %s\nstderr: %s" % (os.path.relpath(path, ROOT), line,
                                                                        text, r.stdout[-2000:], r.stderr[-2000:]))
        ran += 1
    assert ran >= 2, "the docs' sh blocks were not found"


def test_console_blocks_print_what_they_quote():
    ran = 0
    for path, line, lang, text, skip in _blocks():
        lines = text.replace("\\\n", " ").splitlines()
        if skip or not lines or not lines[0].startswith("$ "):
            continue
        d = _scratch()
        cmd, quoted = None, []
        for ln in lines + ["$ "]:
            if ln.startswith("$ "):
                if cmd:
                    r = subprocess.run(["bash", "-c", cmd], cwd=d, env=_env(), capture_output=True, text=True,
                                       timeout=600)
                    where = "%s:%d: %s" % (os.path.relpath(path, ROOT), line, cmd)
                    assert r.returncode not in (126, 127), "%s\n%s" % (where, r.stderr)
                    got = (r.stdout + r.stderr).splitlines()
                    for q in quoted:
                        pat = _pattern(q)
                        assert any(pat.match(g) for g in got), "%s: no line like %r in\n%s" % (where, q, "\n".join(got))
                    ran += 1
                cmd, quoted = ln[2:].strip(), []
            elif ln.strip() and not ln[0].isspace() and not ln.startswith("..."):
                quoted.append(ln)
    assert ran >= 1, "the docs' console examples were not found"


def test_blocks_that_show_a_file_are_that_file():
    shown = 0
    for path, line, lang, text, skip, above in _blocks(with_comment=True):
        m = re.match(r"<!-- file: (\S+) -->$", above)
        if not m:
            continue
        with open(os.path.join(ROOT, m.group(1))) as f:
            assert text == f.read(), "%s:%d: the block is not %s as it is" % (os.path.relpath(path, ROOT), line,
                                                                              m.group(1))
        shown += 1
    assert shown >= 1, "the docs' file blocks were not found"

"""Every output valid in its format whatever the names hold (issue 31,
item 12): kernel, NVTX and thread names with bytes that are not UTF-8 and
control characters (tests/progs/odd_names.c) once made report's JSON,
info's JSON and the chrome-json export invalid JSON, and the text and HTML
outputs invalid UTF-8. Each output is read here with a strict parser: the
bytes decoded as UTF-8 with errors raised, JSON by json.loads (which refuses
raw control characters in strings)."""
import json
import os
import subprocess

from gtlib import GPUTRACE, SHIM, assert_eq, prog, query, run_traced

FFFD = "\ufffd"


def _trace(more=0):
    r = run_traced([prog("odd_names")] + ([str(more)] if more else []), env={"NVTX_INJECTION64_PATH": SHIM})
    p, db = r.proc, r.trace
    assert_eq((p.returncode, p.stdout), (0, "odd_names: %d launches\n" % (6 + more)), p.stderr)
    # the trace keeps the names as the program gave them (the oracle below)
    names = {bytes.fromhex(h) for (h,) in query(db, "SELECT DISTINCT hex(name) FROM kernels")}
    assert b"k\xe9rn\x80el\x07\t\"x\\" in names, names
    return db, r.outdir


def _run(*args):
    r = subprocess.run([GPUTRACE] + list(args), capture_output=True, timeout=120)
    assert_eq(r.returncode, 0, r.stderr.decode(errors="replace"))
    return r.stdout


def _text(raw, what):
    """Valid UTF-8, no control characters but newline and tab."""
    s = raw.decode("utf-8")  # strict: raises on any invalid sequence
    bad = sorted({c for c in s if (ord(c) < 0x20 and c not in "\n\t") or ord(c) == 0x7f})
    assert not bad, (what, bad)
    return s


def _json(raw, what):
    return json.loads(_text(raw, what))


def _strings(v):
    if isinstance(v, str):
        yield v
    elif isinstance(v, dict):
        for k, x in v.items():
            yield k
            yield from _strings(x)
    elif isinstance(v, list):
        for x in v:
            yield from _strings(x)


def test_odd_names_leave_every_output_valid():
    db, d = _trace()
    rep = _json(_run("report", "--format", "json", db), "report json")
    info = _json(_run("info", "--format", "json", db), "info json")
    chrome = _json(_run("export", "--format", "chrome-json", "-o", "-", db), "chrome-json")
    summary = _json(_run("summarize", "-o", "-", db), "summarize")
    text = _text(_run("report", db), "report text")
    _text(_run("info", db), "info text")
    html = _text(_run("report", "--format", "html", db), "report html")
    # The names survive as far as they are valid: the well-formed ones as
    # they were, each bad byte as U+FFFD, each control character as '?'
    # (JSON escapes them instead, before the filter sees them).
    every = set(_strings(rep)) | set(_strings(info)) | set(_strings(chrome)) | set(_strings(summary))
    assert any(s.startswith("k" + FFFD + "rn" + FFFD + "el") for s in every), sorted(every)[:40]
    assert "fine_\u00e9" in every
    assert any("ok \u2713" == s for s in _strings(chrome)), "the valid NVTX name kept"
    assert any(s.startswith("step" + FFFD + FFFD) for s in _strings(chrome))
    assert "fine_\u00e9" in text and "k" + FFFD + "rn" + FFFD + "el?" in text, text
    assert "fine_\u00e9" in html
    # the figures are untouched: launches by kernel, from the trace itself
    want = dict(query(db, "SELECT hex(name), count(*) FROM kernels GROUP BY name"))
    assert_eq(sorted(want.values()), [1, 2, 3])
    top = {k["name"]: k["launches"] for k in info["top_kernels"]}
    assert_eq(sorted(top.values()), [1, 2, 3], top)


def test_cut_sequences_across_writes():
    """The filter between the printers and the file holds a sequence cut
    between two writes: outputs of megabytes whose names are valid
    multibyte UTF-8 keep every name whole, byte for byte."""
    db, _ = _trace(3000)
    name = "\u00e9" * 60 + "\u2713" * 30
    want = query(db, "SELECT count(*) FROM kernels WHERE name = ?", name)[0][0]
    assert_eq(want, 3000)
    for args in (["export", "--format", "chrome-json", "-o", "-"], ["report", "--format", "json", "--top", "5"],
                 ["report", "--format", "html"]):
        raw = _run(*(args + [db]))
        assert len(raw) > 1 << 16 or args[0] == "report", (args, len(raw))
        s = _text(raw, args)
        # no piece of the long name was taken for a bad byte
        for c in ("\u00e9", "\u2713"):
            assert c + FFFD not in s and FFFD + c not in s, args
        assert s.count(name) >= 1, args
    # each launch's call and kernel are named: every one came through whole
    chrome = _text(_run("export", "--format", "chrome-json", "-o", "-", db), "chrome-json")
    assert chrome.count(name) >= 3000, chrome.count(name)

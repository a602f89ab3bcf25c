"""A gap's site (docs/report.md): when the host was inside CUDA calls of
one kind while the GPU waited, the findings, the idle-by-site rows and the
listed gaps name the calls that spent the time, not the launch that came
after them. The truth is the program's own source: the line carrying its
marker comment."""
import os

import oracle
from gtlib import ROOT, assert_eq, prog, run_traced

MS = 1_000_000


def _marker_line(src, marker):
    with open(os.path.join(ROOT, "tests", "progs", src)) as f:
        lines = [i + 1 for i, text in enumerate(f) if "/* %s */" % marker in text]
    assert_eq(len(lines), 1, "lines marked %s in %s" % (marker, src))
    return "%s:%d" % (src, lines[0])


def _at(site, where):
    """Whether a site's innermost frame is `file:LINE`."""
    return bool(site) and site[0].split(" in ")[0] == where


def test_alloc_loop_blames_the_line_that_allocates():
    run = run_traced([prog("alloc_loop")])
    assert_eq(run.proc.returncode, 0, run.proc.stderr[-2000:])
    rc, doc, err = oracle.run_report([run.trace], MS)
    assert_eq(rc, 0, err[-2000:])
    alloc = _marker_line("alloc_loop.c", "ALLOC_LINE")
    launch = _marker_line("alloc_loop.c", "LAUNCH_LINE")
    s = doc["summary"]
    # the trace's own word: the host spent most of the idle in cudaMalloc
    assert s["idle_by_cause_ns"]["alloc"] > s["idle_ns"] // 2, s
    kinds = {f["kind"]: f for f in doc["findings"]}
    assert "idle_alloc" in kinds, doc["findings"]
    f = kinds["idle_alloc"]
    assert _at(f["site"], alloc), (alloc, f)
    # every gap the allocations spent counts for the allocating line
    top = doc["idle_by_site"][0]
    assert _at(top["site"], alloc), (alloc, doc["idle_by_site"][:3])
    assert not any(_at(x["site"], launch) and x["idle_ns"] >= top["idle_ns"] // 2 for x in doc["idle_by_site"])
    gaps = [g for g in doc["idle_gaps"] if g["cause"] == "alloc"]
    assert gaps, doc["idle_gaps"]
    for g in gaps:
        assert _at(g["spent"], alloc), (alloc, g)
        assert_eq(g["spent_api"], "cudaMalloc")
        assert _at(g["after"], launch), (launch, g)  # the launch that ended it stays named as such
    errs = oracle.check([run.trace], doc, MS)
    assert not errs, "\n".join(e[:400] for e in errs[:20])


def test_alloc_loop_release_build_blames_the_allocating_function():
    """The same loop built -O3 without debug info: no lines, but the site
    is still the function that allocates, not the one that launches."""
    from gtlib import site_function
    run = run_traced([prog("alloc_loop_O3")])
    assert_eq(run.proc.returncode, 0, run.proc.stderr[-2000:])
    rc, doc, err = oracle.run_report([run.trace], MS)
    assert_eq(rc, 0, err[-2000:])
    f = {x["kind"]: x for x in doc["findings"]}["idle_alloc"]
    assert_eq(site_function(f["site"][0]), "step_alloc")
    assert_eq(site_function(doc["idle_by_site"][0]["site"][0]), "step_alloc")
    errs = oracle.check([run.trace], doc, MS)
    assert not errs, "\n".join(e[:400] for e in errs[:20])

"""`gputrace diff` and `audit --baseline` on build/tests/progs/diff_work:
each variant plants one known change (a pageable copy in load_batch, a
sync in wait_step, a slower step_kernel), recorded twice; the diff must
name exactly that change and stay silent between repeats of one variant.
The JSON figures are re-checked by plain SQL over the public views."""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gtlib  # noqa: E402

GPUTRACE = gtlib.GPUTRACE
_TRACES = {}


def traces(variant):
    """Two traces of one variant, recorded once per test run."""
    if variant not in _TRACES:
        paths = []
        for _ in range(2):
            r = gtlib.run_traced([gtlib.prog("diff_work"), variant])
            assert r.proc.returncode == 0, r.proc.stderr
            paths.append(r.trace)
        _TRACES[variant] = paths
    return _TRACES[variant]


def gt(*args):
    return subprocess.run([GPUTRACE] + list(args), capture_output=True, text=True, timeout=120)


def diff_json(base, new):
    r = gt("diff", "--format", "json", *base, "--vs", *new)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def reported(doc):
    """(kind, function or figure) of every row beyond noise or new/vanished."""
    out = set()
    for row in doc["rows"]:
        if row["status"] == "same":
            continue
        name = row["name"]
        if row["kind"] in ("h2d_site", "sync_site"):
            name = gtlib.site_function(name.split(" < ")[0])
        out.add((row["kind"], name, row["status"]))
    return out


def span_s(db):
    return gtlib.query(db, "SELECT max(end_ns) - min(start_ns) FROM api_calls")[0][0] / 1e9


def row(doc, kind, pred):
    rows = [r for r in doc["rows"] if r["kind"] == kind and pred(r["name"])]
    assert len(rows) == 1, rows
    return rows[0]


def close(a, b, what):
    assert abs(a - b) <= 1e-6 * max(1.0, abs(b)) + 0.01, "%s: %r vs %r" % (what, a, b)


def test_diff_repeats_silent():
    for v in ("base", "sync"):
        doc = diff_json(traces(v)[:1], traces(v)[1:])
        assert reported(doc) == set(), (v, reported(doc))
    r = gt("diff", *traces("base"), "--vs", *traces("base"))
    assert "no change beyond noise" in r.stdout, r.stdout


def test_diff_pageable_named():
    base, new = traces("base"), traces("pageable")
    doc = diff_json(base, new)
    assert reported(doc) == {("summary", "pageable_h2d_bytes", "changed"), ("h2d_site", "load_batch", "new")}, \
        reported(doc)
    sql = "SELECT coalesce(sum(bytes), 0) FROM memcpys WHERE kind = 'HtoD' AND host_mem = 'pageable'"
    per = [gtlib.query(db, sql)[0][0] for db in new]
    assert per[0] > 0
    s = row(doc, "summary", lambda n: n == "pageable_h2d_bytes")
    close(s["new_raw"], sum(per) / 2, "pageable bytes per trace")
    close(s["new"], sum(p / span_s(db) for p, db in zip(per, new)) / 2, "pageable bytes per s")
    close(s["base"], 0, "base pageable")
    h = row(doc, "h2d_site", lambda n: "load_batch" in n)
    assert "+0x" not in h["name"]
    close(h["new_raw"], sum(per) / 2, "load_batch bytes")


def sync_count(db, fn):
    rows = gtlib.query(db, "SELECT a.stack_id FROM syncs s JOIN api_calls a ON a.id = s.api_call_id")
    return sum(1 for (sid,) in rows if fn in gtlib.stack_functions(db, sid, 2)[:1])


def test_diff_sync_named():
    base, new = traces("base"), traces("sync")
    doc = diff_json(base, new)
    assert reported(doc) == {("sync_site", "wait_step", "new")}, reported(doc)
    s = row(doc, "sync_site", lambda n: "wait_step" in n)
    assert s["new_count"] == sum(sync_count(db, "wait_step") for db in new) > 0
    r = gt("diff", *base, "--vs", *new)
    assert "new sites:" in r.stdout and "in wait_step" in r.stdout, r.stdout


def test_diff_slow_kernel_named():
    base, new = traces("base"), traces("slow")
    doc = diff_json(base, new)
    got = {(k, n) for k, n, _ in reported(doc)}
    assert ("kernel", "step_kernel") in got and ("summary", "gpu_busy") in got, got
    # only the kernel's time and what follows from it: busy up, idle down
    # (during the host work, and after the last kernel before the final sync)
    assert got <= {("kernel", "step_kernel"), ("summary", "gpu_busy"), ("summary", "gpu_idle"),
                   ("summary", "idle_host"), ("summary", "idle_teardown")}, got
    sql = "SELECT sum(end_ns - start_ns) FROM kernels WHERE name = 'step_kernel'"
    k = row(doc, "kernel", lambda n: n == "step_kernel")
    for side, dbs in (("base", base), ("new", new)):
        per = [gtlib.query(db, sql)[0][0] for db in dbs]
        close(k[side + "_raw"], sum(per) / 2, side + " kernel ns")
        close(k[side], sum(p / span_s(db) for p, db in zip(per, dbs)) / 2, side + " kernel ns/s")
    assert k["change_pct"] > 10


def test_audit_baseline():
    base = traces("base")
    ok = gt("audit", "--baseline", *base, "--max-regression-pct", "10", "--max-new-sync-sites", "0",
            "--max-new-pageable-h2d-bytes", "0", *traces("base"))
    assert ok.returncode == 0, ok.stdout + ok.stderr
    r = gt("audit", "--baseline", *base, "--max-new-pageable-h2d-bytes", "0", *traces("pageable"))
    assert r.returncode == 1 and "load_batch" in r.stdout, r.stdout + r.stderr
    r = gt("audit", "--baseline", *base, "--max-new-sync-sites", "0", *traces("sync"))
    assert r.returncode == 1 and "wait_step" in r.stdout, r.stdout + r.stderr
    r = gt("audit", "--baseline", *base, "--max-regression-pct", "10", *traces("slow"))
    assert r.returncode == 1 and "step_kernel" in r.stdout, r.stdout + r.stderr
    r = gt("audit", "--baseline", *base, *traces("base"))
    assert r.returncode == 2 and "needs a budget" in r.stderr


def test_audit_baseline_cannot_judge():
    d = gtlib.tmpdir("gputrace-diff-")
    r = gtlib.run_traced([gtlib.prog("rt_basic")], outdir=d)
    assert r.proc.returncode == 0
    short = r.trace
    # rt_basic's span is far under half of diff_work's 100 ms
    res = gt("audit", "--baseline", *traces("base"), "--max-new-sync-sites", "5", short)
    assert res.returncode == 2 and "under half" in res.stderr, res.stdout + res.stderr


def test_diff_usage():
    assert gt("diff", traces("base")[0]).returncode == 2
    assert gt("diff", "--format", "xml", "a.db", "--vs", "b.db").returncode == 2
    assert gt("diff", "--help").returncode == 0
    assert gt("diff", "missing.db", "--vs", "missing2.db").returncode == 2

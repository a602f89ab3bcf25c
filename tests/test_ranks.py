"""Many ranks, one answer (docs/ranks.md): simulated jobs of rank_work
processes on this machine (tests/ranklib.py), each with its own trace,
meeting in the simulated GPU's collectives. The planted answers (which
rank stalls, in which function and step, for how long) are set here; every
figure of the ranks section is recomputed apart from the C analyzer: the
per-rank figures by tests/oracle.py from the public views, the
collectives, waits and stragglers below with plain SQL over `kernels` and
`ranges` of each trace."""
import json
import os
import statistics
import subprocess

import gtlib
import oracle
import ranklib
from gtlib import assert_eq

GT = gtlib.GPUTRACE
STALL_MS = 300
COLL_GLOBS = ["ncclDevKernel_*", "ncclKernel_*", "*ncclDevKernel_*", "*ncclKernel_*", "rcclKernel*", "*oneccl*"]
FIGS = ["span_ns", "gpu_busy_ns", "gpu_idle_ns", "launch_host_ns", "h2d_bytes", "pageable_h2d_pct", "sync_ns",
        "collective_ns", "collective_wait_ns", "collective_data_ns", "compute_ns", "caused_wait_ns"]


def fmt_dur(ns):
    ns = int(ns + 0.5)
    if ns < 1000:
        return "%d ns" % ns
    if ns < 1000000:
        return "%.1f us" % (ns / 1e3)
    if ns < 1000000000:
        return "%.2f ms" % (ns / 1e6)
    return "%.3f s" % (ns / 1e9)


def report(paths, *extra):
    p = subprocess.run([GT, "report"] + list(extra) + list(paths), capture_output=True, text=True, timeout=300)
    return p


def report_json(paths, *extra):
    p = report(paths, "--format", "json", "--top", "0", *extra)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


# ---- the independent computation ----

def rank_of(db):
    rows = gtlib.query(db, "SELECT value FROM meta WHERE key = 'rank'")
    return rows[0][0]


def top_ranges(db):
    """(tid, start, end, name, index among the thread's top-level ranges of that name)"""
    rows = gtlib.query(db, "SELECT tid, start_ns, end_ns, COALESCE(name, '') FROM ranges WHERE kind = 'push' "
                           "AND depth = 0 AND end_ns IS NOT NULL ORDER BY tid, start_ns")
    seen, out = {}, []
    for tid, s, e, name in rows:
        k = (tid, name)
        out.append((tid, s, e, name, seen.get(k, 0)))
        seen[k] = seen.get(k, 0) + 1
    return out


def collectives(db):
    """[(stream index, ordinal, start, end, (range, index) or None, name, step)], numbered as docs/ranks.md
    says: streams by their first collective, collectives by GPU start on each; range: the top-level NVTX
    range holding its launch on its launching thread, else on any thread; step: the number of the step
    range ('step', the name rank_work gives them; numbered by start) holding its launch the same way, else
    -1."""
    where = " OR ".join("k.name GLOB ?" for _ in COLL_GLOBS)
    rows = gtlib.query(db, "WITH st AS (SELECT tid, start_ns, end_ns, row_number() OVER (ORDER BY start_ns) - 1 AS n "
                           "  FROM ranges WHERE name = 'step' AND end_ns IS NOT NULL), "
                           "c AS (SELECT k.name, COALESCE(k.device, -1) AS dev, "
                           "  COALESCE(k.gpu_stream, k.stream, -1) AS stream, "
                           "  COALESCE(k.api_start_ns, k.start_ns) AS launch, k.start_ns, k.end_ns, a.tid "
                           "  FROM kernels k LEFT JOIN api_calls a ON a.id = k.api_call_id WHERE (%s)) "
                           "SELECT c.*, COALESCE("
                           "  (SELECT n FROM st WHERE st.tid = c.tid AND st.start_ns <= c.launch AND c.launch < st.end_ns),"
                           "  (SELECT min(n) FROM st WHERE st.start_ns <= c.launch AND c.launch < st.end_ns), -1) "
                           "FROM c ORDER BY c.start_ns" % where, *COLL_GLOBS)
    ranges = top_ranges(db)
    streams, out = {}, []
    for name, dev, stream, launch, start, end, tid, step in rows:
        si = streams.setdefault((dev, stream), [len(streams), 0])
        rng = next(((r[3], r[4]) for r in ranges if r[0] == tid and r[1] <= launch <= r[2]), None)
        if rng is None:  # none on the launching thread: the first by start of any thread's
            rng = next(((r[3], r[4]) for r in sorted(ranges, key=lambda r: r[1]) if r[1] <= launch <= r[2]), None)
        out.append((si[0], si[1], start, end, rng, name, step))
        si[1] += 1
    return out


def match_keys(colls, by_step):
    """{rank: [(key, collective)]}: by step, (stream, step, place among the rank's collectives of that stream and
    step); by order, (stream, -1, ordinal)."""
    out = {}
    for r, cs in colls.items():
        seen, keyed = {}, []
        for c in cs:
            if by_step:
                k = (c[0], c[6])
                keyed.append(((c[0], c[6], seen.get(k, 0)), c))
                seen[k] = seen.get(k, 0) + 1
            else:
                keyed.append(((c[0], -1, c[1]), c))
        out[r] = keyed
    return out


def median_low_high(v):
    v = sorted(v)
    n = len(v)
    return v[n // 2] if n % 2 else v[n // 2 - 1] + (v[n // 2] - v[n // 2 - 1]) // 2


def outlier_flags(values, floor):
    med = statistics.median(values)
    mad = statistics.median([abs(x - med) for x in values])
    lim = max(3 * mad, 0.10 * abs(med), floor)
    return [1 if x - med > lim else -1 if med - x > lim else 0 for x in values]


def expected_ranks(dbs, force_order=False):
    """The ranks section, recomputed: {rank: figures}, {(stream, step, place): collective}, job figures.
    force_order: match by order even where there are steps (what the tests show step matching avoids)."""
    procs = {rank_of(db): oracle.Process(db) for db in dbs}
    colls = {rank_of(db): collectives(db) for db in dbs}
    ranks = sorted(procs, key=int)
    fig = {}
    for r in ranks:
        s = procs[r].summary()
        coll_ns = sum(c[3] - c[2] for c in colls[r])
        fig[r] = {"span_ns": s["span_ns"], "gpu_busy_ns": s["busy_ns"], "gpu_idle_ns": s["idle_ns"],
                  "launch_host_ns": s["launch_host_ns"], "h2d_bytes": s["h2d_bytes"],
                  "pageable_h2d_pct": 100.0 * s["pageable_h2d_bytes"] / s["h2d_bytes"] if s["h2d_bytes"] else 0,
                  "sync_ns": s["sync_ns"], "collective_ns": coll_ns, "collective_wait_ns": 0,
                  "compute_ns": max(0, s["kernel_ns"] - coll_ns), "caused_wait_ns": 0,
                  "idle_by_cause_ns": s["idle_by_cause_ns"], "complete": procs[r].t.complete}
    # by step when every rank that ran collectives has one in a step
    by_step = all(any(c[6] >= 0 for c in colls[r]) for r in ranks if colls[r]) and any(colls[r] for r in ranks)
    if force_order:
        by_step = False
    matched = {}
    for r, keyed in match_keys(colls, by_step).items():
        for key, (si, o, start, end, rng, name, step) in keyed:
            matched.setdefault(key, {})[r] = (start, end, rng, name)
    spans = [fig[r]["span_ns"] for r in ranks]
    med_span = statistics.median(spans)
    floor = med_span * 0.01
    last_count = {r: 0 for r in ranks}
    out_colls = {}
    for key, by in sorted(matched.items()):
        arr = {r: by[r][0] for r in by}
        latest = max(arr.values())
        last = min((r for r in by if arr[r] == latest), key=int)  # ties: the first in rank order
        med = median_low_high(list(arr.values()))
        wait = 0
        for r in by:
            w = min(latest - arr[r], by[r][1] - by[r][0])
            fig[r]["collective_wait_ns"] += w
            if r != last:
                wait += w
        fig[last]["caused_wait_ns"] += wait
        if len(by) > 1 and latest - med >= floor:
            last_count[last] += 1
        out_colls[key] = {"last": last, "ranks": len(by), "earliest_ns": min(arr.values()), "latest_ns": latest,
                          "median_ns": med, "late_ns": latest - med, "wait_ns": wait, "where": by[last][2],
                          "kernel": by[last][3], "arrivals": arr}
    # the job's order on each stream: by earliest arrival
    for si in {k[0] for k in out_colls}:
        keys = sorted((k for k in out_colls if k[0] == si), key=lambda k: (out_colls[k]["earliest_ns"], k))
        for o, k in enumerate(keys):
            out_colls[k]["ordinal"] = o
    for r in ranks:
        fig[r]["collective_data_ns"] = max(0, fig[r]["collective_ns"] - fig[r]["collective_wait_ns"])
        fig[r]["last_count"] = last_count[r]
    for f in FIGS:
        fl = 1048576.0 if f == "h2d_bytes" else 5.0 if f == "pageable_h2d_pct" else floor
        for r, flag in zip(ranks, outlier_flags([fig[r][f] for r in ranks], fl)):
            fig[r].setdefault("outliers", {})[f] = flag
    others = len(ranks) - 1
    for r in ranks:
        fig[r]["straggler"] = (fig[r]["outliers"]["caused_wait_ns"] > 0 and
                               fig[r]["caused_wait_ns"] / others >= med_span * 0.10)
    job = {"median_span_ns": med_span, "floor_ns": floor, "matched_by": "step" if by_step else "order",
           "straggler_wait_pct": 100.0 * max(fig[r]["caused_wait_ns"] for r in ranks) / others / med_span}
    comp = [fig[r]["compute_ns"] for r in ranks]
    job["skew_pct"] = 100.0 * (max(comp) - statistics.median(comp)) / statistics.median(comp)
    return ranks, fig, out_colls, job, procs


def close(a, b, what, rel=1e-9, abs_=1.0):
    assert abs(a - b) <= max(abs_, rel * abs(b)), "%s: expected %r, got %r" % (what, b, a)


def check_section(got, dbs):
    """Every figure of report's "ranks" JSON against the recomputation."""
    ranks, fig, colls, job, procs = expected_ranks(dbs)
    assert_eq([row["rank"] for row in got["rows"]], ranks, "rows in rank order")
    assert_eq(len(got["collectives"]), len(colls), "collectives listed")
    for k in ("median_span_ns", "floor_ns"):
        close(got[k], job[k], k, abs_=1)
    close(got["straggler_wait_pct"], job["straggler_wait_pct"], "straggler_wait_pct", rel=1e-6, abs_=1e-6)
    close(got["skew_pct"], job["skew_pct"], "skew_pct", rel=1e-6, abs_=1e-6)
    for row in got["rows"]:
        want = fig[row["rank"]]
        for f in FIGS:
            close(row[f], want[f], "rank %s %s" % (row["rank"], f), rel=1e-6, abs_=1)
            assert_eq(row["outliers"].get(f, 0), want["outliers"][f], "rank %s outlier %s" % (row["rank"], f))
        assert_eq(row["idle_by_cause_ns"], want["idle_by_cause_ns"], "rank %s idle by cause" % row["rank"])
        assert_eq(row["straggler"], want["straggler"], "rank %s straggler" % row["rank"])
        assert_eq(row["last_count"], want["last_count"], "rank %s last_count" % row["rank"])
        assert_eq(row["complete"], bool(want["complete"]), "rank %s complete" % row["rank"])
    assert_eq(got["matched_by"], job["matched_by"], "matched by")
    assert_eq(got["collectives_total"], len(colls), "collectives matched")
    for c in got["collectives"]:
        key = (c["stream"], -1 if c["step"] is None else c["step"], c["ordinal"] if c["in_step"] is None
               else c["in_step"])
        want = colls[key]
        what = "collective %r" % (key,)
        for k in ("ordinal", "ranks", "earliest_ns", "latest_ns", "median_ns", "late_ns", "wait_ns", "last",
                  "kernel"):
            assert_eq(c[k], want[k], what + " " + k)
        assert_eq((c["range"], c["range_index"]) if c["range"] is not None else None, want["where"],
                  what + " range")
    stragglers = [r for r in ranks if fig[r]["straggler"]]
    worst = max(stragglers, key=lambda r: fig[r]["caused_wait_ns"]) if stragglers else None
    assert_eq(got["worst"], worst, "worst rank")
    return ranks, fig, colls, procs


def check_planted(got, text, dbs, world, stall_rank, stall_step):
    """The report names the stalled rank, its step, the wait it caused on
    each other rank (within 10% of the stall) and the stalled function."""
    ranks, fig, colls, procs = check_section(got, dbs)
    r = str(stall_rank)
    assert_eq(got["worst"], r, "the straggler")
    assert_eq([x["rank"] for x in got["rows"] if x["straggler"]], [r], "stragglers")
    c = colls[(0, stall_step, 0)]
    assert_eq((c["last"], c["where"]), (r, ("step", stall_step)), "the stalled collective")
    # each other rank waited for it about the stall, measured from the traces alone
    for q in ranks:
        if q == r:
            continue
        w = c["latest_ns"] - c["arrivals"][q]
        assert abs(w - STALL_MS * 1e6) <= 0.10 * STALL_MS * 1e6, (q, w)
    assert abs(c["wait_ns"] - (world - 1) * STALL_MS * 1e6) <= 0.10 * (world - 1) * STALL_MS * 1e6, c
    # among its longest idle gaps, the one in that step: outside CUDA, ended in load_batch
    # (a rank that started early may also have waited long for the others before step 0)
    row = next(x for x in got["rows"] if x["rank"] == r)
    gap = [g for g in row["gaps"] if (g["range"], g["range_index"]) == ("step", stall_step)]
    assert_eq(len(gap), 1, "gaps of rank %s in step %d" % (r, stall_step))
    gap = gap[0]
    assert_eq(gap["cause"], "host", "stall gap cause")
    assert "load_batch" in gap["after"], gap
    assert abs(gap["dur_ns"] - STALL_MS * 1e6) <= 0.10 * STALL_MS * 1e6, gap
    # the same gap, found by the oracle from the views
    want = [x["dur_ns"] for x in procs[r].listed_gaps() if x["cause"] == "host" and abs(x["dur_ns"] - gap["dur_ns"]) < 1]
    assert_eq(want, [gap["dur_ns"]], "stall gap duration (oracle)")
    # the text says the same, at the top
    head = text.split("\n\n")[0].replace("\n", " ")
    late = c["late_ns"]
    for piece in ["Straggler: rank %s made the others wait %s in all" % (r, fmt_dur(fig[r]["caused_wait_ns"])),
                  "(%s per other rank, %.1f%% of the median span)" % (
                      fmt_dur(fig[r]["caused_wait_ns"] / (world - 1)), got["straggler_wait_pct"]),
                  "in NVTX range 'step' #%d" % stall_step,
                  "it arrived %s after the median rank and the others waited %s" % (fmt_dur(late),
                                                                                   fmt_dur(c["wait_ns"])),
                  "Its longest GPU idle gaps: %s host outside CUDA in NVTX range 'step' #%d, ended by "
                  "cudaMemcpy at" % (fmt_dur(gap["dur_ns"]), stall_step),
                  "load_batch"]:
        assert piece in head, (piece, head)


def run_and_check(world, steps, stall_rank, stall_step):
    outdir, res = ranklib.run_job(world, steps, stall=(stall_rank, stall_step, STALL_MS))
    for r, rc, out, err in res:
        assert rc == 0, err
    dbs = [ranklib.trace(outdir, r) for r in range(world)]
    whole = report_json(dbs, "-j", "2")
    got = whole["ranks"]
    # threads change nothing: the same document read one trace at a time
    assert_eq(report_json(dbs, "-j", "1"), whole, "report -j 1 vs -j 2")
    p = report(dbs)
    assert p.returncode == 0, p.stderr
    check_planted(got, p.stdout, dbs, world, stall_rank, stall_step)
    return outdir, dbs, got


def test_four_ranks_a_planted_stall_names_the_rank_step_wait_and_function():
    outdir, dbs, got = run_and_check(4, 12, 2, 5)
    # the map step: one summary per rank, under 1 MiB; merged without the traces, the same answer
    sums = []
    for db in dbs:
        out = db.replace(".db", ".summary.json")
        p = subprocess.run([GT, "summarize", db, "-o", out], capture_output=True, text=True)
        assert p.returncode == 0, p.stderr
        assert os.path.getsize(out) < 1 << 20
        sums.append(out)
    from_sums = report_json(sums)
    assert_eq(set(from_sums), {"report_version", "ranks"}, "a report of summaries has the ranks section only")
    assert_eq(from_sums["ranks"], got, "ranks from summaries")
    p = report(sums)
    assert p.returncode == 0 and p.stdout.startswith("== ranks: 4, one host"), p.stdout + p.stderr
    assert "Straggler: rank 2 made" in p.stdout
    check_heat_map(sums, dbs, 12)


def check_heat_map(inputs, dbs, ncoll):
    """HTML: a cell per rank and collective (12 collectives: one a column)
    that arrived after the median rank, its title saying by how much; the
    darkest is the stall."""
    import re
    out = os.path.join(os.path.dirname(dbs[0]), "ranks.html")
    p = report(inputs, "--format", "html", "-o", out)
    assert p.returncode == 0, p.stderr
    with open(out) as f:
        html = f.read()
    got = re.findall(r"<rect [^>]*fill-opacity=([\d.]+)><title>rank (\d+), collectives (\d+)-(\d+): up to "
                     r"([^<]*) after the median rank</title>", html)
    colls = expected_ranks(dbs)[2]
    assert_eq(sorted(c["ordinal"] for c in colls.values()), list(range(ncoll)), "collectives")
    want = set()
    for c in colls.values():
        arr, o = c["arrivals"], c["ordinal"]
        med = median_low_high(list(arr.values()))
        for r in arr:
            if arr[r] > med:
                want.add((r, str(o), str(o), fmt_dur(arr[r] - med)))
    assert_eq({g[1:] for g in got}, want, "heat map cells")
    darkest = max(got, key=lambda g: float(g[0]))
    assert_eq(darkest[1:3], ("2", "5"), "darkest cell")


def test_a_rank_with_one_more_collective_in_a_step_shifts_that_step_only():
    # rank 1 launches one more collective in step 2 (a broadcast on a
    # communicator of its own: the simulator's FAKECUDA_COLLECTIVE_SOLO),
    # rank 2 stalls in step 5. Matched by step, the broadcast stands alone
    # and step 5's all-reduce is still the stall; by order, rank 1's
    # all-reduces from step 3 on would meet the others' of the step before.
    world, steps, extra_rank, extra_step, stall_rank, stall_step = 4, 10, 1, 2, 2, 5
    outdir, res = ranklib.run_job(world, steps, stall=(stall_rank, stall_step, STALL_MS),
                                  env={"RANK_WORK_EXTRA": "%d:%d" % (extra_rank, extra_step),
                                       "FAKECUDA_COLLECTIVE_SOLO": "ncclDevKernel_Broadcast_*"})
    assert all(rc == 0 for _, rc, _, _ in res), res
    dbs = [ranklib.trace(outdir, r) for r in range(world)]
    n = {rank_of(db): len(collectives(db)) for db in dbs}
    assert_eq(n, {str(r): steps + (r == extra_rank) for r in range(world)}, "collectives per rank")
    got = report_json(dbs)["ranks"]
    p = report(dbs)
    assert p.returncode == 0, p.stderr
    check_planted(got, p.stdout, dbs, world, stall_rank, stall_step)
    assert "collectives matched by NVTX step" in p.stdout.splitlines()[0], p.stdout
    # the extra one: alone, in step 2, second on its stream there; no one waited for it
    alone = [c for c in got["collectives"] if c["ranks"] == 1]
    assert_eq([(c["last"], c["step"], c["in_step"], c["kernel"], c["wait_ns"]) for c in alone],
              [(str(extra_rank), extra_step, 1, "ncclDevKernel_Broadcast_RING_LL", 0)], "the extra collective")
    assert_eq(len(got["collectives"]), steps + 1, "collectives matched")
    # matched by order, every later match shifts, so the check above can
    # fail: the collective left alone is rank 1's last all-reduce, not the
    # broadcast, and rank 1's all-reduces meet the others' of the step
    # before (how much the waits then differ depends on the machine's
    # timing, so the matching itself is what is compared)
    _, fig_order, colls_order, job_order, _ = expected_ranks(dbs, force_order=True)
    assert_eq(job_order["matched_by"], "order", "the order oracle")
    alone_order = [(c["last"], c["kernel"]) for c in colls_order.values() if c["ranks"] == 1]
    assert alone_order and all(k != "ncclDevKernel_Broadcast_RING_LL" for _, k in alone_order), alone_order
    # the summaries carry the steps: the same answer without the traces
    sums = []
    for db in dbs:
        subprocess.run([GT, "summarize", db], check=True)
        sums.append(db[:-3] + ".summary.json")
    assert_eq(report_json(sums)["ranks"], got, "ranks from summaries")


def test_collectives_launched_off_the_step_thread_are_matched_by_step():
    # each all-reduce is launched from a thread of its own (as PyTorch's
    # autograd threads launch DDP's) that marks no NVTX range: its step and
    # range are the main thread's that held the launch
    world, steps, stall_rank, stall_step = 4, 8, 3, 4
    outdir, res = ranklib.run_job(world, steps, stall=(stall_rank, stall_step, STALL_MS),
                                  env={"RANK_WORK_COMM_THREAD": "1"})
    assert all(rc == 0 for _, rc, _, _ in res), res
    dbs = [ranklib.trace(outdir, r) for r in range(world)]
    # the launches come from threads without ranges (so the fallback is what is tested)
    for db in dbs:
        rows = gtlib.query(db, "SELECT count(*), count(DISTINCT c.tid) FROM kernels k JOIN api_calls c "
                               "ON c.id = k.api_call_id WHERE k.name GLOB 'ncclDevKernel_*' AND c.tid NOT IN "
                               "(SELECT tid FROM ranges)")
        assert_eq(rows, [(steps, steps)], "all-reduces from threads of their own in " + db)
    got = report_json(dbs)["ranks"]
    assert_eq(got["matched_by"], "step", "matched by")
    p = report(dbs)
    assert p.returncode == 0, p.stderr
    check_planted(got, p.stdout, dbs, world, stall_rank, stall_step)


def test_sixteen_ranks_a_planted_stall_names_the_rank():
    run_and_check(16, 10, 11, 4)


def test_a_job_without_a_stall_names_no_straggler():
    # steps of about 12 ms (a 10 ms forward kernel): a rank descheduled for a
    # while on this shared 2-CPU machine stays well under 10% of the span
    world = 6
    outdir, res = ranklib.run_job(world, 30, env={
        "FAKECUDA_KERNEL_NS": "10000000,%s=%d" % (ranklib.COLL, ranklib.DATA_NS)})
    assert all(rc == 0 for _, rc, _, _ in res), res
    dbs = [ranklib.trace(outdir, r) for r in range(world)]
    got = report_json(dbs)["ranks"]
    check_section(got, dbs)
    assert_eq(got["worst"], None, "no straggler")
    p = report(dbs)
    assert "\nNo straggler: no rank made the others wait beyond the rule" in p.stdout, p.stdout


def test_a_rank_that_crashed_is_reported_as_such_and_the_rest_analysed():
    world = 4
    outdir, res = ranklib.run_job(world, 60, crash=(1, 50))
    rcs = {r: rc for r, rc, _, _ in res}
    assert rcs[1] != 0 and all(rcs[r] == 0 for r in (0, 2, 3)), res
    dbs = [ranklib.trace(outdir, r) for r in range(world)]
    got = report_json(dbs)["ranks"]
    check_section(got, dbs)
    assert_eq([x["complete"] for x in got["rows"]], [True, False, True, True], "complete per rank")
    # the others ran all 60 collectives; the ones rank 1 never reached matched over 3 ranks
    n = {c["ordinal"]: c["ranks"] for c in got["collectives"]}
    assert_eq(len(n), 60, "collectives")
    assert n[59] == 3 and n[0] == 4, n
    p = report(dbs)
    assert "rank 1 did not finish (crashed or killed): analysed as far as its\ntrace goes" in p.stdout, p.stdout


def test_summarize_and_report_refuse_bad_inputs():
    d = gtlib.tmpdir()
    bad = os.path.join(d, "bad.summary.json")
    with open(bad, "w") as f:
        f.write('{"format": 1, "tool": "gputrace", "collectives": [[0, 0]]')
    other = os.path.join(d, "other.summary.json")
    with open(other, "w") as f:
        f.write('{"hello": 1}')
    p = report([bad, other])
    assert p.returncode == 2 and "not a gputrace rank summary (JSON:" in p.stderr, p.stderr
    p = report([other, bad])
    assert p.returncode == 2 and "other.summary.json: not a gputrace rank summary (written by" in p.stderr
    p = report([other])
    assert p.returncode == 2 and "give two or more" in p.stderr, p.stderr
    p = subprocess.run([GT, "summarize"], capture_output=True, text=True)
    assert p.returncode == 2 and "no trace given" in p.stderr
    p = subprocess.run([GT, "report", "-j", "0", bad], capture_output=True, text=True)
    assert p.returncode == 2 and "-j must be" in p.stderr


def test_audit_rank_budgets():
    # rank 3's GPU is slower: its forward kernel runs 6 ms instead of 3, so it is late at every collective
    world = 4
    outdir, res = ranklib.run_job(world, 10, env={"RANK_WORK_SLOW": "3:6000000"})
    assert all(rc == 0 for _, rc, _, _ in res), res
    dbs = [ranklib.trace(outdir, r) for r in range(world)]
    ranks, fig, colls, job, procs = expected_ranks(dbs)
    assert_eq(fig["3"]["compute_ns"], 10 * 6000000, "rank 3 compute")
    assert_eq(fig["0"]["compute_ns"], 10 * 3000000, "rank 0 compute")
    p = subprocess.run([GT, "audit", "--max-rank-skew-pct", "50", "--max-straggler-wait-pct", "99"] + dbs,
                       capture_output=True, text=True)
    assert p.returncode == 1, p.stdout + p.stderr
    lines = p.stdout.splitlines()
    assert_eq(len(lines), 2, "one line per budget")
    assert lines[0].startswith("ok   max-straggler-wait-pct: "), lines
    assert lines[1].startswith("FAIL max-rank-skew-pct: "), lines
    assert lines[1].endswith("> 50% (rank 3)"), lines
    close(float(lines[1].split(": ")[1].split("%")[0]), job["skew_pct"], "skew", abs_=0.05)
    close(float(lines[0].split(": ")[1].split("%")[0]), job["straggler_wait_pct"], "wait", abs_=0.05)
    # the same from summaries; a budget over the measured value holds
    sums = []
    for db in dbs:
        out = db[:-3] + ".summary.json"
        subprocess.run([GT, "summarize", db], check=True)
        sums.append(out)
    p = subprocess.run([GT, "audit", "--max-rank-skew-pct", "150"] + sums, capture_output=True, text=True)
    assert p.returncode == 0 and p.stdout.startswith("ok   max-rank-skew-pct: "), p.stdout + p.stderr
    p = subprocess.run([GT, "audit", "--max-idle-pct", "50"] + sums, capture_output=True, text=True)
    assert p.returncode == 2 and "a rank summary takes only the rank budgets" in p.stderr, p.stderr
    # the same budgets from a budget file (keys without the dashes); the command line overrides the file's
    bf = os.path.join(outdir, "budgets.txt")
    with open(bf, "w") as f:
        f.write("# job budgets\nmax-straggler-wait-pct = 99\nmax-rank-skew-pct = 50%  # rank 3 computes 2x\n")
    p = subprocess.run([GT, "audit", "--budget", bf] + sums, capture_output=True, text=True)
    assert p.returncode == 1, p.stdout + p.stderr
    lines = p.stdout.splitlines()
    assert_eq([x.split(":")[0] for x in lines], ["ok   max-straggler-wait-pct", "FAIL max-rank-skew-pct"], "file")
    assert lines[1].endswith("> 50% (rank 3)"), lines
    close(float(lines[1].split(": ")[1].split("%")[0]), job["skew_pct"], "skew from the file's budget", abs_=0.05)
    p = subprocess.run([GT, "audit", "--budget", bf, "--max-rank-skew-pct=150"] + sums, capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout.splitlines()[1].startswith("ok   max-rank-skew-pct: ") and "<= 150%" in p.stdout, p.stdout
    # with a per-trace budget from the file, the traces are checked one by one and the job once
    with open(bf, "a") as f:
        f.write("max-pageable-h2d-bytes = 1GiB\n")
    p = subprocess.run([GT, "audit", "--budget", bf] + dbs, capture_output=True, text=True)
    assert p.returncode == 1, p.stdout + p.stderr
    lines = p.stdout.splitlines()
    assert_eq(len(lines), world + 2, "a line per trace, then one per job budget")
    assert all(": ok   max-pageable-h2d-bytes: " in x for x in lines[:world]), lines
    assert lines[-1].startswith("FAIL max-rank-skew-pct: "), lines
    # a job budget's value: any percent from 0 up, else an error naming the line
    with open(bf, "w") as f:
        f.write("max-rank-skew-pct = 150\nmax-straggler-wait-pct = -1\n")
    p = subprocess.run([GT, "audit", "--budget", bf] + sums, capture_output=True, text=True)
    assert p.returncode == 2 and bf + ":2: max-straggler-wait-pct: '-1' is not a percent" in p.stderr, p.stderr


def test_merge_puts_every_view_of_every_rank_in_one_file():
    world = 4
    outdir, res = ranklib.run_job(world, 6)
    assert all(rc == 0 for _, rc, _, _ in res), res
    dbs = [ranklib.trace(outdir, r) for r in range(world)]
    import make_trace as mt
    # a version 2 trace (no NVTX views, fewer columns) merges beside them
    old = mt.make_trace(os.path.join(outdir, "old-v2.db"), schema=os.path.join(gtlib.HERE, "data", "gputrace-v2.sql"),
                        calls=[mt.launch("k0"), mt.memcpy("HtoD", 4096), mt.sync("device")])
    out = os.path.join(outdir, "job.db")
    p = subprocess.run([GT, "merge", "-o", out] + dbs + [old], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    views = ["api_calls", "kernels", "memcpys", "memsets", "syncs", "allocations", "gpu_activity", "stack_frames",
             "py_stack_frames",
             "ranges", "marks", "thread_names", "stream_names"]
    total = 0
    for db in dbs + [old]:
        meta = dict(gtlib.query(db, "SELECT key, value FROM meta"))
        rank = meta.get("rank") or "pid %s" % meta["pid"]
        assert_eq(gtlib.query(out, "SELECT path, complete FROM traces WHERE rank = ?", rank), [(db, 1)], rank)
        for v in views:
            try:
                want = gtlib.query(db, "SELECT * FROM %s" % v)
            except Exception:
                continue  # an older trace without the view
            cols = [r[1] for r in gtlib.query(db, "SELECT * FROM pragma_table_info('%s')" % v)]
            got = gtlib.query(out, "SELECT %s FROM %s WHERE rank = ?" % (
                ", ".join('"%s"' % c for c in cols), v), rank)
            assert_eq(sorted(got, key=repr), sorted(want, key=repr), "%s of %s" % (v, rank))
            total += len(want)
    assert "merged 5 traces, %d rows, into" % total in p.stderr, p.stderr
    # SQL across ranks: each all-reduce's latest start over the ranks, from the merged file alone
    rows = gtlib.query(out, "SELECT rank, start_ns FROM kernels WHERE name GLOB 'ncclDevKernel_*' ORDER BY rank, start_ns")
    assert_eq(len(rows), world * 6, "all-reduces in the merged file")
    # an output that exists, or a bad trace: status 2, nothing written
    p = subprocess.run([GT, "merge", "-o", out] + dbs, capture_output=True, text=True)
    assert p.returncode == 2 and "exists" in p.stderr, p.stderr
    bad = os.path.join(outdir, "bad.db")
    with open(bad, "w") as f:
        f.write("not a trace")
    out2 = os.path.join(outdir, "job2.db")
    p = subprocess.run([GT, "merge", "-o", out2, dbs[0], bad], capture_output=True, text=True)
    assert p.returncode == 2 and not os.path.exists(out2), p.stderr
    assert not [f for f in os.listdir(outdir) if ".tmp-" in f]

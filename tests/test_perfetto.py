"""gputrace export --format perfetto (the default): Perfetto's protobuf
trace, decoded here by protoc against the project's .proto (protoc
--decode=perfetto.protos.Trace), and every track, slice and flow checked
against the trace by plain SQL over the public views, written apart from
the C exporter. Slices are rebuilt from the BEGIN/END packets as Perfetto
does: packets in timestamp order (file order breaks ties), a stack per
track."""
import codecs
import gzip
import json
import os
import re
import shutil
import subprocess
from collections import Counter

import gtlib
import oracle
from gtlib import assert_eq, prog, query, run_traced, tmpdir
from make_trace import add_gpu_op, launch, make_trace, memcpy, sync
import sqlite3

GPUTRACE = os.path.join(gtlib.BUILD, "gputrace")
PROTO_DIR = os.path.join(gtlib.ROOT, "analyzer", "output")


def export(*args, **kw):
    return subprocess.run([GPUTRACE, "export"] + list(args), capture_output=True, **kw)


# ---- protoc's text format, parsed ----

def _value(text):
    if text.startswith('"'):
        return codecs.escape_decode(text[1:-1].encode("latin-1"))[0].decode("utf-8")
    if re.fullmatch(r"-?\d+", text):
        return int(text)
    return {"true": True, "false": False}.get(text, text)


def decode(data):
    """The packets of a Trace as nested dicts; every field a list."""
    r = subprocess.run(["protoc", "--decode=perfetto.protos.Trace", "-I" + PROTO_DIR, "perfetto_trace.proto"],
                       input=data, capture_output=True, timeout=300)
    assert r.returncode == 0, r.stderr.decode()[-2000:]
    root = {}
    stack = [root]
    for line in r.stdout.decode("latin-1").splitlines():
        line = line.strip()
        if line.endswith("{"):
            child = {}
            stack[-1].setdefault(line[:-1].strip(), []).append(child)
            stack.append(child)
        elif line == "}":
            stack.pop()
        elif line:
            key, val = line.split(": ", 1)
            assert re.fullmatch(r"\w+", key), line  # an unknown field would read as a number
            stack[-1].setdefault(key, []).append(_value(val))
    assert len(stack) == 1
    return root.get("packet", [])


def one(d, key, default=None):
    v = d.get(key)
    if v is None:
        return default
    assert_eq(len(v), 1, key)
    return v[0]


class Timeline:
    """Tracks, interned strings and slices of an export."""

    def __init__(self, packets):
        self.tracks = {}
        names, locs = {}, {}
        seen_names = Counter()
        events = []
        for i, p in enumerate(packets):
            seq = one(p, "trusted_packet_sequence_id")
            assert seq, p
            for d in p.get("track_descriptor", []):
                uuid = one(d, "uuid")
                assert uuid not in self.tracks, ("track described twice", uuid)
                self.tracks[uuid] = d
            for idata in p.get("interned_data", []):
                for n in idata.get("event_names", []):
                    key = (seq, one(n, "iid"))
                    assert key not in names, ("name interned twice", key)
                    names[key] = one(n, "name")
                    seen_names[(seq, one(n, "name"))] += 1
                for s in idata.get("source_locations", []):
                    key = (seq, one(s, "iid"))
                    assert key not in locs, ("site interned twice", key)
                    locs[key] = s
            for e in p.get("track_event", []):
                events.append((one(p, "timestamp"), i, seq, e))
        assert all(n == 1 for n in seen_names.values()), "each name is written once per sequence"
        events.sort(key=lambda x: (x[0], x[1]))
        open_, self.slices, self.instants, self.counters = {}, [], [], {}
        for ts, order, seq, e in events:
            track = one(e, "track_uuid")
            assert track in self.tracks, ("event on an undescribed track", e)
            if one(e, "type") == "TYPE_COUNTER":
                assert "counter" in self.tracks[track], ("a counter value on a track that is not a counter", e)
                self.counters.setdefault(track, []).append((ts, float(one(e, "double_counter_value"))))
                continue
            assert "counter" not in self.tracks[track], ("a slice on a counter track", e)
            if one(e, "type") == "TYPE_INSTANT":
                self.instants.append({"track": track, "ts": ts, "name": names[(seq, one(e, "name_iid"))],
                                      "cats": e.get("categories", []),
                                      "args": {one(a, "name"): one(a, "string_value")
                                               for a in e.get("debug_annotations", [])}})
                continue
            if one(e, "type") == "TYPE_SLICE_BEGIN":
                loc = locs[(seq, one(e, "source_location_iid"))] if "source_location_iid" in e else None
                s = {"track": track, "ts": ts, "order": (ts, order), "name": names[(seq, one(e, "name_iid"))] if "name_iid" in e
                     else one(e, "name"), "flows": e.get("flow_ids", []),
                     "ends": e.get("terminating_flow_ids", []), "site": loc, "cats": e.get("categories", []),
                     "args": {one(a, "name"): one(a, "string_value") for a in e.get("debug_annotations", [])}}
                open_.setdefault(track, []).append(s)
            else:
                assert_eq(one(e, "type"), "TYPE_SLICE_END")
                s = open_[track].pop()
                s["end"] = ts
                self.slices.append(s)
        assert not any(open_.values()), "every slice ends"

    def track_of(self, pred):
        return [u for u, d in self.tracks.items() if pred(d)]

    def name(self, uuid):
        d = self.tracks[uuid]
        return one(d, "name") or one(one(d, "thread", {}), "thread_name")


def expected_calls(db, lo=0, hi=1 << 62):
    t0 = int(query(db, "SELECT value FROM meta WHERE key = 'start_ns'")[0][0])
    return t0, Counter(query(db, "SELECT a.tid, a.name, a.start_ns - ?1, a.end_ns - ?1 FROM api_calls a "
                                 "WHERE a.start_ns - ?1 >= ?2 AND a.start_ns - ?1 < ?3", t0, lo, hi))


GPU_LABEL = ("CASE g.kind WHEN 'kernel' THEN COALESCE(g.name, '(unknown kernel)') WHEN 'memset' THEN 'memset' "
             "ELSE CASE WHEN g.copy_kind IN ('HtoD', 'DtoH', 'DtoD', 'HtoH', 'PtoP') THEN 'memcpy ' || g.copy_kind "
             "ELSE 'memcpy' END END")


def check_export(db, data, lo=0, hi=1 << 62, min_gap="1ms"):
    """Every track, slice and flow of `data` against the trace `db`, for
    the window [lo, hi) ns from the trace's start."""
    tl = Timeline(decode(data))
    pid = int(query(db, "SELECT value FROM meta WHERE key = 'pid'")[0][0])
    t0, calls = expected_calls(db, lo, hi)
    # tracks: the process; a thread each under it; a GPU each with its streams
    procs = tl.track_of(lambda d: "process" in d)
    assert_eq(len(procs), 1)
    assert_eq(one(one(tl.tracks[procs[0]], "process"), "pid"), pid)
    threads = {one(one(d, "thread"), "tid"): u for u, d in tl.tracks.items() if "thread" in d}
    assert all(one(tl.tracks[u], "parent_uuid") == procs[0] for u in threads.values())
    ranges, starts, marks = expected_nvtx(db, t0, lo, hi)
    # host samples (schema 7): an instant each on its thread's track, named as the report names them
    samples = Counter()
    if query(db, "PRAGMA user_version")[0][0] >= 7:
        samples = Counter((tid, ns - t0, text) for tid, ns, text, _ in oracle._read_samples_db(db)
                          if lo <= ns - t0 < hi)
    assert_eq(sorted(threads), sorted({c[0] for c in calls} | {r[0] for r in ranges} | {r[0] for r in starts} |
                                      {m[0] for m in marks} | {s[0] for s in samples}))
    got_samples = Counter((tid, i["ts"], i["name"]) for tid, u in threads.items() for i in tl.instants
                          if i["track"] == u and not i["cats"])
    assert_eq(got_samples, samples)
    nvtx_names = dict(query(db, "SELECT tid, name FROM thread_names")) if has_nvtx(db) else {}
    for tid, name in query(db, "SELECT tid, name FROM threads"):
        if tid in threads:
            assert_eq(tl.name(threads[tid]), "%s (tid %d)" % (nvtx_names.get(tid) or name or "thread", tid))
    gpus = {u: int(re.match(r"GPU (\d+) \(pid %d\)$" % pid, tl.name(u)).group(1))
            for u, d in tl.tracks.items() if one(d, "name", "").startswith("GPU ")}
    streams = {(gpus[one(d, "parent_uuid")], int(one(d, "name")[len("stream "):])): u
               for u, d in tl.tracks.items() if one(d, "name", "").startswith("stream ")}
    gpu = Counter(query(db, "SELECT g.device, g.stream, %s, g.start_ns - ?1, g.end_ns - ?1 FROM gpu_activity g "
                            "WHERE g.start_ns - ?1 >= ?2 AND g.start_ns - ?1 < ?3" % GPU_LABEL, t0, lo, hi))
    assert_eq(sorted(streams), sorted({(g[0], g[1]) for g in gpu}))
    # slices: a call each on its thread, a GPU record each on its stream
    by_track = {}
    for s in tl.slices:
        by_track.setdefault(s["track"], []).append(s)
    # on each thread's track: its calls and its NVTX push ranges of the
    # default domain, marks as instants; the push ranges of another domain
    # on a child track "NVTX domain D" of their thread, one a domain (each
    # domain's stack is its own, so its ranges may cross the default's);
    # each start/end range on a child track "NVTX start/end" of the thread
    # that started it
    got_calls = Counter((tid, s["name"], s["ts"], s["end"]) for tid, u in threads.items()
                        for s in by_track.get(u, []) if not s["cats"])
    got_ranges = Counter((tid, s["name"], s["ts"], s["end"], s["args"].get("domain")) for tid, u in threads.items()
                         for s in by_track.get(u, []) if s["cats"] == ["nvtx"])
    thread_of_track = {u: tid for tid, u in threads.items()}
    dom_tracks = {u: (thread_of_track[one(d, "parent_uuid")], one(d, "name")[len("NVTX domain "):])
                  for u, d in tl.tracks.items() if one(d, "name", "").startswith("NVTX domain ")}
    assert_eq(len(set(dom_tracks.values())), len(dom_tracks), "one track a thread and domain")
    for u, (tid, dom) in dom_tracks.items():
        assert all(s["args"].get("domain") == dom for s in by_track.get(u, [])), (dom, by_track.get(u))
        got_ranges.update((tid, s["name"], s["ts"], s["end"], dom) for s in by_track.get(u, []))
    assert all(s["args"].get("domain") is None for u in threads.values() for s in by_track.get(u, [])
               if s["cats"] == ["nvtx"]), "only the default domain's push ranges on the thread's own track"
    # and on every track the slices nest (Perfetto draws a track's slices as
    # one stack: two that cross would break it)
    for u, sl in by_track.items():
        open_ends = []
        for x in sorted(sl, key=lambda x: (x["ts"], -x["end"])):
            while open_ends and open_ends[-1] <= x["ts"]:
                open_ends.pop()
            assert not open_ends or x["end"] <= open_ends[-1], ("crossing slices", tl.name(u), x)
            open_ends.append(x["end"])
    assert_eq(got_calls, calls)
    assert_eq(got_ranges, ranges)
    se_tracks = {u: thread_of_track[one(d, "parent_uuid")] for u, d in tl.tracks.items()
                 if one(d, "name") == "NVTX start/end"}
    assert all(len(by_track.get(u, [])) == 1 and by_track[u][0]["cats"] == ["nvtx"] for u in se_tracks), \
        "one start/end range a track"
    assert_eq(Counter((tid, s["name"], s["ts"], s["end"], s["args"].get("domain")) for u, tid in se_tracks.items()
                      for s in by_track.get(u, [])), starts)
    marks_got = [i for i in tl.instants if i["cats"]]
    assert all(i["cats"] == ["nvtx"] for i in marks_got)
    assert_eq(len(tl.instants), len(marks_got) + sum(samples.values()), "instants: NVTX marks and host samples")
    assert_eq(Counter((thread_of_track[i["track"]], i["name"], i["ts"], i["args"].get("domain"))
                      for i in marks_got), marks)
    got_gpu = Counter((dev, st, s["name"], s["ts"], s["end"]) for (dev, st), u in streams.items()
                      for s in by_track.get(u, []))
    assert_eq(got_gpu, gpu)
    # failed calls say which result
    # (traces before version 5 have no error names: that a result is given)
    named = any(r[0] == "error" for r in query(db, "SELECT name FROM pragma_table_info('calls')"))
    errors = Counter(query(db, "SELECT a.tid, a.start_ns - ?1, %s FROM api_calls a JOIN calls c ON c.id = a.id "
                               "WHERE a.result != 0 AND a.start_ns - ?1 >= ?2 AND a.start_ns - ?1 < ?3"
                           % ("c.error" if named else "1"), t0, lo, hi))
    got_err = Counter((tid, s["ts"], s["args"]["result"] if named else 1) for tid, u in threads.items()
                      for s in by_track.get(u, []) if "result" in s["args"])
    assert_eq(got_err, errors)
    # call sites: the innermost frame's function, for calls with a stack
    for tid, u in threads.items():
        for s in by_track.get(u, []):
            if s["site"]:
                assert one(s["site"], "file_name").startswith(one(s["site"], "function_name"))
    # flows, followed as Perfetto does (ids are free again once ended): each
    # id leaves a call while not in use and ends at a GPU slice; the pairs
    # are the trace's call -> GPU record links in the window
    stream_of = {u: k for k, u in streams.items()}
    thread_of = {u: tid for tid, u in threads.items()}
    active, got_links = {}, Counter()
    for s in sorted(tl.slices, key=lambda x: x["order"]):
        for f in s["flows"]:
            assert f not in active, ("flow id in use", f)
            active[f] = s
        for f in s["ends"]:
            c = active.pop(f)
            got_links[(thread_of[c["track"]], c["ts"]) + stream_of[s["track"]] + (s["ts"],)] += 1
    assert not active, "every arrow ends"
    links = Counter(query(db, "SELECT a.tid, a.start_ns - ?1, g.device, g.stream, g.start_ns - ?1 "
                              "FROM gpu_activity g JOIN api_calls a ON a.id = g.api_call_id "
                              "WHERE a.start_ns - ?1 >= ?2 AND a.start_ns - ?1 < ?3 "
                              "AND g.start_ns - ?1 >= ?2 AND g.start_ns - ?1 < ?3", t0, lo, hi))
    assert_eq(got_links, links)
    # idle gaps: the report's, on each GPU's "idle gaps" track
    rep = json.loads(subprocess.run([GPUTRACE, "report", "--format", "json", "--top", "0", "--min-gap", min_gap,
                                     db], capture_output=True, text=True).stdout)
    idle_tracks = set(tl.track_of(lambda d: one(d, "name") == "idle gaps"))
    got_gaps = sorted((s["ts"], s["end"] - s["ts"], s["args"]["cause"]) for s in tl.slices
                      if s["track"] in idle_tracks)
    want_gaps = sorted((g["start_ns"] - t0, g["dur_ns"], g["cause"]) for g in rep["idle_gaps"]
                       if lo <= g["start_ns"] - t0 < hi)
    assert_eq(got_gaps, want_gaps)
    assert_eq(len(tl.slices), sum(calls.values()) + sum(gpu.values()) + len(want_gaps) + sum(ranges.values()) +
              sum(starts.values()))
    check_busy_counters(tl, streams, by_track, t0 + lo if lo else None)
    return tl


def has_nvtx(db):
    return bool(query(db, "SELECT count(*) FROM sqlite_master WHERE name = 'ranges'")[0][0])


def expected_nvtx(db, t0, lo, hi):
    """Push ranges, start/end ranges (tid, name, start, end, domain) and
    marks (tid, name, ns, domain) starting in the window, from the views;
    a range still open ends at the trace's end (meta end_ns)."""
    if not has_nvtx(db):
        return Counter(), Counter(), Counter()
    end = query(db, "SELECT value FROM meta WHERE key = 'end_ns'")
    end = int(end[0][0]) if end else 0
    rows = query(db, "SELECT kind, tid, COALESCE(name, '(unnamed)'), start_ns, end_ns, domain FROM ranges")
    push, start = Counter(), Counter()
    for kind, tid, name, s, e, dom in rows:
        if not lo <= s - t0 < hi:
            continue
        e = e if e is not None else max(end, s)
        (push if kind == "push" else start)[(tid, name, s - t0, e - t0, dom)] += 1
    marks = Counter((tid, name, ns - t0, dom) for tid, name, ns, dom in
                    query(db, "SELECT tid, COALESCE(name, '(unnamed)'), ns, domain FROM marks")
                    if lo <= ns - t0 < hi)
    return push, start, marks


def _union_in(intervals, a, b):
    """Length of the union of intervals clipped to [a, b)."""
    total, cur_s, cur_e = 0, None, None
    for s, e in sorted((max(s, a), min(e, b)) for s, e in intervals if e > a and s < b):
        if cur_e is None or s > cur_e:
            if cur_e is not None:
                total += cur_e - cur_s
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    return total + (cur_e - cur_s if cur_e is not None else 0)


def check_busy_counters(tl, streams, by_track, _origin):
    """Each stream with work has one "busy %" counter track under it whose
    values are, between each change and the next, the share of that time
    its GPU slices (checked against SQL above) cover; 0 after the last."""
    counters = {one(d, "parent_uuid"): u for u, d in tl.tracks.items() if one(d, "name") == "busy %"}
    assert all("counter" in tl.tracks[u] for u in counters.values())
    assert_eq(sorted(counters), sorted(u for u in streams.values() if by_track.get(u)))
    for stream, cu in counters.items():
        vals = tl.counters[cu]
        work = [(s["ts"], s["end"]) for s in by_track[stream]]
        assert vals[0][0] <= min(w[0] for w in work) and vals[-1][0] >= max(w[1] for w in work), (vals[:2], vals[-2:])
        assert_eq(vals[-1][1], 0.0)
        _check_counter_values(vals, work)


def _check_counter_values(vals, work):
    """Each value of a busy % counter, held until the next, is the share
    of that time the union of `work` covers."""
    for (t, v), (t2, _) in zip(vals, vals[1:]):
        want = _union_in(work, t, t2)
        assert abs(v / 100 * (t2 - t) - want) <= 1e-6 * (t2 - t) + 0.01, (t, t2, v, want)


def _copy(trace, d, name):
    path = os.path.join(d, name)
    shutil.copy(trace, path)
    return path


def test_perfetto_export_matches_the_trace():
    d = tmpdir()
    for argv, env in (([prog("stall")], None), ([prog("truth_graph"), "3"], None), ([prog("truth_fail")], None),
                      ([prog("threads")], None), ([prog("batch")], None)):
        run = run_traced(argv, env=env)
        db = _copy(run.trace, d, os.path.basename(argv[0]) + ".db")
        r = export(db)
        assert_eq((r.returncode, r.stderr), (0, b""), argv)
        tl = check_export(db, r.stdout)
        assert tl.slices, argv
        # and the middle third of the run alone
        span = max(s["end"] for s in tl.slices)
        lo, hi = span // 3, 2 * span // 3
        r = export("--from", "%dns" % lo, "--to", "%dns" % hi, db)
        assert_eq((r.returncode, r.stderr), (0, b""), argv)
        check_export(db, r.stdout, lo, hi)
        if argv[0].endswith("truth_graph"):
            # a graph launch: an arrow to each kernel it ran
            assert max(len(s["flows"]) for s in tl.slices) > 1
        # arrows to work kept in the call's row use small ids, given back
        if argv[0].endswith("stall"):
            assert max(f for s in tl.slices for f in s["flows"]) < 16384


def test_perfetto_windows_and_limits():
    run = run_traced([prog("stall")], env={"FAKECUDA_LAUNCH_NS": "20000"})
    d = tmpdir()
    db = _copy(run.trace, d, "stall.db")
    t0, calls = expected_calls(db)
    starts = sorted(c[2] for c in calls.elements())
    lo, hi = starts[len(starts) // 3], starts[2 * len(starts) // 3]
    r = export("--from", "%dns" % lo, "--to", "%dns" % hi, "--min-gap", "100us", db)
    assert_eq((r.returncode, r.stderr), (0, b""))
    tl = check_export(db, r.stdout, lo, hi, min_gap="100us")
    assert 0 < len(tl.slices)
    # times in other units
    r = export("--from", "5ms", "--to", "60.5ms", "--min-gap", "100us", db)
    assert_eq((r.returncode, r.stderr), (0, b""))
    check_export(db, r.stdout, 5000000, 60500000, min_gap="100us")
    # an empty window: tracks only
    r = export("--from", "10000s", db)
    assert_eq(r.returncode, 0)
    assert_eq(Timeline(decode(r.stdout)).slices, [])
    # --max-events: exactly N slices, and where the cut fell
    r = export("--max-events", "7", db)
    assert_eq(r.returncode, 0)
    tl = Timeline(decode(r.stdout))
    assert_eq(len(tl.slices), 7)
    m = re.search(rb"stopped at --max-events 7: the first event left out starts at [\d.]+ \w+ "
                  rb"\(export from there with --from (\d+)ns\)\n$",
                  r.stderr)
    assert m, r.stderr
    cut = int(m.group(1))
    # every event starting before the cut is there, as in the whole export;
    # the first left out starts at the cut
    def keyed(t):
        return Counter((t.name(x["track"]), x["name"], x["ts"], x["end"]) for x in t.slices)
    whole = keyed(Timeline(decode(export(db).stdout)))
    got = keyed(tl)
    assert_eq(Counter({k: n for k, n in got.items() if k[2] < cut}),
              Counter({k: n for k, n in whole.items() if k[2] < cut}))
    assert not (got - whole), "nothing else"
    assert any(k[2] == cut for k in (whole - got)), "the first left out starts at the cut"
    # no cut, no message
    r = export("--max-events", "100000", db)
    assert_eq((r.returncode, r.stderr), (0, b""))


def test_perfetto_outputs_stdout_file_and_gzip():
    run = run_traced([prog("stall")])
    d = tmpdir()
    plain = os.path.join(d, "t.pftrace")
    gz = os.path.join(d, "t.pftrace.gz")
    assert_eq(export("-o", plain, run.trace).returncode, 0)
    assert_eq(export("-o", gz, run.trace).returncode, 0)
    dash = export("-o", "-", run.trace)
    assert_eq(dash.returncode, 0)
    with open(plain, "rb") as f:
        data = f.read()
    with gzip.open(gz, "rb") as f:
        unz = f.read()
    assert data and data == unz == dash.stdout
    assert os.path.getsize(gz) < len(data)
    check_export(run.trace, data)
    # chrome-json through gzip too
    jgz = os.path.join(d, "t.json.gz")
    assert_eq(export("--format", "chrome-json", "-o", jgz, run.trace).returncode, 0)
    with gzip.open(jgz, "rt") as f:
        assert json.load(f)["traceEvents"]
    # a full disk: the reason, exit status 1
    for fmt in ("perfetto", "chrome-json"):
        r = export("--format", fmt, "-o", "/dev/full", run.trace)
        assert_eq(r.returncode, 1, fmt)
        assert_eq(r.stderr, b"gputrace: cannot write /dev/full: No space left on device\n")
    # an unwritable .gz: a clear error
    r = export("-o", os.path.join(d, "no", "dir", "t.gz"), run.trace)
    assert_eq(r.returncode, 1)
    assert b"cannot write" in r.stderr, r.stderr


HOSTILE = ['k"quote\\back', "k\nnewline\ttab", "kernel_\u00e9\u00e8_\u4e2d\u6587_\U0001F600", "</script><b>x",
           "k{brace}: \"x\"", "k\x01ctl"]


def test_perfetto_hostile_and_non_ascii_names():
    d = tmpdir()
    db = os.path.join(d, "hostile.db")
    calls = [launch(k, tid=1000 + i % 2) for i, k in enumerate(HOSTILE)]
    calls += [memcpy("HtoD", 4096, api="cudaMemcpy\u00fc"), sync("device", result=700)]
    make_trace(db, calls=calls, threads={1000: "w\u00f6rker \"one\"\n", 1001: "\u7ebf\u7a0b"},
               meta={"cmdline": "./app --name \"\u00e9\" \n\\"})
    con = sqlite3.connect(db)
    ids = [r[0] for r in con.execute("SELECT id FROM calls ORDER BY id")]
    starts = dict(con.execute("SELECT id, start_ns FROM calls"))
    for cid in ids[:len(HOSTILE)]:
        add_gpu_op(con, "kernel", cid, starts[cid] + 2000, starts[cid] + 2600)
    con.commit()
    con.close()
    r = export(db)
    assert_eq((r.returncode, r.stderr), (0, b""))
    tl = check_export(db, r.stdout)
    names = {s["name"] for s in tl.slices}
    for k in HOSTILE:
        assert k in names, (k, names)
    assert "cudaMemcpy\u00fc" in names
    procs = tl.track_of(lambda d: "process" in d)
    assert_eq(one(one(tl.tracks[procs[0]], "process"), "process_name"), "./app --name \"\u00e9\" \n\\")
    # chrome-json of the same trace is valid JSON holding the same names
    r = export("--format", "chrome-json", db)
    assert_eq(r.returncode, 0)
    ev = json.loads(r.stdout)["traceEvents"]
    assert set(HOSTILE) <= {e.get("name") for e in ev}


def test_perfetto_several_processes_and_a_crashed_trace():
    """Two processes' traces on one timeline, each on its own packet
    sequence with its own process track; a trace whose process died
    (its write-ahead log never checkpointed) exports what it committed."""
    from make_trace import make_crashed_trace
    d = tmpdir()
    a, b = os.path.join(d, "a.db"), os.path.join(d, "b.db")
    make_trace(a, calls=[launch("ka"), sync("device")], meta={"pid": "111"})
    make_trace(b, calls=[launch("kb"), launch("kb"), sync("device")], meta={"pid": "222"})
    r = export(a, b)
    assert_eq((r.returncode, r.stderr), (0, b""))
    packets = decode(r.stdout)
    tl = Timeline(packets)
    pids = sorted(one(one(tl.tracks[u], "process"), "pid") for u in tl.track_of(lambda x: "process" in x))
    assert_eq(pids, [111, 222])
    assert_eq(sorted(set(one(p, "trusted_packet_sequence_id") for p in packets)), [1, 2])
    assert_eq(sorted(s["name"] for s in tl.slices),
              sorted(["cudaLaunchKernel"] * 3 + ["cudaDeviceSynchronize"] * 2))
    c = os.path.join(d, "crashed.db")
    make_crashed_trace(c, calls=[launch("kc"), sync("device")])
    r = export(c)
    assert_eq(r.returncode, 0, r.stderr)
    check_export(c, r.stdout)


def test_perfetto_older_trace_versions():
    """Traces of every older schema (tests/data/gputrace-vN.sql) export,
    checked the same way: calls, GPU records kept apart, their links."""
    d = tmpdir()
    for v in (1, 2, 3, 4, None):
        db = os.path.join(d, "v%s.db" % v)
        schema = os.path.join(gtlib.ROOT, "tests", "data", "gputrace-v%d.sql" % v) if v else gtlib.ROOT + \
            "/schema/gputrace.sql"
        calls = [launch("k%d" % (i % 3), tid=1000 + i % 2) for i in range(6)] + \
                [memcpy("DtoH", 1 << 20), sync("device", result=1)]
        make_trace(db, calls=calls, schema=schema)
        con = sqlite3.connect(db)
        starts = sorted(con.execute("SELECT id, start_ns FROM calls"))
        for cid, st in starts[:6]:
            add_gpu_op(con, "kernel", cid, st + 3000, st + 3500)
        cid, st = starts[6]
        add_gpu_op(con, "memcpy", cid, st + 3000, st + 9000, nbytes=1 << 20)
        add_gpu_op(con, "kernel", None, st + 20000, st + 21000, name="orphan")
        con.commit()
        con.close()
        r = export(db)
        assert_eq((r.returncode, r.stderr), (0, b""), v)
        tl = check_export(db, r.stdout)
        assert_eq(sum(len(s["flows"]) for s in tl.slices), 7, v)


def test_perfetto_bench_shaped_trace():
    """bench/big_trace.py's shape at a small size (4 threads, launches with
    their GPU records in the call's row, a gap every 1,000 calls): every
    slice and arrow, with arrow ids handed back and reused."""
    import sys
    sys.path.insert(0, os.path.join(gtlib.ROOT, "bench"))
    import big_trace
    db = big_trace.make(os.path.join(tmpdir(), "big.db"), 40000)
    r = export("--min-gap", "20us", db)
    assert_eq((r.returncode, r.stderr), (0, b""))
    tl = check_export(db, r.stdout, min_gap="20us")
    flows = [f for s in tl.slices for f in s["flows"]]
    assert len(flows) > len(set(flows)), "ids reused"


def test_progress_line():
    """export and report print a progress line on standard error once they
    have run GPUTRACE_PROGRESS_AFTER seconds (2 by default; 0 here, so the
    test needs no slow run): plain lines when stderr is not a terminal;
    nothing with -q."""
    import sys
    sys.path.insert(0, os.path.join(gtlib.ROOT, "bench"))
    import big_trace
    db = big_trace.make(os.path.join(tmpdir(), "big.db"), 150000)
    env = dict(os.environ, GPUTRACE_PROGRESS_AFTER="0")
    line = rb"gputrace %s: +\d+%%, \d+\.\dM rows read, \d+\.\d\dM rows/s\n"
    r = export("-o", os.devnull, db, env=env)
    assert_eq(r.returncode, 0)
    assert re.fullmatch(b"(%s)+" % (line % b"export"), r.stderr), r.stderr
    r = export("-q", "-o", os.devnull, db, env=env)
    assert_eq((r.returncode, r.stderr), (0, b""))
    r = subprocess.run([GPUTRACE, "report", "-o", os.devnull, db], capture_output=True, env=env)
    assert_eq(r.returncode, 0)
    assert re.fullmatch(b"(%s)+" % (line % b"report"), r.stderr), r.stderr
    r = subprocess.run([GPUTRACE, "report", "-q", "-o", os.devnull, db], capture_output=True, env=env)
    assert_eq((r.returncode, r.stderr), (0, b""))
    # and by default, a quick run says nothing
    r = export("-o", os.devnull, db)
    assert_eq((r.returncode, r.stderr), (0, b""))


def test_perfetto_nvtx_ranges_marks_and_counters():
    """NVTX (schema 6) in Perfetto's format: push ranges as slices on their
    thread's track (category nvtx, the domain as an argument), each
    start/end range on a child track of the thread that started it, marks
    as instants, threads named as NVTX named them; hostile and cut names as
    the trace holds them; all checked against the ranges and marks views
    by check_export, with each stream's busy % counter, for the whole run
    and for a window."""
    shim = gtlib.SANITIZED[os.environ["GPUTRACE_TEST_SANITIZER"]][0] \
        if os.environ.get("GPUTRACE_TEST_SANITIZER") else gtlib.SHIM
    run = run_traced([prog("nvtx_basic")], env={"NVTX_INJECTION64_PATH": shim})
    r = export(run.trace)
    assert_eq((r.returncode, r.stderr), (0, b""))
    tl = check_export(run.trace, r.stdout)
    nv = [s for s in tl.slices if s["cats"] == ["nvtx"]]
    names = {s["name"] for s in nv}
    assert {"outer", "wide \u00e9\u4e2d", "cross-thread", "worker-range", "left-open", "bad\ufffd\ufffdutf8",
            "(unnamed)"} <= names, names
    assert "my-domain" in {s["args"].get("domain") for s in nv}
    assert_eq(sorted(i["name"] for i in tl.instants), ["A\ufffd\ufffdB", "dmark", "mark-1"])
    assert any(tl.name(u).startswith("main-thread (tid ") for u in tl.track_of(lambda d: "thread" in d))
    assert tl.counters, "a busy % counter per stream"
    # a window holding only part of the ranges: from just after the first
    # range to end (a fixed share of the span is not that: the tracer's own
    # start-up, before the first call, is a part of the span that varies
    # with the machine's load)
    span = max(s["end"] for s in tl.slices)
    lo, hi = min(s["end"] for s in nv) + 1, span
    r = export("--from", "%dns" % lo, "--to", "%dns" % hi, run.trace)
    assert_eq((r.returncode, r.stderr), (0, b""))
    part = check_export(run.trace, r.stdout, lo, hi)
    assert 0 < len([s for s in part.slices if s["cats"] == ["nvtx"]]) < len(nv)


def _busy_integral(vals):
    """A busy % counter's values, each held until the next, as busy ns."""
    return sum(v / 100 * (t2 - t) for (t, v), (t2, _) in zip(vals, vals[1:]))


def _one_busy_counter(db, data):
    """The export's one busy % counter: each value checked against the
    union of the trace's GPU work (gpu_activity), and its integral."""
    (vals,) = Timeline(decode(data)).counters.values()
    t0, _ = expected_calls(db)
    work = [(s - t0, e - t0) for s, e in query(db, "SELECT start_ns, end_ns FROM gpu_activity")]
    _check_counter_values(vals, work)
    return vals, _busy_integral(vals)


def test_perfetto_busy_counter_counts_overlap_once():
    """A stream whose work overlaps (a CUDA Graph's branches run at once on
    the stream they were launched on), its records out of start order: the
    busy % counter is the union's share, never over 100, each value
    checked against the union of the planted work."""
    d = tmpdir()
    db = os.path.join(d, "overlap.db")
    make_trace(db, calls=[launch("branch") for _ in range(100)] + [sync("device")])
    con = sqlite3.connect(db)
    starts = sorted(con.execute("SELECT id, start_ns FROM calls"))
    base = starts[0][1]
    for k in range(50):
        # each pair: the second call's kernel starts 4 us before the first's
        # and the two overlap by 6 us; pairs 20 us apart
        t = base + 20000 * k + 5000
        add_gpu_op(con, "kernel", starts[2 * k][0], t + 4000, t + 14000)
        add_gpu_op(con, "kernel", starts[2 * k + 1][0], t, t + 10000)
    con.commit()
    con.close()
    r = export(db)
    assert_eq((r.returncode, r.stderr), (0, b""))
    # the counter only: the slices of work that overlaps on one track are
    # not drawn right yet (Perfetto pairs a track's ends with its begins
    # last in, first out; docs/cli.md says so)
    vals, total = _one_busy_counter(db, r.stdout)
    assert max(v for _, v in vals) <= 100.0, max(v for _, v in vals)
    assert abs(total - 50 * 14000) < 1, total


def test_perfetto_busy_counter_with_records_kept_apart_from_their_calls():
    """A loaded writer keeps some GPU records apart from their call's row
    (gpu_ops: the record came after the row was written); export reads
    the calls first, the records kept apart after, so a stream's work comes
    to the busy counter out of start order by hundreds. Half of 400
    kernels, 5 us of every 10 us, kept apart (every other one): the
    counter still integrates to the 400 kernels' 2 ms, each value checked
    against the union of the planted work."""
    d = tmpdir()
    db = os.path.join(d, "apart.db")
    make_trace(db, calls=[launch("k") for _ in range(400)] + [sync("device")])
    con = sqlite3.connect(db)
    starts = sorted(con.execute("SELECT id, start_ns FROM calls"))
    base = starts[0][1]
    for k in range(400):
        t = base + 10000 * k + 2000
        add_gpu_op(con, "kernel", starts[k][0], t, t + 5000, fold=k % 2 == 0)
    con.commit()
    con.close()
    assert_eq(query(db, "SELECT count(*) FROM gpu_ops")[0][0], 200)
    r = export(db)
    assert_eq((r.returncode, r.stderr), (0, b""))
    _, total = _one_busy_counter(db, r.stdout)
    assert abs(total - 400 * 5000) < 1, total
    check_export(db, r.stdout)


def test_perfetto_busy_counter_on_a_planted_load():
    """A stream busy 5 us of every 10 us for 2 ms: its busy % counter
    (1 us buckets on a run this short) integrates to exactly the 200
    kernels' 1 ms, reads 100 inside a kernel and 0 after the last
    (check_export checks every value against the slices)."""
    d = tmpdir()
    db = os.path.join(d, "half.db")
    make_trace(db, calls=[launch("half") for _ in range(200)] + [sync("device")])
    con = sqlite3.connect(db)
    starts = sorted(con.execute("SELECT id, start_ns FROM calls"))
    base = starts[0][1]
    for i, (cid, st) in enumerate(starts[:200]):
        add_gpu_op(con, "kernel", cid, base + 10000 * i + 5000, base + 10000 * i + 10000)
    con.commit()
    con.close()
    r = export(db)
    assert_eq((r.returncode, r.stderr), (0, b""))
    tl = check_export(db, r.stdout)
    (vals,) = tl.counters.values()
    # buckets of 1 us: 100 where a kernel runs, 0 between; over the whole
    # run the busy time integrates to 200 kernels of 5 us
    total = _busy_integral(vals)
    assert abs(total - 200 * 5000) < 1, total
    assert_eq(vals[-1][1], 0.0)
    inside = [v for (t, v), (t2, _) in zip(vals, vals[1:]) if t2 - t >= 1000]
    assert 100.0 in inside and 0.0 in inside, inside[:20]

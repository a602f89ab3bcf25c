"""gputrace export --format chrome-json (tests/test_perfetto.py: the default
protobuf format), and the summary `gputrace record`
ends with: checked against the trace they come from."""
import json
import os
import re
import subprocess
from collections import Counter

import gtlib
import oracle
from gtlib import assert_eq, prog, query, run_traced, tmpdir

GPUTRACE = os.path.join(gtlib.BUILD, "gputrace")
GPU_PID_BASE = 1000000000


def export(*args):
    return subprocess.run([GPUTRACE, "export"] + list(args), capture_output=True, text=True)


def test_export_chrome_json_tracks_flows_and_gaps():
    run = run_traced([prog("stall")])
    assert_eq(run.proc.returncode, 0, run.proc.stderr)
    db = run.trace
    out = os.path.join(run.outdir, "t.json")
    r = export("--format", "chrome-json", db, "-o", out)
    assert_eq((r.returncode, r.stdout, r.stderr), (0, "", ""))
    with open(out) as f:
        doc = json.load(f)
    ev = doc["traceEvents"]
    pid = int(query(db, "SELECT value FROM meta WHERE key = 'pid'")[0][0])
    host = [e for e in ev if e["ph"] == "X" and e["pid"] == pid]
    gpu = [e for e in ev if e["ph"] == "X" and e["pid"] >= GPU_PID_BASE and e["cat"] != "idle"]
    idle = [e for e in ev if e["ph"] == "X" and e.get("cat") == "idle"]
    # a slice per call, on its thread, with its name and arguments
    calls = query(db, "SELECT id, tid, name, end_ns - start_ns FROM api_calls ORDER BY id")
    assert_eq(len(host), len(calls))
    by_id = {e["args"]["call_id"]: e for e in host}
    for cid, tid, name, dur in calls:
        e = by_id[cid]
        assert_eq((e["tid"], e["name"]), (tid, name))
        assert abs(e["dur"] * 1000 - dur) <= 1, (e, dur)
    launches = [e for e in host if e["cat"] == "launch"]
    assert launches and all("kernel" in e["args"] and e["args"]["site"] for e in launches), launches[:2]
    # a slice per GPU interval, on its stream's track under "GPU 0"
    assert_eq(len(gpu), query(db, "SELECT count(*) FROM gpu_activity")[0][0])
    assert_eq(sorted(set(e["name"] for e in gpu if e["cat"] == "kernel")),
              sorted(r[0] for r in query(db, "SELECT DISTINCT name FROM kernels")))
    # an arrow from each call to each piece of GPU work it caused
    starts = {e["id"]: e for e in ev if e["ph"] == "s"}
    ends = {e["id"]: e for e in ev if e["ph"] == "f"}
    linked = query(db, "SELECT count(*) FROM gpu_activity WHERE linked = 1")[0][0]
    assert linked > 0
    assert_eq((len(starts), len(ends)), (linked, linked))
    gpu_at = {(e["pid"], e["tid"], e["ts"]) for e in gpu}
    host_at = {(e["pid"], e["tid"], e["ts"]) for e in host}
    for i, s in starts.items():
        f = ends[i]
        assert (s["pid"], s["tid"], s["ts"]) in host_at, s
        assert (f["pid"], f["tid"], f["ts"]) in gpu_at, f
        assert f["bp"] == "e"
    # idle gaps: the report's, on the GPU's own track
    rep = json.loads(subprocess.run([GPUTRACE, "report", "--format", "json", "--top", "0", db],
                                    capture_output=True, text=True).stdout)
    assert_eq(len(idle), len(rep["idle_gaps"]))
    assert idle and any(e["args"]["cause"] == "host" and e["dur"] >= 50000 for e in idle), idle
    # names for every track
    names = {(e["pid"], e["tid"], e["name"]) for e in ev if e["ph"] == "M"}
    assert (pid, 0, "process_name") in names
    for tid in set(e["tid"] for e in host):
        assert (pid, tid, "thread_name") in names
    for p, t in set((e["pid"], e["tid"]) for e in gpu + idle):
        assert (p, t, "thread_name") in names and (p, 0, "process_name") in names


def test_export_chrome_json_host_samples():
    """Host samples (schema 7): an instant event each on its thread's
    track, named as the report names them (named apart by tests/oracle.py),
    with its row's fields; a thread only sampled (GPUTRACE_SAMPLE_THREADS=
    all: the feeder, which never calls CUDA) named too; --from/--to keep
    the samples inside."""
    import test_python as tp
    run = tp.run_py(max(tp.supported()), "host_stalls.py", 2, 60, env={"GPUTRACE_SAMPLE_THREADS": "all"})
    db = run.trace
    pid = int(query(db, "SELECT value FROM meta WHERE key = 'pid'")[0][0])
    origin = int(query(db, "SELECT value FROM meta WHERE key = 'start_ns'")[0][0])
    rows = {r[0]: r[1:] for r in query(db, "SELECT id, tid, ns, state, syscall, pystack_id, stack_id "
                                           "FROM host_samples")}
    named = oracle._read_samples_db(db)
    only_sampled = {r[0] for r in rows.values()} - {r[0] for r in query(db, "SELECT DISTINCT tid FROM calls")}
    assert only_sampled, "the feeder thread is sampled and makes no call"
    for window, lo, hi in (((), 0, 1 << 62), (("--from", "100ms", "--to", "300ms"), 100 * 10**6, 300 * 10**6)):
        out = os.path.join(run.outdir, "s.json")
        r = export("--format", "chrome-json", *window, db, "-o", out)
        assert_eq((r.returncode, r.stderr), (0, ""))
        with open(out) as f:
            ev = json.load(f)["traceEvents"]
        inst = [e for e in ev if e.get("cat") == "host_sample"]
        assert all(e["ph"] == "i" and e["s"] == "t" and e["pid"] == pid for e in inst), inst[:3]
        want = Counter((tid, ns - origin, text) for tid, ns, text, _ in named if lo <= ns - origin < hi)
        assert len(want) >= 10, want
        assert_eq(Counter((e["tid"], round(e["ts"] * 1000), e["name"]) for e in inst), want)
        for e in inst:
            tid, ns, state, sc, py, nat = rows[e["args"]["sample_id"]]
            assert_eq((e["tid"], round(e["ts"] * 1000)), (tid, ns - origin))
            args = {"sample_id": e["args"]["sample_id"], "state": state}
            args.update({k: v for k, v in (("syscall", sc), ("pystack_id", py), ("stack_id", nat)) if v is not None})
            assert_eq(e["args"], args)
        names = {(e["pid"], e["tid"]) for e in ev if e["ph"] == "M" and e["name"] == "thread_name"}
        assert {(pid, e["tid"]) for e in inst} <= names, names
        assert only_sampled & {e["tid"] for e in inst} or window, "the sampled-only thread's samples exported"


def test_export_usage_errors():
    d = tmpdir()
    run = run_traced([prog("rt_basic")])
    r = export("--format", "html", run.trace)
    assert_eq(r.returncode, 2)
    assert "--format must be perfetto or chrome-json" in r.stderr, r.stderr
    r = export("--max-events", "10", "--format", "chrome-json", run.trace)
    assert_eq(r.returncode, 2)
    for bad in (["--from", "soon"], ["--to", "-1s"], ["--max-events", "0"], ["--max-events", "x"],
                ["--from", "2s", "--to", "1s"]):
        r = export(*bad, run.trace)
        assert_eq(r.returncode, 2, bad)
        assert r.stderr.startswith("gputrace export: ") or r.stderr.startswith("gputrace: "), r.stderr
    r = export("--format", "perfetto", os.path.join(d, "missing.db"))
    assert_eq(r.returncode, 2)
    assert r.stderr.startswith("gputrace: "), r.stderr
    r = export("--format", "perfetto", run.trace, "-o", os.path.join(d, "no", "such", "dir.json"))
    assert_eq(r.returncode, 1)
    assert "cannot write" in r.stderr, r.stderr
    # to standard output by default
    r = export("--format", "chrome-json", run.trace)
    assert_eq(r.returncode, 0)
    assert json.loads(r.stdout)["traceEvents"]
    r = export("--format", "chrome-json", "-o", "-", run.trace)
    assert_eq(r.returncode, 0)
    assert json.loads(r.stdout)["traceEvents"]


def _record(args, cwd):
    env = gtlib.base_env()
    return subprocess.run([GPUTRACE, "record"] + args, capture_output=True, text=True, env=env, cwd=cwd,
                          timeout=120)


def test_record_ends_with_a_summary():
    d = tmpdir()
    r = _record(["-o", "t-%p.db", prog("stall")], d)
    assert_eq(r.returncode, 0, r.stderr)
    assert_eq(r.stdout, "stall: done\n")
    lines = r.stderr.splitlines()
    assert_eq(len(lines), 3, lines)
    traces = [f for f in os.listdir(d) if f.endswith(".db")]
    assert_eq(len(traces), 1)
    path = os.path.join(d, traces[0])
    calls = query(path, "SELECT count(*) FROM calls")[0][0]
    launches = query(path, "SELECT count(*) FROM kernels")[0][0]
    m = re.match(r"gputrace: wrote (\S+): (\d+) CUDA calls, (\d+) kernel launches, \S+ \S+ host-to-device, "
                 r"GPU idle [\d.]+% of [\d.]+ \S+$", lines[0])
    assert m, lines[0]
    assert_eq((m.group(1), int(m.group(2)), int(m.group(3))), (path, calls, launches))
    # the planted stall is the finding, with the call that ended it: at
    # least the 50 ms the program sleeps (more on a loaded machine; the
    # report's idle figures are checked by SQL in test_report and test_truth)
    m = re.match(r"gputrace: top finding: the GPU sat idle ([\d.]+) ms \([\d.]+% of the run\), host outside "
                 r"CUDA, at stall\.c:\d+ in launch_second$", lines[1])
    assert m and float(m.group(1)) >= 50, lines[1]
    assert_eq(lines[2], "gputrace: more: gputrace report %s" % path)
    # -q: nothing; a command that never calls CUDA: says so, writes nothing
    r = _record(["-q", "-o", "q-%p.db", prog("stall")], d)
    assert_eq((r.returncode, r.stderr), (0, ""))
    before = sorted(os.listdir(d))
    r = _record(["true"], d)
    assert_eq((r.returncode, r.stderr), (0, "gputrace: no recorded calls, no trace written\n"))
    assert_eq(sorted(os.listdir(d)), before)
    r = _record(["-q", "true"], d)
    assert_eq((r.returncode, r.stderr), (0, ""))
    assert not [f for f in os.listdir(d) if f.startswith("gputrace-record-")]


def test_record_summary_of_many_processes():
    d = tmpdir()
    r = _record(["-o", "t-%p.db", prog("endings"), "children", "20"], d)
    assert_eq(r.returncode, 0, r.stderr)
    lines = [line for line in r.stderr.splitlines() if not line.startswith("gputrace: GPU times not recorded")]
    wrote = [line for line in lines if line.startswith("gputrace: wrote ")]
    assert_eq(len(wrote), 5, lines)
    assert "gputrace: and 2 more traces" in lines, lines
    # the closing hint names every trace written, not only those listed
    traces = sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith(".db"))
    assert_eq(len(traces), 7)
    assert lines[-1].startswith("gputrace: more: gputrace report "), lines
    assert_eq(sorted(lines[-1].split()[4:]), traces)


def _png_pixels(path):
    """(width, height, rows of (r, g, b)) of an 8-bit RGB or RGBA PNG, with
    nothing but the standard library."""
    import struct
    import zlib
    with open(path, "rb") as f:
        data = f.read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, w = 8, b"", 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and ctype in (2, 6), (depth, ctype)
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw = zlib.decompress(idat)
    stride = w * bpp
    rows, prev = [], bytearray(stride)
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append([tuple(line[x * bpp:x * bpp + 3]) for x in range(w)])
        prev = line
    return w, h, rows


def test_html_report_renders_offline():
    """One self-contained file (nothing fetched; tests/test_html_timeline.py
    checks in Chromium that it asks for nothing); headless Chromium draws its overview: busy
    time in green and the planted 50 ms gap in red, over most of the row."""
    import shutil
    run = run_traced([prog("stall")])
    db = run.trace
    html = os.path.join(run.outdir, "report.html")
    r = subprocess.run([GPUTRACE, "report", "--format", "html", "-o", html, db], capture_output=True, text=True)
    assert_eq((r.returncode, r.stdout, r.stderr), (0, "", ""))
    with open(html) as f:
        page = f.read()
    for needle in ("http://", "https://", "src=", "@import", "url(", "fetch(", "XMLHttpRequest", "import("):
        assert needle not in page, needle
    # scripts: the timeline's own, inline, and its data (JSON, never run)
    assert_eq(re.findall(r"<script[^>]*>", page), ["<script>", '<script type="application/json" id="gt-tl-data-0">'])
    for section in ("GPU timeline", "GPU idle gaps", "Launch overhead", "Host-to-device copies", "Syncs by call site"):
        assert section in page, section
    assert 'href="#gap-0-0"' in page and 'id="gap-0-0"' in page, "the gap links to its row"
    assert re.search(r"stall\.c:\d+ in launch_second", page)
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    assert chromium, "scripts/setup-debian.sh installs chromium"
    png = os.path.join(run.outdir, "report.png")
    r = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                        "--hide-scrollbars",
                        "--window-size=1200,700", "--screenshot=" + png, "file://" + html],
                       capture_output=True, text=True, timeout=120)
    assert os.path.exists(png), r.stderr[-2000:]
    w, h, rows = _png_pixels(png)
    assert_eq((w, h), (1200, 700))

    def near(px, rgb, tol=40):
        return all(abs(a - b) <= tol for a, b in zip(px, rgb))
    # the timeline band: the row with the most gap-red pixels
    red = [sum(1 for px in row if near(px, (0xe4, 0x9c, 0x9a))) for row in rows]
    band = max(range(h), key=lambda y: red[y])
    assert red[band] > w * 0.6, ("the 50 ms gap covers most of the 55 ms timeline", red[band])
    in_band = [y for y in range(h) if red[y] > red[band] // 2]
    green = max(sum(1 for px in rows[y] if near(px, (0x2e, 0x9e, 0x4f), 30)) for y in in_band)
    assert green > 10, ("busy time drawn beside the gap", green)


def test_html_timeline_draws_what_the_gpu_did():
    """The timeline draws each slice as tall as the GPU was busy in it, so
    the green area is the busy time (a 96%-idle run is not drawn solid), and
    marks every gap of at least --min-gap, however few rows --top keeps."""
    import re
    run = run_traced([prog("stall")], env={"FAKECUDA_LAUNCH_NS": "20000"})
    html = os.path.join(run.outdir, "report.html")
    r = subprocess.run([GPUTRACE, "report", "--format", "html", "--top", "1", "--min-gap", "100us", "-o", html,
                        run.trace], capture_output=True, text=True)
    assert_eq(r.returncode, 0, r.stderr)
    doc = json.loads(subprocess.run([GPUTRACE, "report", "--format", "json", "--top", "0", "--min-gap", "100us",
                                     run.trace], capture_output=True, text=True).stdout)
    with open(html) as f:
        page = f.read()
    svg = page[page.index("<svg class=timeline"):page.index("</svg>")]
    row = re.search(r'<rect x=[\d.]+ y=[\d.]+ width=([\d.]+) height=([\d.]+) fill="#e9ecf1"/>', svg)
    full = float(row.group(1)) * float(row.group(2))
    green = sum(float(w) * float(h) for w, h in
                re.findall(r'<rect x=[\d.]+ y=[\d.]+ width=([\d.]+) height=([\d.]+) fill="#2e9e4f"/>', svg))
    busy = doc["summary"]["busy_ns"] / doc["summary"]["span_ns"]
    # 1000 slices, two decimals per coordinate: drawn to within a thousandth
    assert abs(green / full - busy) < 0.001, (green / full, busy)
    assert busy < 0.1, busy
    marked = len(re.findall(r"<a class=gap ", svg))
    assert_eq(marked, len(doc["idle_gaps"]))
    assert len(doc["idle_gaps"]) > 1, doc["idle_gaps"]


def test_gpu_validation_script_dry_run():
    """scripts/gpu-validate.sh --simulated: the real-GPU script's own
    plumbing (build, trace, every check on the CUDA C++ program, the
    results files) works here, so a lent GPU is not spent debugging it."""
    d = tmpdir()
    r = subprocess.run([os.path.join(gtlib.ROOT, "scripts", "gpu-validate.sh"), "--simulated", "--out", d],
                       capture_output=True, text=True, timeout=300)
    assert_eq(r.returncode, 0, r.stdout[-3000:] + r.stderr[-2000:])
    with open(os.path.join(d, "validation.json")) as f:
        res = json.load(f)
    assert res["simulated"] is True
    assert len(res["checks"]) >= 12 and all(c["ok"] for c in res["checks"]), res["checks"]
    assert any("every kernel record CUPTI delivered is linked" in c["check"] for c in res["checks"])
    with open(os.path.join(d, "validation.md")) as f:
        assert "SIMULATED GPU" in f.read()

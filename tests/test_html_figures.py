"""The HTML report shows the report's figures: on a planted trace, every
number of its header, cards, idle-by-cause line, gap rows, kernel, stream
and API tables and its timeline's gaps is the JSON report's (which the
truth tests check against the trace); its overview's busy share of each
slice is the union of the GPU work there, computed here by SQL and Python
apart from the C analyzer, without and with a window. No browser needed:
the page is parsed."""
import html.parser
import json
import os
import re
import sqlite3
import subprocess
import sys

from gtlib import GPUTRACE, assert_eq, tmpdir

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_trace import START_NS, add_gpu_op, launch, make_trace, memcpy, sync  # noqa: E402
import oracle  # noqa: E402

SLICES = 1000          # the overview's slices (docs/report.md, HTML)
ROW_H = 34.0           # a device's bar, full height, in SVG units
LEFT, WIDTH = 70.0, 1000.0


def _planted(path, meta=None):
    """Two threads launching on two GPUs, work that overlaps on each, a
    500 us host stall, a copy, a sync, and a kernel of no recorded call."""
    calls = []
    t = START_NS
    for i in range(60):
        if i == 30:
            t += 500000
        calls.append(launch("k%d" % (i % 4), tid=1000 + i % 2, device=i % 2, stream=7 + i % 2,
                            start_ns=t, end_ns=t + 3000))
        t += 9000
    calls.append(memcpy("HtoD", 1 << 20, start_ns=t, end_ns=t + 40000))
    calls.append(sync("device", start_ns=t + 41000, end_ns=t + 90000))
    make_trace(path, calls=calls, meta={"gpu_timing": "cupti"} if meta is None else meta)
    con = sqlite3.connect(path)
    rows = con.execute("SELECT id, start_ns, end_ns FROM calls ORDER BY start_ns").fetchall()
    for i, (cid, s, e) in enumerate(rows[:60]):
        # 4 to 20 us: the longer ones overlap the next launch's kernel on
        # the same GPU; the last before the stall runs 520 us, into it
        dur = 520000 if i == 29 else 4000 * (1 + i % 5)
        add_gpu_op(con, "kernel", cid, e + 1000, e + 1000 + dur, device=i % 2, stream=7 + i % 2)
    cid, s, e = rows[60]
    add_gpu_op(con, "memcpy", cid, s + 2000, s + 30000, nbytes=1 << 20, copy_kind="HtoD")
    add_gpu_op(con, "kernel", None, s + 31000, s + 35000, name="orphan", device=1, stream=9)
    con.commit()
    con.close()
    return path


class _Page(html.parser.HTMLParser):
    """Tables by the heading before them, each row's cells as text; the
    header line; the cards; the overview's rects."""

    def __init__(self):
        super().__init__()
        self.tables, self.cards, self.rects, self.text = {}, {}, [], []
        self.heading = None
        self._in, self._buf, self._row, self._card, self._svg, self._label = None, [], None, None, False, ""

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "b" and self._card is not None:
            self._label = "".join(self._buf).strip()
        if tag in ("h2", "h3", "td", "th", "b", "p"):
            self._in, self._buf = tag, []
        if tag == "tr":
            self._row = []
        if tag == "div" and a.get("class") == "card":
            self._card, self._buf = "", []
        if tag == "svg" and a.get("class") == "timeline":
            self._svg = True
        if tag == "rect" and self._svg and a.get("fill") == "#2e9e4f":
            self.rects.append((float(a["x"]), float(a["y"]), float(a["width"]), float(a["height"])))

    def handle_endtag(self, tag):
        text = "".join(self._buf).strip()
        if tag in ("h2", "h3"):
            self.heading = text
        elif tag in ("td", "th") and self._row is not None:
            self._row.append(text)
        elif tag == "tr" and self._row is not None:
            self.tables.setdefault(self.heading, []).append(self._row)
            self._row = None
        elif tag == "b" and self._card is not None:
            self._card = text
        elif tag == "div" and self._card is not None:
            self.cards[self._label] = self._card
            self._card = None
        elif tag == "p":
            self.text.append(text)
        elif tag == "svg":
            self._svg = False

    def handle_data(self, data):
        self._buf.append(data)


def _page(path):
    p = _Page()
    with open(path, encoding="utf-8") as f:
        page = f.read()
    p.feed(page)
    m = re.search(r'<script type="application/json" id="gt-tl-data-0">(.*?)</script>', page, re.S)
    return p, json.loads(m.group(1))


def _close(shown, exact):
    """A formatted duration (gt_fmt_duration) within half its last digit of exact ns."""
    m = re.fullmatch(r"\+?(\d+)(?:\.(\d+))? (ns|us|ms|s)", shown)
    assert m, shown
    unit = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}[m.group(3)]
    decimals = len(m.group(2) or "")
    value = float(m.group(1) + "." + (m.group(2) or "0")) * unit
    assert abs(value - exact) <= 0.5 * unit / 10 ** decimals + 1e-6, (shown, exact)


def _report(db, *args):
    out = os.path.join(tmpdir(), "r.html")
    r = subprocess.run([GPUTRACE, "report", "--format", "html", "--top", "0", "--min-gap", "20us", "-o", out] +
                       list(args) + [db], capture_output=True, text=True)
    assert_eq((r.returncode, r.stderr), (0, ""))
    r = subprocess.run([GPUTRACE, "report", "--format", "json", "--top", "0", "--min-gap", "20us"] + list(args) + [db],
                       capture_output=True, text=True)
    assert_eq(r.returncode, 0, r.stderr)
    return _page(out), json.loads(r.stdout)


def _sql_slices(db, t0, span, window=None):
    """Per device, the busy share of each slice of [t0, t0 + span): the union
    of its GPU work (gpu_activity; in a window, the work of the calls that
    start in it and of no call that starts in it)."""
    con = sqlite3.connect(db)
    rows = con.execute("SELECT g.device, g.start_ns, g.end_ns, COALESCE(c.start_ns, g.start_ns) "
                       "FROM gpu_activity g LEFT JOIN api_calls c ON c.id = g.api_call_id").fetchall()
    con.close()
    by_dev = {}
    for dev, s, e, origin in rows:
        if window and not window[0] <= origin < window[1]:
            continue
        by_dev.setdefault(dev, []).append((s, e))
    out = {}
    w = span / SLICES
    for dev, iv in by_dev.items():
        merged = oracle.union(iv)
        frac = [0.0] * SLICES
        for s, e in merged:
            a, b = (max(s, t0) - t0) / w, (min(e, t0 + span) - t0) / w
            i = int(a)
            while i < SLICES and i < b:
                frac[i] += max(0.0, min(b, i + 1) - max(a, i))
                i += 1
        out[dev] = frac
    return out


def _drawn_slices(page, devices):
    """Per device row (in order), each slice's drawn share."""
    out = []
    for k in range(devices):
        y0 = 44.0 * k + 4
        frac = [0.0] * SLICES
        for x, y, wd, h in page.rects:
            if y0 - 0.01 <= y <= y0 + ROW_H + 0.01:
                for i in range(round(x - LEFT), round(x - LEFT + wd)):
                    frac[i] = h / ROW_H
        out.append(frac)
    return out


def _check_overview(page, db, doc, t0, window=None):
    want = _sql_slices(db, t0, doc["summary"]["span_ns"], window)
    devices = sorted(want)
    assert len(devices) == 2, devices
    got = _drawn_slices(page, len(devices))
    for dev, frac in zip(devices, got):
        # each height is printed to 1/100 of a 34-unit bar
        bad = [(i, frac[i], min(want[dev][i], 1.0)) for i in range(SLICES)
               if abs(frac[i] - min(want[dev][i], 1.0)) > 0.006 / ROW_H + 1e-6]
        assert not bad, (dev, bad[:5], len(bad))
    # and they add up to the report's busy time per device
    for dev, frac in zip(devices, got):
        row = next(d for d in doc["devices"] if d["device"] == dev)
        assert abs(sum(frac) / SLICES - row["busy_ns"] / doc["summary"]["span_ns"]) < 0.001, (dev, row)


def _check_tables(page, tl, doc):
    s = doc["summary"]
    header = next(t for t in page.text if " calls, GPU times " in t)
    m = re.search(r"span (.+?), (\d+) calls", header)
    _close(m.group(1), s["span_ns"])
    assert_eq(int(m.group(2)), s["calls"])
    assert_eq(page.cards["GPU idle"], "%.1f%%" % s["idle_pct"])
    assert_eq(page.cards["launch-bound"], "%d of %d" % (s["launch_bound"], s["launches"]))
    assert_eq(page.cards["failed calls"], "%d of %d" % (s["failed_calls"], s["calls"]))
    assert_eq(page.cards["busiest thread in syncs"], "%.1f%%" % s["sync_pct"])
    causes = next(t for t in page.text if t.startswith("Idle by cause:"))
    shown = dict((k, v) for k, v in re.findall(r"(\w+) ([\d.]+ \w+)", causes))
    assert_eq(sorted(shown), sorted(k for k, v in s["idle_by_cause_ns"].items() if v))
    for k, v in shown.items():
        _close(v, s["idle_by_cause_ns"][k])
    gaps = doc["idle_gaps"]
    assert len(gaps) >= 2, gaps
    rows = next(v for k, v in page.tables.items() if k.startswith("GPU idle gaps"))[1:]
    assert_eq(len(rows), len(gaps))
    for row, g in zip(rows, gaps):
        _close(row[0], g["dur_ns"])
        _close(row[1], g["offset_ns"])
        assert_eq(int(row[2]), g["device"])
    # the timeline's gaps: exact, in the gaps table's order
    assert_eq([(x[0], x[1], x[2], x[4]) for x in tl["gaps"]],
              [(g["device"], g["offset_ns"], g["dur_ns"], i) for i, g in enumerate(gaps)])
    kernels = page.tables["Kernels by GPU time"][1:]
    assert_eq([r[0] for r in kernels], [k["name"] for k in doc["kernels"]])
    for row, k in zip(kernels, doc["kernels"]):
        _close(row[1], k["total_ns"])
        assert_eq(int(row[3]), k["count"])
    streams = page.tables["Streams and devices"][1:]
    assert_eq([(int(r[0]), int(r[1]), int(r[2])) for r in streams],
              [(x["device"], x["stream"], x["ops"]) for x in doc["streams"]])
    for row, x in zip(streams, doc["streams"]):
        _close(row[3], x["busy_ns"])
    api = page.tables["CUDA API summary"][1:]
    assert_eq([(r[0], int(r[1]), int(r[5])) for r in api], [(a["name"], a["count"], a["errors"]) for a in doc["api"]])


def test_html_figures_are_the_reports():
    """The whole trace: the page's figures are the JSON report's, and its
    overview is the GPU work by SQL, slice by slice."""
    db = _planted(os.path.join(tmpdir(), "planted.db"))
    (page, tl), doc = _report(db)
    _check_tables(page, tl, doc)
    assert_eq(tl["span"], doc["summary"]["span_ns"])
    con = sqlite3.connect(db)
    t0 = con.execute("SELECT min(start_ns) FROM api_calls").fetchone()[0]
    con.close()
    _check_overview(page, db, doc, t0)
    assert len(doc["kernels"]) == 5 and any(g["cause"] == "host" for g in doc["idle_gaps"]), doc["idle_gaps"]


def test_html_figures_in_a_window():
    """A window from the stall on: the page's figures are the window's
    report, its overview the work of the calls made in the window only
    (a kernel launched before it that runs into it is not drawn), and its
    timeline's lanes hold the window's calls, none from before."""
    db = _planted(os.path.join(tmpdir(), "planted.db"))
    frm, to = 30 * 9000 + 400000, 30 * 9000 + 500000 + 20 * 9000
    (page, tl), doc = _report(db, "--from", "%dns" % frm, "--to", "%dns" % to)
    _check_tables(page, tl, doc)
    a, b = START_NS + frm, START_NS + to
    _check_overview(page, db, doc, a, (a, b))
    con = sqlite3.connect(db)
    want = con.execute("SELECT count(*) FROM api_calls WHERE start_ns >= ? AND start_ns < ?", (a, b)).fetchone()[0]
    con.close()
    got = sum(lane["total"] for lane in tl["lanes"] if lane["kind"] == "thread")
    assert_eq(got, want)
    assert 0 < want < 60, want
    assert all(lane["ev"][i] >= 0 for lane in tl["lanes"] for i in range(0, len(lane["ev"]), 5))


def test_html_overview_without_gpu_times():
    """A trace with GPU records but no CUPTI timing named in its meta: the
    report's busy time is the calls' host times (as it says), and so is
    the overview's: each GPU's drawn busy share adds up to its busy time."""
    db = _planted(os.path.join(tmpdir(), "planted.db"), meta={})
    (page, tl), doc = _report(db)
    assert_eq(doc["summary"]["gpu_times"], False)
    _check_tables(page, tl, doc)
    devices = sorted(d["device"] for d in doc["devices"])
    assert_eq(devices, [0, 1])
    got = _drawn_slices(page, len(devices))
    for dev, frac in zip(devices, got):
        row = next(d for d in doc["devices"] if d["device"] == dev)
        assert row["busy_ns"] > 0, row
        assert abs(sum(frac) / SLICES - row["busy_ns"] / doc["summary"]["span_ns"]) < 0.001, (dev, sum(frac), row)

"""What `gputrace diff --format json` must say, recomputed from the traces'
public views through tests/oracle.py (docs/diff.md, Figures and Noise
rule): every row's BASE and NEW figure and its status, without any of the
analyzer's code."""
import math
import re
from collections import defaultdict

import oracle

REL, FLOOR_SPAN, FLOOR_BYTES_PER_S, FLOOR_ONCE_NS, SPREAD = 0.10, 0.01, 65536.0, 10e6, 3.0
CAUSES = oracle.ALL_CAUSES
ONCE_CAUSES = ("startup", "teardown")


def site_key(site):
    return re.sub(r"\+0x[0-9a-fA-F]+", "", " < ".join(site))


def one_trace(path):
    """{(kind, name): [value, calls]}, span, the span less start-up and
    teardown idle, steps, mean step of one trace."""
    p = oracle.Process(path)
    s = p.summary()
    items = defaultdict(lambda: [0, 0])

    def add(kind, name, v, n=0):
        items[(kind, name)][0] += v
        items[(kind, name)][1] += n

    edges = s["idle_by_cause_ns"].get("startup", 0) + s["idle_by_cause_ns"].get("teardown", 0)
    add("summary", "span", s["span_ns"])
    add("summary", "gpu_busy", s["busy_ns"])
    add("summary", "gpu_idle", s["idle_ns"] - edges)
    for c in CAUSES:
        add("summary", "idle_" + c, s["idle_by_cause_ns"].get(c, 0))
    add("summary", "launch_host", s["launch_host_ns"], s["launches"])
    add("summary", "pageable_h2d_bytes", s["pageable_h2d_bytes"])
    add("summary", "sync", s["sync_ns"])
    for k in p.kernels():
        add("kernel", k["name"], k["total_ns"], k["count"])
    for r in p.launch_overhead()[1]:
        add("launch_site", site_key(r["site"]), r["api_total_ns"], r["count"])
    for r in p.h2d_rows().values():
        if r["pageable_bytes"]:
            add("h2d_site", site_key(r["site"]), r["pageable_bytes"], r["pageable_calls"])
    for r in p.syncs():  # the report's sync sites sum every kind at a site
        add("sync_site", site_key(r["site"]), r["dur_ns"], r["count"])
    import oracle_categories
    for r in oracle_categories.expected(p)[0]:  # kinds of work (docs/report.md, Kernel categories)
        add("category", r["category"], r["gpu_ns"], r["count"])
    st = p.steps()
    # shares are of the time from the GPU's first work to its last
    return items, p.span, p.span - edges, st["count"] if st else 0, st["mean_ns"] if st else 0


def measures(kind, name):
    """(measure, bytes, gated) of each row docs/diff.md gives the figure."""
    if kind == "summary":
        if name in ("span",) or name in ("idle_" + c for c in ONCE_CAUSES):
            return [("once", False, name != "span")]
        if name == "gpu_busy":
            return [("share", False, False)]
        if name == "gpu_idle":
            return [("share", False, False), ("total", False, True)]
        if name == "launch_host":
            return [("per_call", False, True)]
        return [("total", name == "pageable_h2d_bytes", name != "sync")]
    if kind == "category":  # shown, not gated
        return [("count", False, False), ("per_call", False, False), ("total", False, False)]
    out = [("count", kind == "h2d_site", True), ("per_call", kind == "h2d_site", kind != "sync_site")]
    if kind == "kernel":
        out.append(("total", False, True))
    return out


def expected(base, new):
    """{(kind, name, measure): {"base", "new", "status", "gated"}}."""
    sides = [[one_trace(p) for p in base], [one_trace(p) for p in new]]
    per_step = all(t[3] > 0 for side in sides for t in side)
    span = [sum(t[1] for t in side) / len(side) for side in sides]
    step = [sum(t[4] for t in side) / len(side) for side in sides]
    units = [sum(t[3] if per_step else 1 for t in side) for side in sides]
    keys = {k for side in sides for t in side for k in t[0]}
    out = {}
    for kind, name in keys:
        for measure, is_bytes, gated in measures(kind, name):
            mean, spread, calls, vals = [], [], [], []
            for s, side in enumerate(sides):
                figs = []
                vsum = csum = 0
                for items, _, window, nsteps, _ in side:
                    v, c = items.get((kind, name), (0, 0))
                    per = nsteps if per_step else 1
                    vsum += v
                    csum += c
                    if measure == "total":
                        figs.append(v / per)
                    elif measure == "count":
                        figs.append(c / per)
                    elif measure == "share":
                        figs.append(v / window if window else 0)
                    elif measure == "once":
                        figs.append(v)
                    elif c:
                        figs.append(v / c)
                m = (vsum / csum if csum else 0) if measure == "per_call" else (sum(figs) / len(figs) if figs else 0)
                mean.append(m)
                spread.append(max(figs) - min(figs) if figs else 0)
                calls.append(csum)
                vals.append(vsum)
            diff = mean[1] - mean[0]
            if kind != "summary" and calls[0] and not calls[1]:
                status = "vanished"
            elif kind != "summary" and calls[1] and not calls[0]:
                status = "new"
            else:
                unit = step[0] if per_step else span[0]
                floor = FLOOR_BYTES_PER_S * unit / 1e9 if is_bytes else FLOOR_SPAN * unit
                cost = abs(diff)
                if measure == "count":
                    cost *= sum(vals) / sum(calls) if sum(calls) else 0
                elif measure == "per_call":
                    cost *= max(calls[0] / units[0], calls[1] / units[1])
                elif measure == "share":
                    floor = FLOOR_SPAN
                elif measure == "once":
                    floor = FLOOR_ONCE_NS
                beyond = abs(diff) > REL * mean[0] and cost > floor
                if beyond and len(base) >= 2 and len(new) >= 2:
                    beyond = abs(diff) > SPREAD * max(spread)
                status = "changed" if beyond else "same"
            out[(kind, name, measure)] = {"base": mean[0], "new": mean[1], "status": status, "gated": gated,
                                          "base_count": calls[0], "new_count": calls[1]}
    return out, per_step


def _near(a, b):
    return abs(a - b) <= 1e-6 * max(1.0, abs(b)) + 1e-3


def _borderline(row, want):
    """A change within 1% of a threshold: float rounding may put it on
    either side."""
    d = abs(want["new"] - want["base"])
    return want["base"] and abs(d - REL * want["base"]) <= 0.01 * REL * want["base"]


def check(doc, base, new):
    """Mismatches between a diff's JSON document and the recomputation."""
    want, per_step = expected(base, new)
    errs = []
    if doc["per"] != ("step" if per_step else "run"):
        errs.append("per: %r" % doc["per"])
    got = {(r["kind"], r["name"], r["measure"]): r for r in doc["rows"]}
    for k in sorted(set(want) | set(got)):
        w, g = want.get(k), got.get(k)
        if w is None or g is None:
            if (w or {}).get("base") or (w or {}).get("new") or g is not None:
                errs.append("%s: row %s" % (k, "missing" if g is None else "not expected"))
            continue
        for f in ("base", "new", "base_count", "new_count"):
            if not _near(g[f], w[f]):
                errs.append("%s.%s: %r, want %r" % (k, f, g[f], w[f]))
        if g["status"] != w["status"] and not _borderline(g, w):
            errs.append("%s.status: %r, want %r (%r -> %r)" % (k, g["status"], w["status"], w["base"], w["new"]))
    return errs


def regressions(doc, base, new, pct):
    """(kind, name, measure) of every row audit --baseline --max-regression-pct
    pct must fail on: gated, changed upward beyond pct (or from 0); an idle
    cause only when the idle time in all rose too."""
    want, _ = expected(base, new)
    up = {k for k, w in want.items() if w["gated"] and w["status"] == "changed" and w["new"] > w["base"]
          and (w["base"] == 0 or (w["new"] - w["base"]) / w["base"] * 100 > pct)}
    if ("summary", "gpu_idle", "total") not in up:
        up = {k for k in up if not (k[0] == "summary" and k[1].startswith("idle_"))}
    return up

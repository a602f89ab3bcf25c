#!/usr/bin/env python3
"""An independent oracle for `gputrace report --format json`.

Every figure of the report (report_version 2) is recomputed here from the
public views of the traces (docs/schema.md) with plain SQL, and Python for
what SQL does badly (interval unions, the sweep that finds what the host
did during a gap, nearest-rank percentiles, call-site text), following the
definitions of docs/report.md and nothing else: this file is written from
the spec, never from the analyzer's code (analyzer/), so a mistake there
cannot be mirrored here.

    check(trace_paths, report_json, min_gap_ns=1_000_000) -> [mismatch, ...]
    expected(trace_paths, min_gap_ns) -> [Process]: the recomputed figures,
        one object per trace (summary(), listed_gaps(), kernels(), ...)

or from the shell, which runs `build/gputrace report --format json --top 0`
itself, checks its exit status (2 when a trace is given twice, or two
copies of one run are given) and prints each mismatch (exit 1 if any):

    python3 tests/oracle.py TRACE.db... [--min-gap NS]

How it compares: counts, bytes and nanoseconds exactly; `*_pct` and
`bandwidth_gbps` to the six decimals the JSON prints (|got - want| <= 1e-6
plus 1e-9 of the value: the JSON rounds to 6 decimals, 5e-7 at most);
`stddev_ns` to the three decimals it prints (1.1e-3, plus 1e-9 of the
value). Rows are matched by their key (pid plus name, site, kind, ...);
where the spec names an order (findings by cost, gaps longest first,
kernels by total, graph launches by GPU time, H2D hotspots by host time,
syncs and the API summary by time) the report's rows must be sorted by
that value, rows tied on it in any order. Where the spec leaves the order
open (launch overhead, transfers, streams, devices, errors, idle by site)
only the set of rows is compared. Where the spec lets the report name any
one of several tied operations (a gap's call before or after it when two
operations end or start at the same nanosecond), any of them is accepted,
and the sums that depend on that choice (idle by site, a finding's site)
are held to the bounds every choice allows.

Questions on the spec, and the reading this oracle takes (each also marked
"Q:" where the code makes the choice):

 Q1 launch_host_ns, launch_threads, launch_host_pct: "every launch call's
    host time": taken as the launches (category launch, succeeded, not
    captured), the set the Launches section defines, not every call of
    category launch.
 Q2 captured_calls: every call with api_calls.captured = 1 (launches,
    copies and memsets made during stream capture, whatever their result);
    the spec names it under Launches, but the name and "captured calls"
    suggest all of them.
 Q3 queue_mean_ns: the kernel's GPU start minus the call's end is taken as
    0 when negative per launch, before the mean.
 Q4 a kernel's first launch (for launch_bound and first_api_ns): the
    earliest launch (as defined: succeeded, not captured) of that name by
    call start; ties on start broken by call id.
 Q5 launch-bound's "every operation that started before the kernel on the
    same device and stream": operations (of any kind) on the kernel's
    device and CUPTI stream whose GPU start is strictly earlier.
 Q6 blocked_sync's site, "the top sync site": the explicit-sync call site
    with the most host time, summed over its sync kinds; the top row of
    the syncs table among explicit kinds is accepted as well.
 Q7 pageable_h2d's site, "the top H2D site with pageable bytes": the H2D
    site whose pageable copies took the most host time (pageable_host_ns,
    what the finding costs), or the one with the most pageable_bytes; both
    are accepted. (Not the first row of h2d_hotspots, ranked by all host
    time, that has any pageable bytes: a site of pinned copies with one
    pageable copy would win.)
 Q8 syncs: copy calls are counted whatever their result (the spec says
    "every result" only for syncs; "every call counts" otherwise); a copy
    call's memory is pageable when any of its memcpys rows says so, as in
    H2D hotspots.
 Q9 the 1% cut of findings, with several traces: each finding is held to
    its own process's span; totals: span_ns, counts and times are sums,
    idle_pct and launch_bound_pct are recomputed from the sums, and
    launch_host_pct and sync_pct are the largest of the processes'.
    gpu_times in the totals is not checked when the processes differ.
 Q10 a frame without a function name reads `module+0xOFF`; a Python
    frame without a line reads `file.py:? in function`. Which modules are
    "the big frameworks" is open (the "..." in the spec): this oracle skips
    the list in SKIP_NATIVE below.
 Q11 an operation no recorded call made, as the call that ended or came
    before a gap: its site is ["(no recorded call)"] and its API null.
 Q12 devices: the devices that ran at least one operation (a trace with
    no operations lists none); streams by CUPTI stream id (`gpu_stream`);
    without GPU times, which have no CUPTI stream, by the call's stream
    handle (the views' `stream`, NULL read as 0, the legacy stream).
 Q13 zero-length operations add nothing to busy time and split no gap.
 Q14 h2d bandwidth_gbps: bytes / gpu_ns with GPU times (0 when gpu_ns is
    0), bytes / host_ns without.
 Q15 traces before version 5: operations from gpu_activity (and the
    calls' host rows without GPU times), frame offsets one less than
    stored; errors named from the CUDA headers (tests/make_trace.py's
    result_names(), as version 5 traces name them) for want of an error
    column.
 Q16 the one gap of a trace without operations (a start-up gap no
    operation ended) counts under "(no GPU work after)" in idle_by_site,
    as the tear-down gap does.
 Q18 phases (docs/report.md, Phases): the spec's "a phase may reach
    outside the span" is read as: wall_ns is the union of the ranges
    whatever the span; gpu_idle_pct is compared as the other *_pct are.
 Q17 a call made from Python: "Five frames in all" is read as: the native
    frames (up to two) are kept, and the Python frames, innermost first,
    fill the rest (five Python frames when no native frame qualifies,
    four beside one native frame, three beside two), rather than "the
    innermost three Python frames" of the general rule.
 Q18 a native frame with a line but no function name reads
    `file:LINE in module+0xOFF` (the spec's "or module+0xoffset").
"""
import bisect
import copy
import fnmatch
import json
import math
import os
import re
import sqlite3
import subprocess
import sys
from collections import defaultdict

import oracle_categories
import oracle_sites
import oracle_threads
from oracle_model import (  # noqa: F401 (also the names the tests take from here)
    HERE, ROOT, GPUTRACE, CAUSE_OF, CAUSE_CATEGORY, CAUSES, ALL_CAUSES, NO_CALL, NO_PYTHON, STEP_NAME, NO_AFTER,
    EXPLICIT_SYNCS, BANDS, CUDA_LIBS, TRACER, LIBC, PYTHON, FRAMEWORKS, SKIP_NATIVE, SKIP_UNDER_PY, static_cudart,
    short_function, _skipped, AnyOf, _same, _base, _read_samples, _read_samples_db, HostOf, _host_of_gap, Trace,
    old_error_name, Call, Op, Sites, union, length, intersect_len, Coverage, nearest_rank, pct, in_window,
    inside_window, window_len, Gap)


class Process:
    def __init__(self, path, min_gap_ns=1_000_000, window=None):
        t = self.t = Trace(path, window)
        self.window = window
        self.path, self.pid, self.min_gap = path, t.pid, min_gap_ns
        calls = list(t.calls.values())
        self.calls = calls
        ops = t.ops
        starts = [c.start for c in calls] + [o.start for o in ops]
        ends = [c.end for c in calls] + [o.end for o in ops]
        self.s0 = min(starts) if starts else 0
        self.s1 = max(ends) if ends else 0
        # a window's span covers the window (a bound of 0 / 2^63-1: none);
        # only its time inside the window counts
        self.lead_inner = self.trail_inner = False
        self.span = self.s1 - self.s0
        if window is not None:
            a, b = window[0][0], window[-1][1]
            if a:
                self.s0 = min(self.s0, a) if starts else a
                self.lead_inner = True
            if b < 2 ** 63 - 1:
                self.s1 = max(self.s1, b) if ends else b
                self.trail_inner = True
            if not starts and not (a and b < 2 ** 63 - 1):
                self.s0 = self.s1 = 0
            self.span = window_len(window, self.s0, self.s1)
        self.cov = {cat: Coverage([c for c in calls if CAUSE_CATEGORY.get(c.category, c.category) == cat])
                    for cat, _ in CAUSE_OF}
        # per cause: its calls by start, and the longest, to find a gap's calls
        self.cause_calls = {}
        for cat, cause in CAUSE_OF:
            v = sorted((c for c in calls if CAUSE_CATEGORY.get(c.category, c.category) == cat),
                       key=lambda c: c.start)
            self.cause_calls[cause] = ([c.start for c in v], v, max((c.end - c.start for c in v), default=0))
        self.whole = self.timeline(ops)
        self.devices = sorted({o.device for o in ops}, key=lambda d: (d is None, d))
        self.dev_tl = {d: self.timeline([o for o in ops if o.device == d]) for d in self.devices}
        # device time (docs/report.md): each device that ran work counts its
        # own busy and idle time; a trace without operations counts the span once
        self.counting = [self.dev_tl[d] for d in self.devices] or [self.whole]
        self.ndevtime = len(self.counting)
        self.device_ns = self.span * self.ndevtime

    def device_gaps(self):
        """Every gap of every device's timeline: device time's idle."""
        return [g for tl in self.counting for g in tl["gaps"]]

    def origin(self):
        """Where every +TIME counts from, as --from and --to (docs/report.md):
        the trace's start, the earliest trace's for several (expected() sets
        it), or the span's start when meta says a later one."""
        o = getattr(self, "common_start", None)
        if o is None:
            o = int(self.t.meta.get("start_ns", self.s0))
        return o if o <= self.s0 else self.s0

    # -- sites
    def call_site(self, cid):
        if cid is None:
            return (NO_CALL,)
        c = self.t.calls.get(cid)
        if c is None:
            return (NO_CALL,)  # Q11: a call the trace does not hold (a partial trace)
        return self.t.sites.site(c.stack_id, c.pystack_id)

    def api_of(self, cid):
        c = self.t.calls.get(cid) if cid is not None else None
        return c.name if c else None

    # -- timelines
    def timeline(self, ops):
        busy = union((o.start, o.end) for o in ops)
        gaps = []
        if not busy:
            if self.s1 > self.s0:
                gaps.append(Gap(self.s0, self.s1, "startup"))
        else:
            if busy[0][0] > self.s0:
                gaps.append(Gap(self.s0, busy[0][0], "startup"))
            for (_, e), (s, _) in zip(busy, busy[1:]):
                gaps.append(Gap(e, s, "internal"))
            if self.s1 > busy[-1][1]:
                gaps.append(Gap(busy[-1][1], self.s1, "teardown"))
        by_start, by_end = defaultdict(list), defaultdict(list)
        for o in ops:
            if o.end > o.start:
                by_start[o.start].append(o)
                by_end[o.end].append(o)
        for g in gaps:
            if g.kind != "teardown":
                g.after = by_start[g.end]
            if g.kind != "startup":
                g.before = by_end[g.start]
            g.cause = self.cause(g)
        if self.window is not None:
            for g in gaps:
                g.wdur = window_len(self.window, g.start, g.end)
                g.wstart = next((max(a, g.start) for a, b in self.window if b > g.start), None)
            gaps = [g for g in gaps if g.wdur > 0]
        return {"busy": busy, "busy_ns": self.wlen(busy), "gaps": gaps}

    def wlen(self, iv):
        """The length of a union of intervals, inside the window if any."""
        if self.window is None:
            return length(iv)
        return sum(window_len(self.window, a, b) for a, b in iv)

    def cause(self, g):
        # a window's edges are no start-up or tear-down: their gaps get a cause as the others
        if (g.kind == "startup" and not self.lead_inner) or (g.kind == "teardown" and not self.trail_inner):
            return g.kind
        best, best_cov = None, -1
        for cat, cause in CAUSE_OF:
            cov = self.cov[cat].within(g.start, g.end)
            if cov > best_cov:  # ties: the earlier in the list
                best, best_cov = cause, cov
        return best if 2 * best_cov >= g.dur and best_cov > 0 else "host"

    def by_cause(self, tl):
        out = {c: 0 for c in ALL_CAUSES}
        for g in tl["gaps"]:
            out[g.cause] += g.dur
        return out

    def spent_by(self, g):
        """A gap with a call cause: (sites, apis) the report may name as the
        calls that spent it (docs/report.md, a gap's site): the sites whose
        calls of that category overlapped it the most, and the entry points
        of their calls with the longest overlap. None for other causes."""
        if g.cause not in CAUSES:
            return None
        if g.spent is None:
            starts, v, longest = self.cause_calls[g.cause]
            by_site, best_call = defaultdict(int), defaultdict(lambda: (0, set()))
            lo = bisect.bisect_left(starts, g.start - longest)
            hi = bisect.bisect_left(starts, g.end)
            for c in v[lo:hi]:
                ov = min(c.end, g.end) - max(c.start, g.start)
                if ov <= 0:
                    continue
                site = self.call_site(c.id)
                by_site[site] += ov
                n, apis = best_call[site]
                if ov > n:
                    best_call[site] = (ov, {c.name})
                elif ov == n:
                    apis.add(c.name)
            top = max(by_site.values(), default=0)
            sites = {s for s, n in by_site.items() if n == top}
            apis = set().union(*(best_call[s][1] for s in sites)) if sites else set()
            g.spent = (sites, apis)
        return g.spent

    def gap_site(self, g):
        """The sites the report may name as a gap's site (docs/report.md):
        the calls that spent it when the host was inside CUDA, else the
        call whose work ended it; "(no GPU work after)" for a gap no
        operation ended (Q16)."""
        spent = self.spent_by(g)
        if spent and spent[0]:
            return spent[0]
        return {(NO_AFTER,)} if not g.after else self.gap_sites(g, "after")

    def gap_sites(self, g, which):
        """The sites (as a set) the report may name for a gap's call after
        (which='after') or before it."""
        ops = g.after if which == "after" else g.before
        return {self.call_site(o.call_id) for o in ops}

    # -- launches
    def launches(self):
        if hasattr(self, "_launches"):
            return self._launches
        t = self.t
        kop = {}
        for o in t.ops:
            if o.kind == "kernel" and o.call_id is not None and o.via in ("launch", None):
                if o.call_id in t.calls and t.calls[o.call_id].category == "launch":
                    kop[o.call_id] = o
        launches = sorted((c for c in self.calls if c.category == "launch" and c.result == 0 and not c.captured),
                          key=lambda c: (c.start, c.id))
        first = {}
        for c in launches:  # Q4
            first.setdefault(t.launch_name.get(c.id), c.id)
        # per (device, stream): ops by GPU start, with the running max of their ends (Q5)
        lanes = defaultdict(list)
        for o in t.ops:
            lanes[(o.device, o.stream)].append(o)
        lane_idx = {}
        for k, v in lanes.items():
            v.sort(key=lambda o: o.start)
            mx, run = [], None
            for o in v:
                run = o.end if run is None else max(run, o.end)
                mx.append(run)
            lane_idx[k] = ([o.start for o in v], mx)
        out = []
        for c in launches:
            name = t.launch_name.get(c.id)
            o = kop.get(c.id) if t.gpu_times else None
            bound = False
            if o is not None and first[name] != c.id and o.dur < c.dur:
                st, mx = lane_idx[(o.device, o.stream)]
                i = bisect.bisect_left(st, o.start)
                bound = i == 0 or mx[i - 1] <= c.end
            out.append({"call": c, "name": name, "op": o, "bound": bound, "first": first[name] == c.id})
        self._launches = out
        return out

    # -- the report's sections
    def summary(self):
        calls = self.calls
        L = self.launches()
        per_thread = defaultdict(int)
        for x in L:
            per_thread[x["call"].tid] += x["call"].dur
        sync_rows = self.sync_rows()
        sync_thread = defaultdict(int)
        for kind, c in sync_rows:
            sync_thread[c.tid] += c.dur
        h2d = self.h2d_rows()
        busy = sum(tl["busy_ns"] for tl in self.counting)
        idle = self.device_ns - busy
        by_cause = {c: sum(self.by_cause(tl)[c] for tl in self.counting) for c in ALL_CAUSES}
        bound = sum(1 for x in L if x["bound"])
        return {
            "span_ns": self.span,
            "gpu_times": self.t.gpu_times,
            "calls": len(calls),
            "failed_calls": sum(1 for c in calls if c.result != 0),
            "launches": len(L),
            "captured_calls": sum(1 for c in calls if c.captured),  # Q2
            "graph_launches": sum(1 for c in calls if c.category == "graph_launch" and c.result == 0
                                  and not c.captured),
            "launch_bound": bound,
            "launch_bound_pct": pct(bound, len(L)),
            "launch_host_ns": sum(per_thread.values()),  # Q1
            "launch_threads": len(per_thread),
            "launch_host_pct": min(100.0, pct(max(per_thread.values(), default=0), self.span)),
            "kernel_ns": sum(o.dur for o in self.t.ops if o.kind == "kernel"),
            "devices": self.ndevtime,
            "device_ns": self.device_ns,
            "busy_ns": busy,
            "idle_ns": idle,
            "idle_pct": pct(idle, self.device_ns),
            "idle_by_cause_ns": by_cause,
            "sync_ns": sum(c.dur for _, c in sync_rows),
            "sync_pct": min(100.0, pct(max(sync_thread.values(), default=0), self.span)),
            "h2d_bytes": sum(r["bytes"] for r in h2d.values()),
            "pageable_h2d_bytes": sum(r["pageable_bytes"] for r in h2d.values()),
            "mapped_host_allocs": self.t.mapped[0],
            "mapped_host_bytes": self.t.mapped[1],
            # the tracer's start-up on the program's thread, as meta says (issue 31, item 5)
            "tracer_startup_ns": self.t.startup_ns,
            "module_ns": sum(c.dur for c in calls if c.category == "module"),
            "module_jit": sum(1 for c in calls if c.category == "module" and c.id in self.t.module_jit),
        }

    def notes_expect(self):
        """(partial, the commonest errors if most calls failed else None)"""
        failed = [c for c in self.calls if c.result != 0]
        common = None
        if 2 * len(failed) > len(self.calls):
            n = defaultdict(int)
            for c in failed:
                n[c.error] += 1
            top = max(n.values())
            common = {e for e, k in n.items() if k == top}
        return not self.t.complete, common

    def listed_gaps(self):
        rows = []
        for d in self.devices:
            for g in self.dev_tl[d]["gaps"]:
                if g.dur < self.min_gap:
                    continue
                before = self.gap_sites(g, "before") if g.kind != "startup" else {None}
                after = self.gap_sites(g, "after") if g.kind != "teardown" else {None}
                bapi = {self.api_of(o.call_id) for o in g.before} if g.kind != "startup" else {None}
                aapi = {self.api_of(o.call_id) for o in g.after} if g.kind != "teardown" else {None}
                spent = self.spent_by(g)
                if not spent or not spent[0]:
                    spent = ({None}, {None})
                start = g.start if g.wstart is None else g.wstart
                rows.append({"pid": self.pid, "device": d, "start_ns": start, "offset_ns": start - self.origin(),
                             "dur_ns": g.dur, "cause": g.cause,
                             "before": _one_or_any(before), "before_api": _one_or_any(bapi),
                             "after": _one_or_any(after), "after_api": _one_or_any(aapi),
                             "spent": _one_or_any(spent[0]), "spent_api": _one_or_any(spent[1]),
                             "host": _host_of_gap(self.t, g)})
        return rows

    def host_stacks(self):
        """{text: [idle_ns, samples, gaps]} over the listed gaps, each
        gap's time shared among its launching thread's samples in it by
        their counts (rounded down to the ns); "(no samples)" for gaps
        without; and the listed gaps' idle time."""
        rows, total = defaultdict(lambda: [0, 0, 0]), 0
        for d in self.devices:
            for g in self.dev_tl[d]["gaps"]:
                if g.dur < self.min_gap:
                    continue
                total += g.dur
                h = _host_of_gap(self.t, g)
                smp = next(iter(h.tids.values())) if h else []
                if not smp:
                    rows["(no samples)"][0] += g.dur
                    rows["(no samples)"][2] += 1
                    continue
                # where the launching thread waited, the threads that ran
                names, den = oracle_threads.gap_weights(self.t.samples, next(iter(h.tids)), smp, g.start, g.end,
                                                        self.t.driver_tids, g.cause)
                counts, weights = defaultdict(int), defaultdict(int)
                for text, wt in names:
                    if wt:
                        counts[text] += 1
                        weights[text] += wt
                for text, n in counts.items():
                    rows[text][0] += g.dur * weights[text] // den
                    rows[text][1] += n
                    rows[text][2] += 1
        return rows, total

    def idle_by_site(self):
        """{site: [min_ns, max_ns, min_gaps, max_gaps]} over the whole-GPU
        gaps: exact (min = max) unless a gap may be named for more than one
        site (tied operations at its end)."""
        out = defaultdict(lambda: [0, 0, 0, 0])
        for g in self.device_gaps():
            # Q16: a gap no operation ended (tear-down, or the whole span of a
            # trace without operations) counts under "(no GPU work after)"
            sites = self.gap_site(g)
            for s in sites:
                r = out[s]
                r[1] += g.dur
                r[3] += 1
                if len(sites) == 1:
                    r[0] += g.dur
                    r[2] += 1
        return out

    def kernels(self):
        groups = defaultdict(list)
        for o in self.t.ops:
            if o.kind == "kernel":
                groups[o.name].append(o)
        all_ns = sum(o.dur for v in groups.values() for o in v)
        rows = []
        for name, v in groups.items():
            d = sorted(o.dur for o in v)
            n, tot = len(d), sum(d)
            var = (n * sum(x * x for x in d) - tot * tot) / (n * n)  # exact numerator
            rows.append({"pid": self.pid, "name": name, "count": n,
                         "graph_count": sum(1 for o in v if o.via == "graph"), "total_ns": tot,
                         "mean_ns": tot // n, "median_ns": nearest_rank(d, 50), "min_ns": d[0], "max_ns": d[-1],
                         "stddev_ns": math.sqrt(max(var, 0.0)), "share_pct": pct(tot, all_ns)})
        return rows

    def _overhead(self, items):
        api = sorted(x["call"].dur for x in items)
        gpu = [x for x in items if x["op"] is not None]
        n = len(items)
        g = len(gpu)
        return {"count": n, "api_total_ns": sum(api), "api_mean_ns": sum(api) // n,
                "api_p50_ns": nearest_rank(api, 50), "api_p99_ns": nearest_rank(api, 99), "api_max_ns": api[-1],
                "queue_mean_ns": (sum(max(0, x["op"].start - x["call"].end) for x in gpu) // g) if g else 0,  # Q3
                "gpu_total_ns": sum(x["op"].dur for x in gpu),
                "gpu_mean_ns": (sum(x["op"].dur for x in gpu) // g) if g else 0,
                "launch_bound": sum(1 for x in items if x["bound"])}

    def launch_overhead(self):
        by_k, by_s = defaultdict(list), defaultdict(list)
        for x in self.launches():
            by_k[x["name"]].append(x)
            by_s[self.call_site(x["call"].id)].append(x)
        ks = []
        for name, v in by_k.items():
            r = {"pid": self.pid, "kernel": name}
            r.update(self._overhead(v))
            r["first_api_ns"] = next(x["call"].dur for x in v if x["first"])
            ks.append(r)
        ss = []
        for site, v in by_s.items():
            r = {"pid": self.pid, "site": list(site)}
            r.update(self._overhead(v))
            ss.append(r)
        return ks, ss

    def graph_launches(self):
        ops_of = defaultdict(list)
        for o in self.t.ops:
            if o.via == "graph":
                ops_of[o.call_id].append(o)
        rows = {}
        for c in self.calls:
            if c.category != "graph_launch" or c.result != 0 or c.captured:
                continue
            site = self.call_site(c.id)
            r = rows.setdefault(site, {"pid": self.pid, "site": list(site), "count": 0, "api_total_ns": 0,
                                       "ops": 0, "kernels": 0, "gpu_ns": 0})
            r["count"] += 1
            r["api_total_ns"] += c.dur
            for o in ops_of.get(c.id, []):
                r["ops"] += 1
                r["kernels"] += o.kind == "kernel"
                r["gpu_ns"] += o.dur
        return list(rows.values())

    def graph_nodes(self):
        rows = {}
        for node, kind, name, sid, psid, cid, dur in self.t.graph_work:
            created, launched = self.t.sites.site(sid, psid), self.call_site(cid)
            key = (kind, name if kind == "kernel" else None, created, launched)
            r = rows.setdefault(key, {"pid": self.pid, "kind": kind, "kernel": key[1], "created_at": list(created),
                                      "launched_at": list(launched), "nodes": set(), "runs": 0, "gpu_ns": 0})
            r["nodes"].add(node)
            r["runs"] += dur is not None
            r["gpu_ns"] += dur or 0
        for r in rows.values():
            r["nodes"] = len(r["nodes"])
        return list(rows.values())

    def transfers(self):
        kinds, sizes = {}, {}
        for o in self.t.ops:
            if o.kind not in ("memcpy", "memset"):
                continue
            kind = o.copy_kind
            band = next(b for lim, b in BANDS if lim is None or (o.bytes or 0) < lim)
            for key, table, extra in (((kind,), kinds, {}), ((kind, band), sizes, {"band": band})):
                r = table.setdefault(key, dict({"pid": self.pid, "kind": kind, "count": 0, "bytes": 0,
                                                "total_ns": 0}, **extra))
                r["count"] += 1
                r["bytes"] += o.bytes or 0
                r["total_ns"] += o.dur
        for r in list(kinds.values()) + list(sizes.values()):
            r["bandwidth_gbps"] = r["bytes"] / r["total_ns"] if r["total_ns"] else 0.0
        return list(kinds.values()), list(sizes.values())

    def h2d_rows(self):
        if hasattr(self, "_h2d"):
            return self._h2d
        t = self.t
        rows = {}
        for c in self.calls:
            a = t.copy_args.get(c.id)
            if c.category != "memcpy" or a is None or a[0] != "HtoD" or c.result != 0 or c.captured:
                continue
            site = self.call_site(c.id)
            r = rows.setdefault(site, {"pid": self.pid, "site": list(site), "bytes": 0, "count": 0, "host_ns": 0,
                                       "gpu_ns": 0, "pageable_bytes": 0, "pinned_bytes": 0, "pageable_calls": 0,
                                       "pageable_host_ns": 0, "blocking": 0, "async": 0, "async_pageable": 0,
                                       "mapped_bytes": 0})
            r["count"] += 1
            r["host_ns"] += c.dur
            pageable = False
            for nbytes, host_mem, ts, dur in t.copy_rows.get(c.id, []):
                r["bytes"] += nbytes or 0
                if ts == "gpu":
                    r["gpu_ns"] += dur
                if host_mem == "pageable":
                    r["pageable_bytes"] += nbytes or 0
                    pageable = True
                elif host_mem == "pinned":
                    r["pinned_bytes"] += nbytes or 0
                elif host_mem == "mapped":
                    r["mapped_bytes"] += nbytes or 0
            is_async = bool(a[2])
            if pageable:
                r["pageable_calls"] += 1
                r["pageable_host_ns"] += c.dur
            r["async"] += is_async
            r["blocking"] += (not is_async) or pageable
            r["async_pageable"] += is_async and pageable
        for r in rows.values():
            den = r["gpu_ns"] if t.gpu_times else r["host_ns"]  # Q14
            r["bandwidth_gbps"] = r["bytes"] / den if den else 0.0
            r["small_copy_storm"] = r["count"] >= 100 and r["bytes"] < 65536 * r["count"]
        self._h2d = rows
        return rows

    def sync_rows(self):
        """[(kind, call)] of the calls that block the host (Q8)."""
        t = self.t
        out = []
        for c in self.calls:
            if c.category == "sync" and not c.captured:
                k = t.sync_kind.get(c.id)
                if k in EXPLICIT_SYNCS:
                    out.append((k, c))
            elif c.category == "memcpy" and not c.captured and c.id in t.copy_args:
                kind, host_mem, is_async = t.copy_args[c.id]
                rows = t.copy_rows.get(c.id, [])
                pageable = any(r[1] == "pageable" for r in rows) if rows else host_mem == "pageable"
                if not is_async and kind == "DtoH":
                    out.append(("memcpy_dtoh", c))
                elif is_async and pageable:
                    out.append(("memcpy_pageable", c))
        return out

    def syncs(self):
        rows = {}
        for kind, c in self.sync_rows():
            site = self.call_site(c.id)
            r = rows.setdefault((kind, site), {"pid": self.pid, "kind": kind, "count": 0, "dur_ns": 0,
                                               "site": list(site)})
            r["count"] += self.t.sync_polls.get(c.id, 1)
            r["dur_ns"] += c.dur
        return list(rows.values())

    def streams(self):
        groups = defaultdict(list)
        for o in self.t.ops:
            groups[(o.device, o.stream)].append(o)
        rows = []
        for (d, s), v in groups.items():
            busy = self.wlen(union((o.start, o.end) for o in v))
            rows.append({"pid": self.pid, "device": d, "stream": s, "ops": len(v), "busy_ns": busy,
                         "busy_pct": pct(busy, self.span)})
        return rows

    def device_rows(self):
        rows = []
        for d in self.devices:
            tl = self.dev_tl[d]
            ops = [o for o in self.t.ops if o.device == d]
            comp = union((o.start, o.end) for o in ops if o.kind == "kernel")
            copy = union((o.start, o.end) for o in ops if o.kind == "memcpy")
            both = [[max(a, c), min(b, d)] for a, b in comp for c, d in copy if min(b, d) > max(a, c)]
            ov = self.wlen(both)
            idle = self.span - tl["busy_ns"]
            rows.append({"pid": self.pid, "device": d, "busy_ns": tl["busy_ns"], "idle_ns": idle,
                         "idle_pct": pct(idle, self.span), "idle_by_cause_ns": self.by_cause(tl),
                         "compute_ns": self.wlen(comp), "copy_ns": self.wlen(copy), "overlap_ns": ov,
                         "overlap_pct": pct(ov, self.wlen(copy))})
        return rows

    def api(self):
        g = defaultdict(list)
        for c in self.calls:
            g[c.name].append(c)
        return [{"pid": self.pid, "name": n, "count": len(v), "total_ns": sum(c.dur for c in v),
                 "mean_ns": sum(c.dur for c in v) // len(v), "max_ns": max(c.dur for c in v),
                 "errors": sum(1 for c in v if c.result != 0)} for n, v in g.items()]

    def errors(self):
        g = defaultdict(int)
        for c in self.calls:
            if c.result != 0:
                g[(c.name, c.error)] += 1
        return [{"pid": self.pid, "name": n, "error": e, "count": k} for (n, e), k in g.items()]

    def phases(self):
        """docs/report.md, Phases: per name of top-level NVTX ranges, in
        order of their first range's start (ties by name)."""
        if self.t.version < 6:
            return []
        con = sqlite3.connect("file:%s?mode=ro" % self.path, uri=True)
        try:
            tops = con.execute("SELECT tid, COALESCE(name, '(unnamed)'), start_ns, end_ns FROM ranges "
                               "WHERE kind = 'push' AND depth = 0 AND end_ns IS NOT NULL").fetchall()
        finally:
            con.close()
        if self.window is not None:  # a window's report: the ranges inside it
            tops = [r for r in tops if inside_window(self.window, r[2], r[3])]
        busy = union((o.start, o.end) for o in self.t.ops)
        by_tid = defaultdict(list)
        for c in sorted(self.calls, key=lambda c: c.start):
            by_tid[c.tid].append(c)
        starts = {tid: [c.start for c in cs] for tid, cs in by_tid.items()}
        rows = {}
        for tid, name, s0, s1 in tops:
            r = rows.setdefault(name, {"pid": self.pid, "name": name, "ranges": 0, "iv": [], "first": s0,
                                       "launches": 0, "launch_host_ns": 0, "h2d_bytes": 0, "syncs": 0,
                                       "sync_ns": 0})
            r["ranges"] += 1
            r["iv"].append((s0, s1))
            r["first"] = min(r["first"], s0)
            cs = by_tid.get(tid, [])
            lo = bisect.bisect_left(starts.get(tid, []), s0)
            hi = bisect.bisect_left(starts.get(tid, []), s1)
            for c in cs[lo:hi]:
                if c.category == "launch" and c.result == 0 and not c.captured:
                    r["launches"] += 1
                    r["launch_host_ns"] += c.dur
                elif (c.category == "memcpy" and c.result == 0 and not c.captured
                      and self.t.copy_args.get(c.id, (None,))[0] == "HtoD"):
                    r["h2d_bytes"] += sum(x[0] for x in self.t.copy_rows.get(c.id, []))
                elif c.category == "sync" and self.t.sync_kind.get(c.id) != "stream_wait_event":
                    r["syncs"] += 1
                    r["sync_ns"] += c.dur
        out = []
        for r in sorted(rows.values(), key=lambda r: (r["first"], r["name"])):
            iv = union(r.pop("iv"))
            r.pop("first")
            wall = length(iv)
            b = intersect_len(iv, busy)
            r.update(wall_ns=wall, gpu_busy_ns=b, gpu_idle_ns=wall - b, gpu_idle_pct=pct(wall - b, wall))
            out.append(r)
        return out

    def steps(self, glob=None):
        """docs/report.md, Steps: the process's steps row, or None when it
        has no step ranges. glob: --step."""
        if self.t.version < 6:
            return None
        con = sqlite3.connect("file:%s?mode=ro" % self.path, uri=True)
        try:
            rows = con.execute("SELECT tid, name, start_ns, end_ns FROM ranges WHERE end_ns IS NOT NULL "
                               "AND name IS NOT NULL AND end_ns >= start_ns").fetchall()
            copy_bytes = dict(con.execute("SELECT call_id, bytes FROM copy_args"))
        finally:
            con.close()
        if glob is not None:
            cand = [r for r in rows if fnmatch.fnmatchcase(r[1], glob)]
        else:
            cand = [r for r in rows if STEP_NAME.match(r[1])]
        cand.sort(key=lambda r: (r[2], -r[3], r[0]))
        # per thread, a step that starts before the last kept one ended is not one
        kept, last_end = set(), {}
        for i in sorted(range(len(cand)), key=lambda i: (cand[i][0], cand[i][2], i)):
            tid, _, s0, s1 = cand[i]
            if tid in last_end and s0 < last_end[tid]:
                continue
            last_end[tid] = s1
            kept.add(i)
        steps = [cand[i] for i in sorted(kept)]
        if not steps:
            return None
        nums = [re.search(r"[0-9]{1,15}$", n) for _, n, _, _ in steps]
        named = all(m and len(re.search(r"[0-9]*$", n).group(0)) <= 15 for m, (_, n, _, _) in zip(nums, steps))
        numbers = [int(m.group(0)) if named else i for i, m in enumerate(nums)]
        if self.window is not None:  # a window's report: the steps inside it, numbered as without
            inside = [i for i, (_, _, s0, s1) in enumerate(steps) if inside_window(self.window, s0, s1)]
            steps, numbers = [steps[i] for i in inside], [numbers[i] for i in inside]
            if not steps:
                return None
        busy = self.whole["busy"]
        gaps = self.whole["gaps"]
        has_ops = bool(busy)
        out = []
        for i, (tid, name, s0, s1) in enumerate(steps):
            st = {"number": numbers[i], "name": name, "tid": tid, "start_ns": s0,
                  "offset_ns": max(0, s0 - self.origin()), "dur_ns": s1 - s0}
            idle = {c: 0 for c in ALL_CAUSES}
            site_ns = defaultdict(lambda: defaultdict(int))   # what -> site -> ns (exact)
            site_any = defaultdict(set)                        # what -> sites a tied gap may name
            for g in gaps:
                lo, hi = max(g.start, s0), min(g.end, s1)
                if hi <= lo:
                    continue
                idle[g.cause] += hi - lo
                sites = self.gap_site(g)
                if len(sites) == 1:
                    site_ns[g.cause][next(iter(sites))] += hi - lo
                else:
                    site_any[g.cause] |= sites
            # outside the span: before the first GPU work, or after the last
            idle["startup"] += max(0, min(self.s0, s1) - s0)
            idle["teardown" if has_ops else "startup"] += max(0, s1 - max(self.s1, s0))
            b = intersect_len([[s0, s1]], busy)
            assert b + sum(idle.values()) == s1 - s0, ("busy and idle do not add up", name, s0)
            st.update(gpu_busy_ns=b, gpu_idle_ns=s1 - s0 - b, idle_by_cause_ns=idle)
            syncs = copies = sync_ns = copy_ns = nbytes = 0
            for c in self.calls:
                if c.tid != tid or not (s0 <= c.start < s1):
                    continue
                if c.category == "sync" and self.t.sync_kind.get(c.id) != "stream_wait_event":
                    syncs += 1
                    sync_ns += c.dur
                    site_ns["syncs"][self.call_site(c.id)] += c.dur
                elif c.category == "memcpy" and c.result == 0 and not c.captured:
                    copies += 1
                    copy_ns += c.dur
                    nbytes += copy_bytes.get(c.id) or 0
                    site_ns["copies"][self.call_site(c.id)] += c.dur
            st.update(syncs=syncs, sync_ns=sync_ns, copies=copies, copy_ns=copy_ns, copy_bytes=nbytes)
            st["_site_ns"], st["_site_any"] = site_ns, site_any
            out.append(st)
        durs = sorted(x["dur_ns"] for x in out)
        whats = ALL_CAUSES + ["syncs", "copies"]

        def value(x, w):
            return x["idle_by_cause_ns"][w] if w in ALL_CAUSES else x["sync_ns" if w == "syncs" else "copy_ns"]
        median = {w: nearest_rank(sorted(value(x, w) for x in out), 50) for w in whats}
        p50 = nearest_rank(durs, 50)
        slow = [x for x in sorted(out, key=lambda x: (-x["dur_ns"], x["start_ns"])) if x["dur_ns"] > p50][:5]
        for x in slow:
            over = []
            for k, w in enumerate(whats):
                v = value(x, w)
                if v <= median[w]:
                    continue
                ns, tied = x["_site_ns"][w], x["_site_any"][w]
                if tied:
                    site = AnyOf([list(t) for t in set(ns) | tied])
                elif ns:
                    top = max(ns.values())
                    site = list(min((t for t in ns if ns[t] == top), key=lambda t: " < ".join(t)))
                else:
                    site = None
                over.append((-(v - median[w]), k, {"what": w, "ns": v, "median_ns": median[w],
                                                   "over_ns": v - median[w], "site": site}))
            x["over_median"] = [o for _, _, o in sorted(over, key=lambda o: (o[0], o[1]))]
        for x in out:
            del x["_site_ns"], x["_site_any"]
        return {"pid": self.pid, "rule": glob, "count": len(out), "p50_ns": p50,
                "p99_ns": nearest_rank(durs, 99), "max_ns": durs[-1], "mean_ns": sum(durs) // len(durs),
                "median": median, "slowest": slow}

    def findings(self):
        """[{pid, kind, cost_ns, cost_pct, site (maybe AnyOf)}] before the 1% cut and ranking."""
        out = []
        gaps = self.device_gaps()
        for cause in ["host"] + CAUSES:
            cost = sum(g.dur for g in gaps if g.cause == cause)
            if not cost:
                continue
            lo, hi = defaultdict(int), defaultdict(int)
            for g in gaps:
                if g.cause != cause:
                    continue
                # a window's last gap: no operation ended it (Q16)
                sites = self.gap_site(g)
                for s in sites:
                    hi[s] += g.dur
                    if len(sites) == 1:
                        lo[s] += g.dur
            best = max(lo.values(), default=0)
            # any site whose most possible idle reaches the least the leader surely has
            cands = [list(s) for s in hi if hi[s] >= best]
            out.append(self._finding("idle_" + cause, cost, cands, self.device_ns))
        srows = self.syncs()
        explicit = [r for r in srows if r["kind"] in EXPLICIT_SYNCS]
        if explicit:
            by_site = defaultdict(int)
            for r in explicit:
                by_site[tuple(r["site"])] += r["dur_ns"]
            top = max(by_site.values())
            cands = [list(s) for s, v in by_site.items() if v == top]
            toprow = max(r["dur_ns"] for r in explicit)
            cands += [r["site"] for r in explicit if r["dur_ns"] == toprow]  # Q6
            out.append(self._finding("blocked_sync", sum(r["dur_ns"] for r in explicit), cands))
        dtoh = [r for r in srows if r["kind"] == "memcpy_dtoh"]
        if dtoh:
            top = max(r["dur_ns"] for r in dtoh)
            out.append(self._finding("blocked_dtoh", sum(r["dur_ns"] for r in dtoh),
                                     [r["site"] for r in dtoh if r["dur_ns"] == top]))
        h2d = list(self.h2d_rows().values())
        pg = [r for r in h2d if r["pageable_bytes"] > 0]
        if pg:  # Q7
            top_ns = max(r["pageable_host_ns"] for r in pg)
            top_bytes = max(r["pageable_bytes"] for r in pg)
            out.append(self._finding("pageable_h2d", sum(r["pageable_host_ns"] for r in h2d),
                                     [r["site"] for r in pg if r["pageable_host_ns"] == top_ns] +
                                     [r["site"] for r in pg if r["pageable_bytes"] == top_bytes]))
        storms = [r for r in h2d if r["small_copy_storm"]]
        if storms:
            top = max(r["host_ns"] for r in storms)
            out.append(self._finding("small_copies", sum(r["host_ns"] for r in storms),
                                     [r["site"] for r in storms if r["host_ns"] == top]))
        return out

    def _finding(self, kind, cost, sites, base=None):
        """base: what the cost is a share of (the span; device time for GPU idle)."""
        uniq = []
        for s in sites:
            if list(s) not in uniq:
                uniq.append(list(s))
        base = self.span if base is None else base
        return {"pid": self.pid, "kind": kind, "cost_ns": cost, "cost_pct": pct(cost, base),
                "site": _one_or_any(uniq), "_base": base}

    def kept_findings(self):
        """The findings the report must list (the 1% cut: cost * 100 >= span),
        and those at exactly the border (either way is accepted)."""
        keep, border = [], []
        for f in self.findings():
            base = f.pop("_base", self.span)
            if f["cost_ns"] <= 0:
                continue
            if f["cost_ns"] * 100 > base:
                keep.append(f)
            elif f["cost_ns"] * 100 == base:
                border.append(f)
        return keep, border


def _one_or_any(options):
    opts = [list(o) if isinstance(o, tuple) else o for o in options]
    if len(opts) == 1:
        return opts[0]
    return AnyOf(opts)


# ---------------------------------------------------------------------------
# Comparison


class Checker:
    def __init__(self):
        self.errs = []

    def err(self, msg):
        self.errs.append(msg)

    def value(self, where, got, want, field=None):
        if isinstance(want, AnyOf):
            if not want.ok(got):
                self.err("%s: got %r, want %r" % (where, got, want))
            return
        if isinstance(want, float) or (field and (field.endswith("_pct") or field == "bandwidth_gbps")):
            tol = (1.1e-3 if field == "stddev_ns" else 1e-6) + 1e-9 * abs(want)
            if not isinstance(got, (int, float)) or isinstance(got, bool) or abs(got - want) > tol:
                self.err("%s: got %r, want %.9f" % (where, got, want))
            return
        if isinstance(want, bool):
            if got is not want:
                self.err("%s: got %r, want %r" % (where, got, want))
            return
        if isinstance(want, int):
            if not isinstance(got, int) or isinstance(got, bool) or got != want:
                self.err("%s: got %r, want %r" % (where, got, want))
            return
        if isinstance(want, dict):
            if not isinstance(got, dict):
                self.err("%s: got %r, want an object" % (where, got))
                return
            if set(got) != set(want):
                self.err("%s: keys %s, want %s" % (where, sorted(got), sorted(want)))
            for k in want:
                if k in got:
                    self.value("%s.%s" % (where, k), got[k], want[k], k)
            return
        if not _same(got, want):
            self.err("%s: got %r, want %r" % (where, got, want))

    def row(self, where, got, want):
        for k, v in want.items():
            if k not in got:
                self.err("%s: no field %r" % (where, k))
            else:
                self.value("%s.%s" % (where, k), got[k], v, k)
        extra = set(got) - set(want)
        if extra:
            self.err("%s: unexpected fields %s" % (where, sorted(extra)))

    def table(self, name, got, want, key, order=None):
        """Rows matched by key(row); order: the field the spec sorts by
        (descending), checked on the report's own sequence."""
        if not isinstance(got, list):
            self.err("%s: not a list: %r" % (name, got))
            return
        gk = defaultdict(list)
        for r in got:
            try:
                gk[key(r)].append(r)
            except (KeyError, TypeError) as e:
                self.err("%s: row without its key (%s): %r" % (name, e, r))
        wk = defaultdict(list)
        for r in want:
            wk[key(r)].append(r)
        for k in sorted(set(gk) | set(wk), key=repr):
            g, w = gk.get(k, []), wk.get(k, [])
            if len(g) != len(w):
                self.err("%s: key %r: %d rows in the report, %d expected%s" %
                         (name, k, len(g), len(w), (": %r" % (w[0] if w else g[0]))[:600]))
                continue
            for a, b in zip(g, w):
                self.row("%s[%r]" % (name, k), a, b)
        if order:
            vals = [r.get(order) for r in got]
            pids = [r.get("pid") for r in got]
            for pid in set(pids):  # Q9: the order is checked within each process
                seq = [v for v, p in zip(vals, pids) if p == pid]
                for i in range(1, len(seq)):
                    if isinstance(seq[i], (int, float)) and isinstance(seq[i - 1], (int, float)) \
                            and seq[i] > seq[i - 1]:
                        self.err("%s: not sorted by %s (most first): %r after %r" % (name, order, seq[i],
                                                                                    seq[i - 1]))
                        break


def _site_key(r):
    return tuple(r["site"]) if r.get("site") is not None else None


def _totals(summaries):
    if len(summaries) == 1:
        return summaries[0]
    t = {}
    for k, v in summaries[0].items():
        if k == "idle_by_cause_ns":
            t[k] = {c: sum(s[k][c] for s in summaries) for c in v}
        elif k in ("launch_host_pct", "sync_pct"):
            t[k] = max(s[k] for s in summaries)
        elif k == "gpu_times":
            vals = {s[k] for s in summaries}
            t[k] = vals.pop() if len(vals) == 1 else AnyOf([True, False])
        elif k.endswith("_pct"):
            continue
        else:
            t[k] = sum(s[k] for s in summaries)
    t["launch_bound_pct"] = pct(t["launch_bound"], t["launches"])
    t["idle_pct"] = pct(t["idle_ns"], t["device_ns"])
    return {k: t[k] for k in summaries[0]}


def same_run_key(path):
    con = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
    try:
        m = dict(con.execute("SELECT key, value FROM meta WHERE key IN ('host', 'pid', 'start_time_unix_ns')"))
    finally:
        con.close()
    return (m.get("host"), m.get("pid"), m.get("start_time_unix_ns"))


def unique_traces(paths):
    """The traces the report must read, in order, and whether it must
    refuse (exit 2): the same file twice, or two copies of one run."""
    seen, out, dup = set(), [], False
    for p in paths:
        keys = {("path", os.path.realpath(p)), ("run",) + same_run_key(p)}
        if keys & seen:
            dup = True
            continue
        seen |= keys
        out.append(p)
    return out, dup


def expected(trace_paths, min_gap_ns=1_000_000, window=None):
    paths, _ = unique_traces(trace_paths)
    procs = [Process(p, min_gap_ns, window) for p in paths]
    starts = [int(p.t.meta["start_ns"]) for p in procs if "start_ns" in p.t.meta]
    for p in procs:
        p.common_start = min(starts) if starts else None
    return procs


def check(trace_paths, report, min_gap_ns=1_000_000, procs=None):
    """Mismatches between report (the parsed JSON of `gputrace report
    --format json --top 0 TRACES`) and the figures recomputed from the
    traces' views. An empty list: every figure agrees. procs: what
    expected(trace_paths, min_gap_ns) returned, to check several reports
    of the same traces without reading them again."""
    c = Checker()
    procs = procs if procs is not None else expected(trace_paths, min_gap_ns)
    if not isinstance(report, dict):
        return ["the report is not a JSON object"]
    # the sites this oracle reads from the stored frames launch where the binaries say
    for p in procs:
        for msg in oracle_sites.disagreements(p.path, p.t.sites):
            c.err("%s: %s" % (p.path, msg))
    c.value("report_version", report.get("report_version"), 2)
    # GPU time by kind of work: its own module; the rest of the checks read
    # the phases and steps without it
    oracle_categories.check(c, procs, report)
    report = oracle_categories.strip(copy.deepcopy(report))

    # traces[] and their first-line notes
    traces = report.get("traces", [])
    by_pid = {t.get("pid"): t for t in traces if isinstance(t, dict)}
    if len(traces) != len(procs):
        c.err("traces: %d entries, want %d" % (len(traces), len(procs)))
    for p in procs:
        t = by_pid.get(p.pid)
        if t is None:
            c.err("traces: no entry for pid %d (%s)" % (p.pid, p.path))
            continue
        w = "traces[pid %d]" % p.pid
        if not (isinstance(t.get("trace"), str) and os.path.basename(t["trace"]) == os.path.basename(p.path)):
            c.err("%s.trace: %r, want %r" % (w, t.get("trace"), p.path))
        c.value(w + ".host", t.get("host"), p.t.host)
        g = next((x for x in report.get("processes", []) if isinstance(x, dict) and x.get("pid") == p.pid), None)
        if g is not None and g.get("trace") != t.get("trace"):
            c.err("processes[pid %d].trace: %r, traces[] says %r" % (p.pid, g.get("trace"), t.get("trace")))
        c.value(w + ".schema_version", t.get("schema_version"), p.t.version)
        win = None if p.window is None else {"from_ns": p.window[0][0], "to_ns": min(p.window[-1][1], 2 ** 63 - 1),
                                              "intervals": len(p.window)}
        c.value(w + ".window", t.get("window"), win)
        partial, common = p.notes_expect()
        c.value(w + ".partial", t.get("partial"), partial)
        notes = " | ".join(t.get("notes", []))
        if partial and "partial" not in notes:
            c.err("%s.notes: %r does not say the trace is partial" % (w, notes))
        if not partial and "partial" in notes:
            c.err("%s.notes: %r says partial, the trace is complete" % (w, notes))
        if common is not None:
            if not any(e in notes for e in common) or "fail" not in notes:
                c.err("%s.notes: %r should say most calls failed, commonest error %s" % (w, notes, sorted(common)))
        elif "most" in notes and "fail" in notes:
            c.err("%s.notes: %r says most calls failed; %d of %d did" %
                  (w, notes, sum(1 for x in p.calls if x.result), len(p.calls)))

    # summaries: per process, then totals
    sums = [p.summary() for p in procs]
    got_procs = {x.get("pid"): x for x in report.get("processes", []) if isinstance(x, dict)}
    if len(report.get("processes", [])) != len(procs):
        c.err("processes: %d entries, want %d" % (len(report.get("processes", [])), len(procs)))
    for p, s in zip(procs, sums):
        g = got_procs.get(p.pid)
        if g is None:
            c.err("processes: no entry for pid %d" % p.pid)
            continue
        c.value("processes[pid %d].summary" % p.pid, g.get("summary"), s)
    c.value("summary", report.get("summary"), _totals(sums))

    # findings and advice
    keep, border = [], []
    for p in procs:
        k, b = p.kept_findings()
        keep += k
        border += b
    got_f = [f for f in report.get("findings", []) if isinstance(f, dict)]
    border_keys = {(f["pid"], f["kind"]) for f in border}
    for f in got_f:
        for fld in ("title", "advice"):
            if not isinstance(f.get(fld), str) or not f.get(fld):
                c.err("findings[%r].%s: missing" % (f.get("kind"), fld))
    c.table("findings", [{k: v for k, v in f.items() if k not in ("title", "advice")} for f in got_f
                         if (f.get("pid"), f.get("kind")) not in border_keys], keep,
            key=lambda r: (r["pid"], r["kind"]))
    costs = [f.get("cost_ns") for f in got_f]
    if any(isinstance(costs[i], int) and isinstance(costs[i - 1], int) and costs[i] > costs[i - 1]
           for i in range(1, len(costs))):
        c.err("findings: not ranked by cost: %r" % costs)
    c.value("advice", report.get("advice"), [f.get("advice") for f in got_f])
    for p in procs:
        bound = sum(1 for x in p.launches() if x["bound"])
        for f in got_f:
            if f.get("pid") == p.pid and f.get("kind") == "idle_launch" and isinstance(f.get("title"), str):
                if not re.search(r"\b%d\b" % bound, f["title"]):
                    c.err("findings[idle_launch].title: %r does not say %d launches were launch-bound" %
                          (f["title"], bound))

    # gaps
    want_gaps = [r for p in procs for r in p.listed_gaps()]
    c.table("idle_gaps", report.get("idle_gaps", []), want_gaps,
            key=lambda r: (r["pid"], r["device"], r["start_ns"]), order="dur_ns")

    # GPU idle by host stack (schema 7)
    got_hs = report.get("idle_by_host_stack")
    if not isinstance(got_hs, list):
        c.err("idle_by_host_stack: missing")
        got_hs = []
    for p in procs:
        mine = [r for r in got_hs if r.get("pid") == p.pid]
        if not p.t.samples:
            if mine:
                c.err("idle_by_host_stack: rows for pid %d, whose trace has no samples" % p.pid)
            continue
        want, total = p.host_stacks()
        got = {r.get("stack"): r for r in mine}
        if set(got) != set(want):
            c.err("idle_by_host_stack: stacks %r, want %r (pid %d)" % (sorted(got), sorted(want), p.pid))
            continue
        for text, (ns, nsmp, ngaps) in want.items():
            r = got[text]
            c.value("idle_by_host_stack[%r].idle_ns" % text, r.get("idle_ns"), ns, "idle_ns")
            c.value("idle_by_host_stack[%r].samples" % text, r.get("samples"), nsmp, "samples")
            c.value("idle_by_host_stack[%r].gaps" % text, r.get("gaps"), ngaps, "gaps")
            want_pct = 100.0 * ns / total if total else 0.0
            if not isinstance(r.get("pct"), float) or abs(r["pct"] - want_pct) > 5.1e-7:
                c.err("idle_by_host_stack[%r].pct: %r, want %.6f" % (text, r.get("pct"), want_pct))
            extra = set(r) - {"pid", "stack", "idle_ns", "pct", "samples", "gaps"}
            if extra:
                c.err("idle_by_host_stack[%r]: unexpected fields %s" % (text, sorted(extra)))
        seq = [r.get("idle_ns", 0) for r in mine]
        if seq != sorted(seq, reverse=True):
            c.err("idle_by_host_stack: not sorted by idle_ns (pid %d)" % p.pid)

    # idle by site (bounds when tied operations leave the naming open)
    got_ibs = report.get("idle_by_site", [])
    for p in procs:
        bounds = p.idle_by_site()
        mine = [r for r in got_ibs if r.get("pid") == p.pid]
        seen = set()
        for r in mine:
            s = _site_key(r)
            if s in seen:
                c.err("idle_by_site: site %r twice (pid %d)" % (s, p.pid))
            seen.add(s)
            if s not in bounds:
                c.err("idle_by_site: site %r (%r ns) names no gap's call (pid %d)" % (s, r.get("idle_ns"), p.pid))
                continue
            lo, hi, glo, ghi = bounds[s]
            if not (isinstance(r.get("idle_ns"), int) and lo <= r["idle_ns"] <= hi):
                c.err("idle_by_site[%r].idle_ns: got %r, want %s" % (s, r.get("idle_ns"),
                                                                      lo if lo == hi else "%d..%d" % (lo, hi)))
            if not (isinstance(r.get("gaps"), int) and glo <= r["gaps"] <= ghi):
                c.err("idle_by_site[%r].gaps: got %r, want %s" % (s, r.get("gaps"),
                                                                   glo if glo == ghi else "%d..%d" % (glo, ghi)))
        for s, (lo, hi, glo, ghi) in bounds.items():
            if glo > 0 and s not in seen:
                c.err("idle_by_site: no row for %r (%d ns over %d gaps, pid %d)" % (s, lo, glo, p.pid))
        total = sum(r.get("idle_ns", 0) for r in mine)
        want_idle = p.device_ns - sum(tl["busy_ns"] for tl in p.counting)
        if total != want_idle:
            c.err("idle_by_site: rows add up to %d, idle is %d (pid %d)" % (total, want_idle, p.pid))

    # kernels, launch overhead, graph launches
    c.table("kernels", report.get("kernels", []), [r for p in procs for r in p.kernels()],
            key=lambda r: (r["pid"], r["name"]), order="total_ns")
    lo = report.get("launch_overhead", {}) or {}
    ks, ss = [], []
    for p in procs:
        k, s = p.launch_overhead()
        ks += k
        ss += s
    c.table("launch_overhead.kernels", lo.get("kernels", []), ks, key=lambda r: (r["pid"], r["kernel"]))
    c.table("launch_overhead.sites", lo.get("sites", []), ss, key=lambda r: (r["pid"], _site_key(r)))
    c.table("graph_launches", report.get("graph_launches", []), [r for p in procs for r in p.graph_launches()],
            key=lambda r: (r["pid"], _site_key(r)), order="gpu_ns")

    c.table("graph_nodes", report.get("graph_nodes", []), [r for p in procs for r in p.graph_nodes()],
            key=lambda r: (r["pid"], r["kind"], r["kernel"], tuple(r["created_at"]), tuple(r["launched_at"])),
            order="gpu_ns")

    # transfers
    tr = report.get("transfers", {}) or {}
    bk, bs = [], []
    for p in procs:
        k, s = p.transfers()
        bk += k
        bs += s
    c.table("transfers.by_kind", tr.get("by_kind", []), bk, key=lambda r: (r["pid"], r["kind"]))
    c.table("transfers.by_size", tr.get("by_size", []), bs, key=lambda r: (r["pid"], r["kind"], r["band"]))

    # H2D hotspots, syncs
    c.table("h2d_hotspots", report.get("h2d_hotspots", []), [r for p in procs for r in p.h2d_rows().values()],
            key=lambda r: (r["pid"], _site_key(r)), order="host_ns")
    c.table("syncs", report.get("syncs", []), [r for p in procs for r in p.syncs()],
            key=lambda r: (r["pid"], r["kind"], _site_key(r)), order="dur_ns")

    # streams, devices
    c.table("streams", report.get("streams", []), [r for p in procs for r in p.streams()],
            key=lambda r: (r["pid"], r["device"], r["stream"]))
    c.table("devices", report.get("devices", []), [r for p in procs for r in p.device_rows()],
            key=lambda r: (r["pid"], r["device"]))

    # API and errors
    c.table("api", report.get("api", []), [r for p in procs for r in p.api()], key=lambda r: (r["pid"], r["name"]),
            order="total_ns")
    c.table("errors", report.get("errors", []), [r for p in procs for r in p.errors()],
            key=lambda r: (r["pid"], r["name"], r["error"]))

    # phases, in first-start order per process
    want_ph = [r for p in procs for r in p.phases()]
    got_ph = [r for r in report.get("phases", []) if isinstance(r, dict)]
    c.table("phases", got_ph, want_ph, key=lambda r: (r["pid"], r["name"]))
    for p in procs:
        order = [r["name"] for r in want_ph if r["pid"] == p.pid]
        got_order = [r.get("name") for r in got_ph if r.get("pid") == p.pid]
        if sorted(order) == sorted(got_order) and order != got_order:
            c.err("phases: order %r, want %r (pid %d)" % (got_order, order, p.pid))

    # steps
    check_steps(c, report.get("steps"), [x for x in (p.steps() for p in procs) if x is not None])

    # --top 0: nothing left out
    trunc = report.get("truncated")
    if not isinstance(trunc, dict):
        c.err("truncated: missing")
    else:
        for k, v in trunc.items():
            if v != 0:
                c.err("truncated.%s: %r with --top 0" % (k, v))
    return c.errs


def check_steps(c, got, want):
    """The report's steps rows against Process.steps()'s."""
    if not isinstance(got, list):
        c.err("steps: not a list: %r" % (got,))
        return
    gk = {r.get("pid"): r for r in got if isinstance(r, dict)}
    if len(gk) != len(got) or set(gk) != {w["pid"] for w in want}:
        c.err("steps: rows for pids %r, want %r" % (sorted(gk), sorted(w["pid"] for w in want)))
    for w in want:
        g = gk.get(w["pid"])
        if g is None:
            continue
        where = "steps[pid %d]" % w["pid"]
        for k in w:
            if k != "slowest":
                c.value("%s.%s" % (where, k), g.get(k), w[k], k)
        extra = set(g) - set(w)
        if extra:
            c.err("%s: unexpected fields %s" % (where, sorted(extra)))
        gs = g.get("slowest")
        if not isinstance(gs, list) or len(gs) != len(w["slowest"]):
            c.err("%s.slowest: %r, want %d rows" % (where, gs, len(w["slowest"])))
            continue
        for i, (a, b) in enumerate(zip(gs, w["slowest"])):
            wr = "%s.slowest[%d]" % (where, i)
            # a step's categories: oracle_categories.check's
            c.row(wr, {k: v for k, v in a.items() if k not in ("over_median", "categories")},
                  {k: v for k, v in b.items() if k != "over_median"})
            go, wo = a.get("over_median"), b["over_median"]
            if not isinstance(go, list) or len(go) != len(wo):
                c.err("%s.over_median: %r, want %r" % (wr, go, wo))
                continue
            for j, (x, y) in enumerate(zip(go, wo)):
                c.row("%s.over_median[%d]" % (wr, j), x, y)


# ---------------------------------------------------------------------------
# Running the report


def run_report(paths, min_gap_ns=1_000_000, gputrace=GPUTRACE):
    """(exit status, parsed JSON or None, stderr)"""
    r = subprocess.run([gputrace, "report", "--format", "json", "--top", "0", "--min-gap", "%dns" % min_gap_ns]
                       + list(paths), capture_output=True, text=True, timeout=300)
    try:
        doc = json.loads(r.stdout) if r.stdout.strip() else None
    except ValueError:
        doc = None
    return r.returncode, doc, r.stderr


def verify(paths, min_gap_ns=1_000_000, gputrace=GPUTRACE):
    """Runs the report on paths and checks it: exit status (2 when a trace
    is given twice or two copies of one run are given, else 0) and, when it
    printed a report, every figure. Returns the mismatches."""
    _, dup = unique_traces(paths)
    rc, doc, err = run_report(paths, min_gap_ns, gputrace)
    errs = []
    if rc != (2 if dup else 0):
        errs.append("exit status %d, want %d (stderr: %s)" % (rc, 2 if dup else 0, err.strip()[:500]))
    if doc is None:
        if not dup:
            errs.append("no JSON report (stderr: %s)" % err.strip()[:500])
        return errs
    return errs + check(paths, doc, min_gap_ns)


def main(argv):
    import argparse
    ap = argparse.ArgumentParser(description="Check gputrace report --format json against the traces' views.")
    ap.add_argument("traces", nargs="+")
    ap.add_argument("--min-gap", type=int, default=1_000_000, help="listed gaps' minimum, in ns (default 1 ms)")
    ap.add_argument("--gputrace", default=GPUTRACE)
    a = ap.parse_args(argv)
    errs = verify(a.traces, a.min_gap, a.gputrace)
    for e in errs:
        print(e)
    print("%d mismatches" % len(errs), file=sys.stderr)
    return 1 if errs else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

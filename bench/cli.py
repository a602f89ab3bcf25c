"""bench/run.py's sections that time the command line on big synthetic
traces (bench/big_trace.py, bench/rank_summaries.py): analyzer (`report`
as text and HTML, `info`), export (Perfetto), ranks (a report merging
rank summaries) and rank-traces (`report -j 2` on many ranks' traces
against one). Each figure goes into the results dict it is given;
timed_report is also the writer section's."""
import os
import shutil
import sqlite3
import statistics
import tempfile
import time

import big_trace
import gtlib
import rank_summaries


def timed_gputrace(argv, quiet=False):
    """`gputrace ARGV`, its standard output discarded if quiet: (seconds,
    CPU seconds (user and system, steadier than the time on a shared
    machine), peak resident MiB, exit status)."""
    pid = os.fork()
    if pid == 0:
        if quiet:
            os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
        os.execv(os.path.join(gtlib.BUILD, "gputrace"), ["gputrace"] + list(argv))
    t0 = time.monotonic()
    _, status, usage = os.wait4(pid, 0)
    return (time.monotonic() - t0, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024,
            os.waitstatus_to_exitcode(status))


def timed_report(db, argv=("report", "-q", "-o", "/dev/null")):
    """`gputrace ARGV db` (report by default), its standard output
    discarded: as timed_gputrace."""
    return timed_gputrace(list(argv) + [db], quiet=True)


def ranks(args, results):
    """`gputrace report` merging --rank-summaries synthetic rank summaries
    (bench/rank_summaries.py, --rank-steps collectives each): time, peak
    resident memory, and the size of one summary."""
    with tempfile.TemporaryDirectory(prefix="gputrace-bench-") as d:
        paths = rank_summaries.make(d, args.rank_summaries, args.rank_steps)
        size = os.path.getsize(paths[0])
        secs, _, rss, status = timed_gputrace(["report", "-o", "/dev/null"] + paths)
    print("ranks: gputrace report merging %d rank summaries of %d collectives each (%.0f KiB each)"
          % (args.rank_summaries, args.rank_steps, size / 1024))
    print("  time %.2f s, peak resident %.0f MiB, status %d" % (secs, rss, status))
    results["ranks"] = (args.rank_summaries, args.rank_steps, secs, rss, size)


def rank_traces(args, results):
    """`gputrace report -j 2` on --rank-traces copies of one synthetic trace
    of --rank-trace-events calls (bench/big_trace.py; each copy a rank of
    its own: its meta pid and rank changed; one kernel name of the 100 made
    NCCL's, so 1% of launches are collectives), against `report` on one of
    them, in the same run: the ratio of wall times and of CPU times."""
    with tempfile.TemporaryDirectory(prefix="gputrace-bench-") as d:
        first = os.path.join(d, "rank-0.db")
        big_trace.make(first, args.rank_trace_events)
        db = sqlite3.connect(first)
        db.execute("UPDATE strings SET value = 'ncclDevKernel_AllReduce_Sum_f32_RING_LL' WHERE value = 'kernel_100'")
        db.commit()
        db.close()
        paths = [first]
        for r in range(1, args.rank_traces):
            p = os.path.join(d, "rank-%d.db" % r)
            shutil.copyfile(first, p)
            paths.append(p)
        for r, p in enumerate(paths):
            db = sqlite3.connect(p)
            db.execute("UPDATE meta SET value = ? WHERE key = 'pid'", (str(5000 + r),))
            db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('rank', ?)", (str(r),))
            db.commit()
            db.close()
        size = sum(os.path.getsize(p) for p in paths)

        def timed(argv):
            return timed_gputrace(["report", "-q", "-o", "/dev/null"] + argv)
        ones = sorted(timed([first]) for _ in range(3))
        one = ones[1]
        one_cpu = statistics.median(x[1] for x in ones)
        many = timed(["-j", "2"] + paths)
        load = os.getloadavg()[0]
    ratio = many[0] / one[0] if one[0] else 0
    cpu_ratio = many[1] / one_cpu if one_cpu else 0
    print("rank-traces: report of %d traces of %d calls (%.1f GB in all), -j 2: %.1f s wall, %.1f s CPU "
          "(%.0f MiB, status %d); one trace (median of 3): %.2f s wall, %.2f s CPU; ratio %.1fx wall, %.1fx CPU "
          "(load average %.1f)" % (args.rank_traces, args.rank_trace_events, size / 1e9, many[0], many[1], many[2],
                                   many[3], one[0], one_cpu, ratio, cpu_ratio, load))
    results["rank_traces"] = (args.rank_traces, args.rank_trace_events, ratio, cpu_ratio)


def analyzer(args, results):
    """`gputrace report` (text, then HTML) and `gputrace info` on the
    synthetic trace, one after the other: times, peak resident memory, the
    HTML page's size, and HTML's time over text's."""
    with tempfile.TemporaryDirectory(prefix="gputrace-bench-") as d:
        db = os.path.join(d, "big.db")
        t0 = time.monotonic()
        big_trace.make(db, args.analyzer_events)
        made = time.monotonic() - t0
        size = os.path.getsize(db)
        secs, cpu, rss, status = timed_report(db)
        page = os.path.join(d, "report.html")
        hsecs, hcpu, hrss, hstatus = timed_report(db, ("report", "-q", "--format", "html", "-o", page))
        hsize = os.path.getsize(page) if os.path.exists(page) else 0
        isecs, icpu, irss, istatus = timed_report(db, ("info",))
    print("analyzer: gputrace report on a synthetic %d-event trace (bench/big_trace.py, %.0f MB, made in %.0f s)"
          % (args.analyzer_events, size / 1e6, made))
    print("  text: time %.1f s (CPU %.1f s), peak resident %.0f MiB, status %d" % (secs, cpu, rss, status))
    print("  html: time %.1f s (CPU %.1f s), peak resident %.0f MiB, status %d, page %.2f MB; %.2fx text's CPU time"
          % (hsecs, hcpu, hrss, hstatus, hsize / 1e6, hcpu / cpu if cpu else 0))
    print("  info: time %.1f s (CPU %.1f s), peak resident %.0f MiB, status %d" % (isecs, icpu, irss, istatus))
    results["analyzer"] = (args.analyzer_events, secs, rss)
    results["analyzer_html"] = (args.analyzer_events, hsecs, hrss, hsize, hcpu / cpu if cpu else 0)
    results["analyzer_info"] = (args.analyzer_events, isecs, irss)


def export(args, results):
    with tempfile.TemporaryDirectory(prefix="gputrace-bench-") as d:
        db = os.path.join(d, "big.db")
        big_trace.make(db, args.export_events)
        print("export: gputrace export of a synthetic %d-call trace (bench/big_trace.py, %.0f MB)"
              % (args.export_events, os.path.getsize(db) / 1e6))
        for name in ("t.pftrace", "t.pftrace.gz"):
            out = os.path.join(d, name)
            secs, _, rss, status = timed_gputrace(["export", "-q", "-o", out, db])
            size = os.path.getsize(out) if os.path.exists(out) else 0
            print("  %-13s time %.1f s, %.0f MB, peak resident %.0f MiB, status %d"
                  % (name, secs, size / 1e6, rss, status))
            results["export" + ("_gz" if name.endswith(".gz") else "")] = (args.export_events, secs, size, rss)
            os.unlink(out)

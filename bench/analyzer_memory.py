#!/usr/bin/env python3
"""The analyzer's peak resident memory and wall time against the trace's
length: `report`, `diff`, `audit`, `summarize` and `export` on synthetic
traces of N calls each (bench/big_trace.py), so docs/performance.md can
show whether memory stays flat as N grows (issue 34: at most 512 MiB on
100M calls, time linear in calls).

Usage: python3 bench/analyzer_memory.py [--calls 1000000,10000000]
           [--gputrace PATH] [--dir DIR] [--keep] [--only report,diff,...]

Each subcommand runs in a child process; its peak resident memory is the
child's ru_maxrss from wait4 (the kernel's count, SQLite's cache and
mappings included), its time the wall clock around it. Traces are made
in --dir (default: a temporary folder; a trace already there of the
right name is reused with --keep)."""
import argparse
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import big_trace  # noqa: E402

GPUTRACE = os.path.join(HERE, "..", "build", "gputrace")


def run(argv):
    """(wall seconds, CPU seconds, peak resident MiB, exit status) of argv."""
    t0 = time.monotonic()
    pid = os.fork()
    if pid == 0:
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, 1)
        os.execv(argv[0], argv)
    _, status, usage = os.wait4(pid, 0)
    return (time.monotonic() - t0, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024,
            os.waitstatus_to_exitcode(status))


def commands(gt, db, other, out):
    return {
        "report": [gt, "report", "-q", db],
        "report-json": [gt, "report", "-q", "--format", "json", db],
        "diff": [gt, "diff", db, other],
        "audit": [gt, "audit", "--max-idle-pct", "99", db],
        "summarize": [gt, "summarize", "-o", os.path.join(out, "s.summary.json"), db],
        "export": [gt, "export", "-q", "-o", os.path.join(out, "t.pftrace"), db],
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--calls", default="1000000,10000000")
    ap.add_argument("--gputrace", default=GPUTRACE)
    ap.add_argument("--dir")
    ap.add_argument("--keep", action="store_true", help="reuse traces already in --dir, leave them there")
    ap.add_argument("--only", help="comma-separated subcommands")
    args = ap.parse_args()
    tmp = None
    d = args.dir
    if not d:
        tmp = tempfile.TemporaryDirectory(prefix="gputrace-bench-")
        d = tmp.name
    os.makedirs(d, exist_ok=True)
    only = args.only.split(",") if args.only else None
    print("%-12s %12s %9s %9s %12s %7s" % ("command", "calls", "wall s", "CPU s", "peak MiB", "status"))
    for n in (int(x) for x in args.calls.split(",")):
        db = os.path.join(d, "big-%d.db" % n)
        if not (args.keep and os.path.exists(db)):
            big_trace.make(db, n)
        # diff compares the trace with itself, under another name
        other = os.path.join(d, "big-%d-b.db" % n)
        if not os.path.exists(other):
            os.link(db, other)
        for name, argv in commands(args.gputrace, db, other, d).items():
            if only and name not in only:
                continue
            wall, cpu, rss, status = run(argv)
            print("%-12s %12d %9.1f %9.1f %12.0f %7d" % (name, n, wall, cpu, rss, status), flush=True)
        if not args.keep:
            os.unlink(db)
            os.unlink(other)
    if tmp:
        tmp.cleanup()


if __name__ == "__main__":
    main()

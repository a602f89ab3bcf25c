#!/usr/bin/env python3
"""Compares the ranks of a job on a Dask cluster (docs/ranks.md): each
rank's trace is summarized by a worker on a node that holds it, so only
the summaries travel (well under 1 MiB each), and `gputrace report` merges
them here. Needs dask.distributed here and on the workers, gputrace on
the workers' PATH and here, and trace file names unique in the job (%r in
GPUTRACE_OUTPUT makes them so).

usage: ranks_dask.py SCHEDULER 'TRACE-GLOB' OUTDIR [REPORT OPTION...]
  e.g. ranks_dask.py tcp://scheduler:8786 '/scratch/job/trace-*.db' summaries --format json
The summaries stay in OUTDIR; the exit status is report's, 1 if a trace could
not be summarized."""
import glob
import os
import subprocess
import sys

from dask.distributed import Client


def traces_here(pattern):
    """Run on every worker: the traces its node holds."""
    return sorted(glob.glob(pattern))


def summarize(trace):
    """Run on the worker the trace went to: its summary (JSON text)."""
    p = subprocess.run(["gputrace", "summarize", trace, "-o", "-"], capture_output=True, text=True)
    if p.returncode != 0:  # gputrace's message names the trace
        raise RuntimeError(p.stderr.strip() or "gputrace summarize %s: exit status %d" % (trace, p.returncode))
    return p.stdout


def summarize_where_they_lie(client, pattern):
    """{trace file name: summary}: each trace summarized once, by the least
    loaded of the workers that see it (several workers share a node, a
    shared file system shows every trace to every worker)."""
    seen_by = {}
    for worker, traces in client.run(traces_here, pattern).items():
        for trace in traces:
            seen_by.setdefault(os.path.basename(trace), {})[worker] = trace
    load, futures = {}, {}
    for name, at in sorted(seen_by.items()):
        worker = min(sorted(at), key=lambda w: load.get(w, 0))
        load[worker] = load.get(worker, 0) + 1
        futures[name] = client.submit(summarize, at[worker], workers=[worker], allow_other_workers=False,
                                      pure=False)
    print("ranks_dask: summarizing %d traces on %d workers" % (len(futures), len(load)), file=sys.stderr)
    return dict(zip(futures, client.gather(list(futures.values()))))


def main(argv):
    if len(argv) < 3:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    scheduler, pattern, outdir, report_options = argv[0], argv[1], argv[2], argv[3:]
    with Client(scheduler) as client:
        try:
            summaries = summarize_where_they_lie(client, pattern)
        except RuntimeError as e:
            print("ranks_dask: %s" % e, file=sys.stderr)
            return 1
    if not summaries:
        print("ranks_dask: no worker sees a trace matching %s" % pattern, file=sys.stderr)
        return 1
    os.makedirs(outdir, exist_ok=True)
    paths = []
    for name, text in sorted(summaries.items()):
        paths.append(os.path.join(outdir, os.path.splitext(name)[0] + ".summary.json"))
        with open(paths[-1], "w") as f:
            f.write(text)
    return subprocess.run(["gputrace", "report", *report_options, *paths]).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

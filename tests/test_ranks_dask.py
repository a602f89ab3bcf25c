"""The distributed reduce of docs/ranks.md, run for real: the Dask recipe
(scripts/ranks_dask.py, the very file the docs show: test_docs checks
that) over eight simulated ranks' traces (tests/ranklib.py) on a
dask.distributed LocalCluster of two worker processes (tests/dask_cluster.py,
both from the test venv, build/pyenv). Its answer must be `gputrace report`'s
over the traces, figure by figure, and name the rank the test stalled; the
figures themselves are recomputed from the traces' views with SQL
(test_ranks.check_section)."""
import json
import os
import signal
import subprocess

import gtlib
import ranklib
import test_ranks
from gtlib import BUILD, GPUTRACE, ROOT, assert_eq

RECIPE = os.path.join(ROOT, "scripts", "ranks_dask.py")
WORLD, STEPS, STALL_RANK, STALL_STEP = 8, 8, 5, 3


def differences(got, want, where=""):
    """Every path at which two JSON documents differ, to name the figures."""
    if isinstance(want, dict) and isinstance(got, dict):
        out = ["%s.%s: missing" % (where, k) for k in want if k not in got]
        out += ["%s.%s: extra" % (where, k) for k in got if k not in want]
        for k in want:
            if k in got:
                out += differences(got[k], want[k], "%s.%s" % (where, k))
        return out
    if isinstance(want, list) and isinstance(got, list) and len(got) == len(want):
        return [d for i, (g, w) in enumerate(zip(got, want)) for d in differences(g, w, "%s[%d]" % (where, i))]
    return [] if got == want else ["%s: expected %r, got %r" % (where, want, got)]


class Cluster:
    """tests/dask_cluster.py in a session of its own: closed through its
    standard input, killed with its workers if it does not go down."""

    def __init__(self, env):
        self.dir = gtlib.tmpdir("gputrace-dask-")
        self.proc = subprocess.Popen([gtlib.pyenv_python(), os.path.join(ROOT, "tests", "dask_cluster.py"), self.dir],
                                     env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, start_new_session=True)
        self.address, self.pids, self.ended = None, [], None

    def wait_up(self):
        line = self.proc.stdout.readline()
        assert line, "the cluster did not start: %s" % self.close()[1]
        info = json.loads(line)
        self.address, self.pids = info["address"], info["pids"]

    def close(self):
        """(what it printed after the address, its stderr); kills it if it is not down in 60 s."""
        if self.ended:
            return self.ended
        try:
            out, err = self.proc.communicate(input="", timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            out, err = self.proc.communicate()
            err += "\n(killed: it did not close in 60 s)"
        self.ended = (out, err)
        return out, err


def test_dask_recipe_answers_as_report_over_the_traces():
    env = gtlib.base_env({"PATH": BUILD + os.pathsep + os.environ.get("PATH", ""), "LD_LIBRARY_PATH": None})
    cluster = Cluster(env)  # its workers start while the job runs
    try:
        outdir, res = ranklib.run_job(WORLD, STEPS, stall=(STALL_RANK, STALL_STEP, test_ranks.STALL_MS))
        for r, rc, out, err in res:
            assert rc == 0, err
        dbs = [ranklib.trace(outdir, r) for r in range(WORLD)]
        cluster.wait_up()
        sums = os.path.join(outdir, "summaries")
        p = subprocess.run([gtlib.pyenv_python(), RECIPE, cluster.address, os.path.join(outdir, "trace-*.db"), sums,
                            "--format", "json", "--top", "0"], env=env, capture_output=True, text=True, timeout=120)
        # a trace a worker cannot summarize: the recipe says which, and fails
        bad = os.path.join(outdir, "bad")
        os.mkdir(bad)
        with open(os.path.join(bad, "trace-9.db"), "w") as f:
            f.write("not a trace\n")
        p_bad = subprocess.run([gtlib.pyenv_python(), RECIPE, cluster.address, os.path.join(bad, "*.db"), bad],
                               env=env, capture_output=True, text=True, timeout=120)
    finally:
        out, err = cluster.close()
    assert_eq(p.returncode, 0, "the recipe's exit status (stderr: %s)" % p.stderr)
    assert "ranks_dask: summarizing %d traces on 2 workers" % WORLD in p.stderr, p.stderr
    # the cluster went down cleanly, its worker processes with it
    assert_eq((cluster.proc.returncode, out), (0, "closed\n"), "the cluster's end (stderr: %s)" % err)
    closing = err.split("closing\n", 1)[-1]
    assert "Traceback" not in closing and "leaked" not in closing, "the cluster's end: %s" % err
    for pid in cluster.pids:
        assert not os.path.exists("/proc/%d" % pid) or open("/proc/%d/stat" % pid).read().split(") ")[1][0] == "Z", \
            "worker %d still runs" % pid
    assert p_bad.returncode == 1 and "ranks_dask: gputrace: %s/trace-9.db: not an SQLite database" % bad in p_bad.stderr, \
        (p_bad.returncode, p_bad.stderr)
    got = json.loads(p.stdout)
    # the map step: each summary is the one gputrace summarize writes next to its trace
    assert_eq(sorted(os.listdir(sums)), ["trace-%d.summary.json" % r for r in range(WORLD)], "summaries")
    for r, db in enumerate(dbs):
        local = subprocess.run([GPUTRACE, "summarize", db, "-o", "-"], capture_output=True, text=True, check=True)
        with open(os.path.join(sums, "trace-%d.summary.json" % r)) as f:
            assert f.read() == local.stdout, "rank %d's summary is not the one gputrace summarize writes" % r
    # the reduce: report over the traces, figure by figure
    want = test_ranks.report_json(dbs)
    assert_eq(set(got), {"report_version", "ranks"}, "sections")
    assert_eq(got["report_version"], want["report_version"], "report_version")
    diff = differences(got["ranks"], want["ranks"], "ranks")
    assert not diff, "the recipe's answer differs from report over the traces:\n" + "\n".join(diff[:40])
    # and the answer is right: recomputed from the views, naming the stalled rank
    test_ranks.check_section(got["ranks"], dbs)
    assert_eq(got["ranks"]["worst"], str(STALL_RANK), "the straggler")
    assert_eq([row["rank"] for row in got["ranks"]["rows"]], [str(r) for r in range(WORLD)], "ranks")

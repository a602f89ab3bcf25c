"""Runs a simulated multi-rank job: WORLD processes of
build/tests/progs/rank_work on this machine, each under the shim with its
own trace (GPUTRACE_OUTPUT's %r), meeting in the simulated GPU's
collectives (tests/fakecuda/README.md, Collectives)."""
import os
import subprocess
import uuid

import gtlib

COLL = "ncclDevKernel_AllReduce_Sum_f32_RING_LL"
FWD_NS = 3000000     # fwd_kernel
DATA_NS = 1000000    # the all-reduce's own (data) time


def run_job(world, steps, stall=(-1, -1, 0), crash=(-1, -1), traced=True, env=None, timeout=120, ranks=None, meet=True):
    """Starts ranks (default: all of world) at once and waits for them.
    stall: (rank, step, ms) held in load_batch; crash: (rank, step) that
    aborts. meet=False: ranks do not meet on the host first (a rank
    missing from `ranks` would hold the others 10 s). Returns (outdir, [CompletedProcess-like (rank, rc, stdout, stderr)])."""
    outdir = gtlib.tmpdir("gputrace-ranks-")
    meet_dir = os.path.join(outdir, "meet")
    os.mkdir(meet_dir)
    job = "gt-test-%s" % uuid.uuid4().hex[:12]
    procs = []
    for r in (ranks if ranks is not None else range(world)):
        e = gtlib.base_env({"FAKECUDA_JOB": job, "FAKECUDA_WORLD_SIZE": str(world), "RANK": str(r),
                            "RANK_WORK_DIR": meet_dir,
                            "FAKECUDA_KERNEL_NS": "%d,%s=%d" % (FWD_NS, COLL, DATA_NS)})
        if traced:
            e["LD_PRELOAD"] = gtlib.SHIM
            e["NVTX_INJECTION64_PATH"] = gtlib.SHIM
            e["GPUTRACE_OUTPUT"] = os.path.join(outdir, "trace-%r.db")
        if not meet:
            del e["RANK_WORK_DIR"]
        if env:
            e.update(env)
        argv = [gtlib.prog("rank_work"), str(steps), str(stall[0]), str(stall[1]), str(stall[2]),
                str(crash[0]), str(crash[1])]
        procs.append((r, subprocess.Popen(argv, env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                          text=True)))
    results = []
    for r, p in procs:
        out, err = p.communicate(timeout=timeout)
        results.append((r, p.returncode, out, err))
    shm = "/dev/shm/fakecuda-" + job
    if os.path.exists(shm):
        os.unlink(shm)  # a crashed rank leaves the job's segment behind
    return outdir, results


def trace(outdir, r):
    return os.path.join(outdir, "trace-%d.db" % r)


def collectives(db):
    """(start_ns, end_ns) of each all-reduce, in order (plain SQL)."""
    return gtlib.query(db, "SELECT start_ns, end_ns FROM kernels WHERE name = ? ORDER BY start_ns", COLL)

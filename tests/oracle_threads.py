"""The oracle's part for the threads that ran while a gap's launching
thread waited (docs/report.md, "Host during the gap"; issue 36), imported
by oracle.py. From the public view host_samples, as tests/oracle.py reads
it (_read_samples: [(tid, ns, text, class)]):

- the launching thread waited when the gap's cause is "host" (outside
  CUDA) and more than half of its samples in the gap are "waiting on a
  lock" (blocked in futex) or "sleeping";
- the other threads' running samples in the gap (any other tid, state
  running, start <= ns <= end) each count once, but for CUDA's own
  threads: a thread any of whose samples has a native stack whose
  outermost frame that is in libcuda.so*, libcudart.so*, libcupti.so* or
  libnvidia-* (wherever installed), or else outside the system's
  libraries, is of the former kind (driver_tids); a thread's share is its
  count over theirs; its frame, the name most of its samples show
  without " (running)" (ties: the first in byte order); threads by count,
  most first (ties: lower tid), the first three listed;
- in "GPU idle by host stack" such a gap's waiting part goes to those
  samples, as far as they ran (gap_weights), each named FRAME + " " +
  WAITED."""
from collections import defaultdict

WAITED = "(running, launcher waiting)"
WAIT_CLASSES = ("waiting on a lock", "sleeping")
RUN_CLASSES = ("running Python", "running native code")
OTHERS = 3


def waited(smp, cause):
    """smp: the launching thread's [(text, class)] in a gap of that cause."""
    return cause == "host" and bool(smp) and 2 * sum(1 for _, c in smp if c in WAIT_CLASSES) > len(smp)


SYSTEM = ("/lib/", "/lib64/", "/usr/lib/", "/usr/lib64/")
CUDA_LIBS = ("libcuda.so", "libcudart.so", "libcupti.so", "libnvidia-")


def driver_tids(con):
    """The threads of CUDA's own (their stacks start in its libraries)."""
    first = {}
    for sid, mod in con.execute("SELECT stack_id, module FROM stack_frames ORDER BY stack_id, depth DESC"):
        if sid in first or not mod:
            continue
        if mod.rsplit("/", 1)[-1].startswith(CUDA_LIBS):
            first[sid] = True  # wherever installed: the driver lies under /usr/lib
        elif not mod.startswith(SYSTEM):
            first[sid] = False
    bad = {sid for sid, d in first.items() if d}
    out = {t for t, sid in con.execute("SELECT DISTINCT tid, stack_id FROM host_samples WHERE stack_id IS NOT NULL")
           if sid in bad}
    return out


def others(samples, tid, start, end, skip=()):
    """[(tid, frame)] of the other threads' running samples in [start, end]
    (threads in skip left out)."""
    k = len(" (running)")
    return [(t, text[:-k]) for t, ns, text, cls in samples
            if t != tid and t not in skip and start <= ns <= end and cls in RUN_CLASSES]


def gap_weights(samples, tid, smp, start, end, skip=(), cause="host"):
    """[(name, weight)] of every sample a gap's time is shared among in
    "GPU idle by host stack", and the denominator: each name gets the gap's
    length times its weights' sum over it, rounded down. 1 over m for each
    of the launching thread's m samples; where it waited (w samples) and
    the other threads ran (k samples), moved = min(k, w): its waiting
    samples weigh k*(w - moved), its others w*k, each of the k running
    samples w*moved, over m*w*k."""
    m = len(smp)
    w = sum(1 for _, c in smp if c in WAIT_CLASSES)
    o = others(samples, tid, start, end, skip) if waited(smp, cause) else []
    k = len(o)
    if not k:
        return [(t, 1) for t, _ in smp], m
    moved = min(k, w)
    out = [(t, k * (w - moved) if c in WAIT_CLASSES else w * k) for t, c in smp]
    out += [("%s %s" % (f, WAITED), w * moved) for _, f in o]
    return out, m * w * k


def _rows(samples, tid, start, end, skip):
    """Every other thread that ran: [{tid, samples, pct, frame}], most first."""
    o = others(samples, tid, start, end, skip)
    by = defaultdict(lambda: defaultdict(int))
    for t, f in o:
        by[t][f] += 1
    rows = []
    for t, frames in by.items():
        n = sum(frames.values())
        best = sorted(frames.items(), key=lambda x: (-x[1], x[0].encode()))[0][0]
        rows.append({"tid": t, "samples": n, "pct": 100.0 * n / len(o), "frame": best})
    rows.sort(key=lambda r: (-r["samples"], r["tid"]))
    return len(o), rows


def others_ok(got, samples, smp, start, end, skip=(), cause="host"):
    """Whether a gap's "host" JSON object (its launching thread got["tid"],
    whose samples in the gap are smp) says what the definition gives: pct
    to 5e-7; among threads tied at the last listed count, any."""
    w = waited(smp, cause)
    n, rows = _rows(samples, got.get("tid"), start, end, skip) if w else (0, [])
    if got.get("waited") is not w or got.get("others_samples") != n:
        return False
    gl = got.get("others")
    if not isinstance(gl, list) or len(gl) != min(OTHERS, len(rows)):
        return False
    by_tid = {r["tid"]: r for r in rows}
    for g in gl:
        want = by_tid.get(g.get("tid")) if isinstance(g, dict) else None
        if want is None or set(g) != {"tid", "samples", "pct", "frame"}:
            return False
        if g["samples"] != want["samples"] or abs(g["pct"] - want["pct"]) > 5e-7 or g["frame"] != want["frame"]:
            return False
    return [g["samples"] for g in gl] == [r["samples"] for r in rows[:len(gl)]]

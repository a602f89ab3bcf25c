#!/usr/bin/env python3
"""Fuzzes the analyzer's trace reader: mutated traces (flipped bytes,
overwritten and zeroed pages, truncation, damaged SQLite headers, rewritten
rows) go through two reading commands each (drawn from info, report,
audit and export, in every format) of the ASan+UBSan build of gputrace
(build/asan/gputrace). Each run must end with status 0, 1 or 2, within its
time limit, with no sanitizer report and no death by signal; status 2 must
come with a 'gputrace: ' line on stderr.

The suite runs it briefly (tests/test_reliability.py); by hand, longer:
    python3 tests/fuzz_trace.py --iterations 20000 --seed 7
A failing input is kept under build/fuzz/ and named on stdout."""
import argparse
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import make_trace as mt  # noqa: E402

ASAN_GPUTRACE = os.path.join(ROOT, "build", "asan", "gputrace")
COMMANDS = [
    ["info"], ["info", "--format", "json"], ["report"], ["report", "--format", "json", "--min-gap", "0"],
    ["audit", "--max-idle-pct", "50", "--max-pageable-h2d-bytes", "1", "--max-launch-bound-pct", "10",
     "--max-sync-pct", "50"],
    ["export", "--format", "perfetto", "-o", "/dev/null"], ["report", "--format", "html", "-o", "/dev/null"],
    ["export", "--format", "chrome-json", "-o", "/dev/null"], ["export", "--from", "1us", "--to", "1s", "-o", "/dev/null"],
]


def seeds(d):
    """Small traces with something in every table the analyses read."""
    stack = [("/bin/app", "load"), ("/bin/app", "main")]
    py = [("/home/u/train.py", "step", 12), ("/home/u/train.py", "<module>", 40)]
    calls = []
    for i in range(6):
        calls.append(mt.launch("k%d" % (i % 2), stack=stack, pystack=py if i % 2 else None, stream=i % 3))
        calls.append(mt.memcpy("HtoD", 4096 << i, host_mem="pageable" if i % 2 else "pinned", is_async=i % 2 == 0,
                               stack=stack))
        calls.append(mt.memset(1024))
        calls.append(mt.sync("device" if i % 2 else "stream", stack=stack))
        calls.append(mt.alloc(1 << 20))
    calls.append(mt.graph_launch(stack=stack))
    calls.append(mt.launch("bad", result=700))
    out = [mt.make_trace(os.path.join(d, "seed-full.db"), calls=calls, threads={1000: "main"})]
    out.append(mt.make_trace(os.path.join(d, "seed-small.db"), calls=[mt.launch("k"), mt.sync("device")]))
    out.append(mt.make_trace(os.path.join(d, "seed-v1.db"), calls=[dict(c, pystack=None) for c in calls[:10]],
                             schema=os.path.join(HERE, "data", "gputrace-v1.sql")))
    out.append(mt.make_trace(os.path.join(d, "seed-v2.db"), calls=calls[:10],
                             schema=os.path.join(HERE, "data", "gputrace-v2.sql")))
    out.append(mt.make_trace(os.path.join(d, "seed-v3.db"), calls=calls[:10],
                             schema=os.path.join(HERE, "data", "gputrace-v3.sql")))
    out.append(mt.make_trace(os.path.join(d, "seed-v4.db"), calls=calls, threads={1000: "main"},
                             schema=os.path.join(HERE, "data", "gputrace-v4.sql")))
    out.append(mt.make_trace(os.path.join(d, "seed-gpu-ops.db"), calls=calls, threads={1000: "main"}))
    # GPU-timed traces: the records in their calls' rows (version 4 and
    # later), or in gpu_ops linked to the calls
    for path, fold in ((out[0], True), (out[-2], True), (out[-1], False)):
        db = sqlite3.connect(path)
        for (cid, cat) in db.execute("SELECT c.id, n.category FROM calls c JOIN api_names n ON n.id = c.api_id")\
                .fetchall():
            kind = {"launch": "kernel", "memcpy": "memcpy", "memset": "memset"}.get(cat, "kernel")
            mt.add_gpu_op(db, kind, cid, mt.START_NS + cid * 1000 + 600, mt.START_NS + cid * 1000 + 900,
                          stream=7, nbytes=0, fold=fold)
        # the graph launch's other work: a copy, a memset, a named kernel
        gid = len(calls) - 1
        for i, kind in enumerate(("memcpy", "memset", "kernel")):
            mt.add_gpu_op(db, kind, gid, mt.START_NS + gid * 1000 + i * 100, mt.START_NS + gid * 1000 + i * 100 + 50,
                          nbytes=4096, src_kind=2, dst_kind=3, name="graph_k", copy_kind="HtoD", fold=False)
        db.execute("UPDATE meta SET value = 'cupti' WHERE key = 'gpu_timing'")
        db.commit()
        db.close()
    return out


def _rows_mutation(rng, path):
    """Rewrites values through SQLite itself: well-formed files with
    absurd content (negative sizes, NULLs, huge ids, wrong types)."""
    weird = [None, -1, 0, 2 ** 63 - 1, -2 ** 63, 1e308, "", "x" * 5000, b"\x00\xff", "NaN"]
    db = sqlite3.connect(path)
    try:
        tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        for _ in range(rng.randint(1, 4)):
            t = rng.choice(tables)
            cols = [r[1] for r in db.execute("PRAGMA table_info(%s)" % t)]
            if not cols:
                continue
            c = rng.choice(cols)
            try:
                db.execute("UPDATE %s SET %s = ? WHERE rowid IN (SELECT rowid FROM %s ORDER BY random() LIMIT ?)"
                           % (t, c, t), (rng.choice(weird), rng.randint(1, 5)))
            except sqlite3.DatabaseError:
                pass
        if rng.random() < 0.2:
            t = rng.choice(tables)
            try:
                db.execute("DROP TABLE %s" % t)
            except sqlite3.DatabaseError:
                pass
        db.commit()
    except sqlite3.DatabaseError:
        pass
    finally:
        db.close()


def mutate(rng, src, dst):
    shutil.copyfile(src, dst)
    kind = rng.choice(["flip", "flip", "page", "zero", "truncate", "header", "rows", "rows"])
    if kind == "rows":
        _rows_mutation(rng, dst)
        return kind
    with open(dst, "r+b") as f:
        data = bytearray(f.read())
        n = len(data)
        if kind == "flip":
            for _ in range(rng.randint(1, 32)):
                data[rng.randrange(n)] ^= 1 << rng.randrange(8)
        elif kind == "page":
            at = rng.randrange(0, n, 512)
            data[at:at + 512] = bytes(rng.randrange(256) for _ in range(min(512, n - at)))
        elif kind == "zero":
            at = rng.randrange(0, n, 4096)
            data[at:at + 4096] = bytes(min(4096, n - at))
        elif kind == "truncate":
            del data[rng.randrange(n):]
        elif kind == "header":
            for _ in range(rng.randint(1, 4)):
                data[rng.randrange(16, 100)] = rng.randrange(256)
        f.seek(0)
        f.truncate()
        f.write(data)
    return kind


def check(path, timeout, commands=COMMANDS):
    """None if every command behaved, else what went wrong."""
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:exitcode=99",
               UBSAN_OPTIONS="halt_on_error=1:exitcode=99:print_stacktrace=1")
    for cmd in commands:
        try:
            r = subprocess.run([ASAN_GPUTRACE] + cmd + [path], capture_output=True, text=True, timeout=timeout,
                               env=env, errors="replace")
        except subprocess.TimeoutExpired:
            return "%s: no answer in %d s" % (" ".join(cmd), timeout)
        if r.returncode not in (0, 1, 2):
            return "%s: status %d\n%s" % (" ".join(cmd), r.returncode, r.stderr[-3000:])
        if "Sanitizer" in r.stderr or "runtime error" in r.stderr:
            return "%s: sanitizer report\n%s" % (" ".join(cmd), r.stderr[-3000:])
        if r.returncode == 2 and not r.stderr.startswith("gputrace: "):
            return "%s: status 2 without a message: %r" % (" ".join(cmd), r.stderr[:300])
    return None


def fuzz(iterations, seed, timeout=20, keep_dir=None):
    """Returns (iterations run, failures as [(kept file, reason)])."""
    if not os.path.exists(ASAN_GPUTRACE):
        sys.exit("fuzz_trace: build it first (make tests-build)")
    rng = random.Random(seed)
    keep_dir = keep_dir or os.path.join(ROOT, "build", "fuzz")
    failures = []
    with tempfile.TemporaryDirectory(prefix="gputrace-fuzz-") as d:
        pool = seeds(d)
        for bad in pool:
            why = check(bad, timeout)
            assert why is None, "a seed itself fails: %s" % why
        for i in range(iterations):
            src = rng.choice(pool)
            dst = os.path.join(d, "m.db")
            kind = mutate(rng, src, dst)
            why = check(dst, timeout, rng.sample(COMMANDS, 2))
            if why:
                os.makedirs(keep_dir, exist_ok=True)
                kept = os.path.join(keep_dir, "fail-%d-%d-%s.db" % (seed, i, kind))
                shutil.copyfile(dst, kept)
                failures.append((kept, why))
    return iterations, failures


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--iterations", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    n, failures = fuzz(args.iterations, args.seed)
    for kept, why in failures:
        print("FAIL %s\n  %s" % (kept, why.replace("\n", "\n  ")))
    print("%d inputs, %d failures" % (n, len(failures)))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()

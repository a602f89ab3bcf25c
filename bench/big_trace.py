"""A synthetic trace of N events in the current schema, written by SQLite
itself (a recursive CTE, no Python loop), for timing the analyzer on
traces far larger than the simulated GPU can record in a bench run.

Shape, per 20 calls on 4 threads: 18 kernel launches (100 kernel names
with 64 grid sizes each, 500 call sites of 8 frames), one async HtoD copy
and one stream sync;
every launch and copy has its GPU record, kept in its call's row as the
writer keeps it, the GPU busy 60% of the time with a 50 us idle gap every
1,000 calls."""
import os
import sqlite3
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SCHEMA = os.path.join(HERE, "..", "schema", "gputrace.sql")
T0 = 1_000_000_000_000


def make(path, n):
    if os.path.exists(path):
        os.unlink(path)
    with open(SCHEMA) as f:
        tables, indexes = f.read().split("-- @indexes")
    db = sqlite3.connect(path)
    db.executescript("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;" + tables)
    span = n * 1000 + (n // 1000) * 50000
    meta = {"tracer": "gputrace", "tracer_version": "0.1.0", "pid": "4242", "ppid": "1", "cmdline": "big",
            "host": "bench", "start_ns": str(T0), "end_ns": str(T0 + span + 10000), "complete": "1",
            "start_time_unix_ns": "1700000000000000000", "dropped_events": "0", "dropped_stacks": "0",
            "stack_depth": "8", "gpu_timing": "cupti", "clock": "CLOCK_MONOTONIC"}
    db.executemany("INSERT INTO meta VALUES (?, ?)", meta.items())
    db.executemany("INSERT INTO api_names VALUES (?, ?, ?, ?)",
                   [(1, "cudaLaunchKernel", "launch", "runtime"), (2, "cudaMemcpyAsync", "memcpy", "runtime"),
                    (3, "cudaStreamSynchronize", "sync", "runtime")])
    db.executemany("INSERT INTO strings VALUES (?, ?, NULL)", [(i, "kernel_%d" % i) for i in range(1, 101)])
    db.executemany("INSERT INTO modules VALUES (?, ?)", [(1, "/usr/bin/app"), (2, "/usr/lib/libtorch.so")])
    db.executemany("INSERT INTO frames (id, ip, module_id, offset, function) VALUES (?, ?, ?, ?, ?)",
                   [(i, 0x400000 + i * 16, 1 + i % 2, i * 16, "fn_%d" % i) for i in range(1, 4001)])
    db.executemany("INSERT INTO stacks VALUES (?, ?, ?)",
                   [(s, d, (s - 1) * 8 + d + 1) for s in range(1, 501) for d in range(8)])
    # 64 grid sizes per kernel: launch configuration 1 + k * 64 + g.
    db.execute("""
        WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 6399)
        INSERT INTO launch_configs SELECT i + 1, 1 + i / 64, 0, 1 + i % 64, 1, 1, 256, 1, 1, 0, 0 FROM n""")
    # call i starts at i us plus 50 us per 1,000 calls before it; GPU work
    # of launch i runs 600 ns from its call's end.
    db.execute("""
        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
        INSERT INTO events(id, tid, api_id, start_ns, dur_ns, result, stream, stack_id, pystack_id, corr,
                           a0, a1, a2, g_start_ns, g_dur_ns, g_stream)
        SELECT i, 1000 + i % 4, CASE i % 20 WHEN 0 THEN 3 WHEN 1 THEN 2 ELSE 1 END,
               ? + i * 1000 + (i / 1000) * 50000, 300 + i % 200, 0, 7, 1 + i % 500, NULL, NULL,
               CASE i % 20 WHEN 0 THEN 2
                           WHEN 1 THEN 64 + (i % 2) * 8 + (1 + i % 2) * 256 + 3 * 4096
                           ELSE 1 + (i % 100) * 64 + i % 64 END,
               CASE i % 20 WHEN 0 THEN 7 WHEN 1 THEN 1048576 END, NULL,
               CASE WHEN i % 20 > 0 THEN 300 + i % 200 + 100 END, CASE WHEN i % 20 > 0 THEN 600 END,
               CASE WHEN i % 20 > 0 THEN 7 * 256 END
        FROM n""", (n, T0))
    db.executemany("INSERT INTO threads VALUES (?, ?)", [(1000 + t, "worker-%d" % t) for t in range(4)])
    db.executescript(indexes)
    db.commit()
    db.close()
    return path


if __name__ == "__main__":
    make(sys.argv[1], int(sys.argv[2]))

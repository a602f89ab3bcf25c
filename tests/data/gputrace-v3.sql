-- gputrace trace schema, version 3 (PRAGMA user_version = 3).
--
-- Storage tables hold integers and ids; names, stacks and frames are stored
-- once. The views at the end are the public, stable surface: query those.
-- docs/schema.md documents every table and view with example queries.

PRAGMA user_version = 3;

-- Key/value facts about the traced process and the recording.
CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT
) WITHOUT ROWID;

-- One row per hooked API entry point (id is stable within a trace only).
CREATE TABLE api_names (
    id       INTEGER PRIMARY KEY,
    name     TEXT NOT NULL,
    category TEXT NOT NULL   -- launch, memcpy, memset, sync, alloc, free, stream, event, graph_launch, other
);

-- Interned strings: kernel names (mangled value, demangled once at write time).
CREATE TABLE strings (
    id        INTEGER PRIMARY KEY,
    value     TEXT NOT NULL,
    demangled TEXT
);

-- Every intercepted call, one row each, host-side times on one
-- CLOCK_MONOTONIC clock. Query it through the views below (calls,
-- launch_args, copy_args, ...): a0..a8 hold each category's arguments,
-- as small integers where the views show names:
--   launch   a0 name_id (strings), a1 device, a2..a4 grid x/y/z,
--            a5..a7 block x/y/z, a8 shared_mem
--   memcpy   a0 kind (0 HtoD, 1 DtoH, 2 DtoD, 3 HtoH, 4 PtoP), a1 device,
--            a2 bytes, a3 host_mem (0 pageable, 1 pinned, 2 managed,
--            3 none, 4 unknown), a4 async
--   memset   a1 device, a2 bytes, a4 async
--   sync     a0 kind (0 device, 1 context, 2 stream, 3 event,
--            4 stream_wait_event), a5 the stream or event waited on
--   alloc, free
--            a0 kind (0 device, 1 pinned, 2 managed, 3 registered, 4 async),
--            a2 bytes, a5 ptr
CREATE TABLE events (
    id         INTEGER PRIMARY KEY,
    tid        INTEGER NOT NULL,
    api_id     INTEGER NOT NULL REFERENCES api_names(id),
    start_ns   INTEGER NOT NULL,
    dur_ns     INTEGER NOT NULL,   -- end_ns - start_ns: fewer bytes than the end time
    result     INTEGER NOT NULL,
    stream     INTEGER,            -- stream handle value; NULL where the call has none
    stack_id   INTEGER,            -- NULL when stacks are off or the stack table was full
    corr       INTEGER,            -- our CUPTI external correlation id; NULL when the call makes no GPU work
    captured   INTEGER NOT NULL DEFAULT 0, -- 1: made during stream capture (a graph node, not an execution)
    pystack_id INTEGER,            -- the Python stack (py_stacks); NULL when no Python ran on the thread
    a0 INTEGER, a1 INTEGER, a2 INTEGER, a3 INTEGER, a4 INTEGER,
    a5 INTEGER, a6 INTEGER, a7 INTEGER, a8 INTEGER
);

-- GPU-side records from CUPTI, on the same clock as the calls. corr is
-- the call's (events.corr), taken from CUPTI's external-correlation record
-- when the record was stored.
CREATE TABLE gpu_ops (
    id             INTEGER PRIMARY KEY,
    kind           INTEGER NOT NULL, -- 0 kernel, 1 memcpy, 2 memset, 3 sync
    corr           INTEGER,          -- events.corr of the call that made it; NULL: not an intercepted call
    correlation_id INTEGER,          -- CUPTI's
    device         INTEGER,
    stream         INTEGER,          -- CUPTI stream id
    start_ns       INTEGER,
    dur_ns         INTEGER,
    name_id        INTEGER REFERENCES strings(id),  -- kernels
    bytes          INTEGER,          -- memcpy, memset
    copy_kind      INTEGER,          -- CUPTI_ActivityMemcpyKind: 1 HtoD, 2 DtoH, 3 HtoA, 4 AtoH, 5 AtoA, 6 AtoD, 7 DtoA, 8 DtoD, 9 HtoH, 10 PtoP
    src_kind       INTEGER,          -- CUPTI_ActivityMemoryKind: 1 pageable, 2 pinned, 3 device, 4 array, 5 managed, 6 device_static, 7 managed_static
    dst_kind       INTEGER,
    sync_type      INTEGER           -- CUPTI_ActivitySynchronizationType: 1 event_synchronize, 2 stream_wait_event, 3 stream_synchronize, 4 context_synchronize
);

-- Time CUPTI itself spent (buffer flushes, instrumentation), per CUPTI.
CREATE TABLE cupti_overhead (
    kind     TEXT,
    start_ns INTEGER,
    end_ns   INTEGER
);

CREATE TABLE threads (
    tid  INTEGER PRIMARY KEY,
    name TEXT
);

CREATE TABLE modules (
    id   INTEGER PRIMARY KEY,
    path TEXT NOT NULL
);

-- One row per unique instruction pointer, symbolized once.
CREATE TABLE frames (
    id        INTEGER PRIMARY KEY,
    ip        INTEGER NOT NULL,
    module_id INTEGER REFERENCES modules(id),
    offset    INTEGER,           -- ip relative to the module's load base
    function  TEXT               -- demangled; NULL when unknown
);

-- Deduplicated stacks: frame at each depth, 0 = innermost (the caller of the CUDA API).
CREATE TABLE stacks (
    stack_id INTEGER NOT NULL,
    depth    INTEGER NOT NULL,
    frame_id INTEGER NOT NULL REFERENCES frames(id),
    PRIMARY KEY (stack_id, depth)
) WITHOUT ROWID;

-- Python: one row per code object (a function, a module body) seen on a
-- stack, its names copied once.
CREATE TABLE py_code (
    id         INTEGER PRIMARY KEY,
    file       TEXT NOT NULL,     -- co_filename
    function   TEXT NOT NULL,     -- co_qualname (3.11 and later), else co_name
    first_line INTEGER NOT NULL   -- co_firstlineno
);

-- One row per position (code object, instruction) seen, its line resolved
-- from the code object's line table.
CREATE TABLE py_frames (
    id      INTEGER PRIMARY KEY,
    code_id INTEGER NOT NULL REFERENCES py_code(id),
    lasti   INTEGER NOT NULL,     -- instruction offset, in 2-byte code units
    line    INTEGER               -- NULL where the instruction has no line
);

-- Deduplicated Python stacks: depth 0 = innermost, the line that made the call.
CREATE TABLE py_stacks (
    pystack_id INTEGER NOT NULL,
    depth      INTEGER NOT NULL,
    frame_id   INTEGER NOT NULL REFERENCES py_frames(id),
    PRIMARY KEY (pystack_id, depth)
) WITHOUT ROWID;

-- ---------------------------------------------------------------------------
-- Public views.

-- The calls and their arguments, as version 2 stored them.
CREATE VIEW calls AS
SELECT id, tid, api_id, start_ns, start_ns + dur_ns AS end_ns, result, stream, stack_id, corr, captured,
       pystack_id
FROM events;

CREATE VIEW launch_args AS
SELECT id AS call_id, a0 AS name_id, a1 AS device, a2 AS grid_x, a3 AS grid_y, a4 AS grid_z,
       a5 AS block_x, a6 AS block_y, a7 AS block_z, a8 AS shared_mem
FROM events WHERE api_id IN (SELECT id FROM api_names WHERE category = 'launch');

CREATE VIEW copy_args AS
SELECT id AS call_id,
       CASE a0 WHEN 0 THEN 'HtoD' WHEN 1 THEN 'DtoH' WHEN 2 THEN 'DtoD' WHEN 3 THEN 'HtoH' WHEN 4 THEN 'PtoP' END AS kind,
       a2 AS bytes,
       CASE a3 WHEN 0 THEN 'pageable' WHEN 1 THEN 'pinned' WHEN 2 THEN 'managed' WHEN 3 THEN 'none'
               WHEN 4 THEN 'unknown' END AS host_mem,
       a4 AS async, a1 AS device
FROM events WHERE api_id IN (SELECT id FROM api_names WHERE category = 'memcpy');

CREATE VIEW memset_args AS
SELECT id AS call_id, a2 AS bytes, a4 AS async, a1 AS device
FROM events WHERE api_id IN (SELECT id FROM api_names WHERE category = 'memset');

CREATE VIEW sync_args AS
SELECT id AS call_id,
       CASE a0 WHEN 0 THEN 'device' WHEN 1 THEN 'context' WHEN 2 THEN 'stream' WHEN 3 THEN 'event'
               WHEN 4 THEN 'stream_wait_event' END AS kind,
       a5 AS target
FROM events WHERE api_id IN (SELECT id FROM api_names WHERE category = 'sync');

CREATE VIEW alloc_args AS
SELECT id AS call_id,
       CASE a0 WHEN 0 THEN 'device' WHEN 1 THEN 'pinned' WHEN 2 THEN 'managed' WHEN 3 THEN 'registered'
               WHEN 4 THEN 'async' END AS kind,
       a5 AS ptr, a2 AS bytes
FROM events WHERE api_id IN (SELECT id FROM api_names WHERE category IN ('alloc', 'free'));

-- CUPTI's records with their kinds spelled out, as version 2 stored them.
CREATE VIEW gpu_records AS
SELECT id, CASE kind WHEN 0 THEN 'kernel' WHEN 1 THEN 'memcpy' WHEN 2 THEN 'memset' WHEN 3 THEN 'sync' END AS kind,
       corr, correlation_id, device, stream, start_ns, start_ns + dur_ns AS end_ns, name_id, bytes,
       CASE copy_kind WHEN 1 THEN 'HtoD' WHEN 2 THEN 'DtoH' WHEN 3 THEN 'HtoA' WHEN 4 THEN 'AtoH'
                      WHEN 5 THEN 'AtoA' WHEN 6 THEN 'AtoD' WHEN 7 THEN 'DtoA' WHEN 8 THEN 'DtoD'
                      WHEN 9 THEN 'HtoH' WHEN 10 THEN 'PtoP' WHEN 0 THEN 'unknown' END AS copy_kind,
       CASE src_kind WHEN 1 THEN 'pageable' WHEN 2 THEN 'pinned' WHEN 3 THEN 'device' WHEN 4 THEN 'array'
                     WHEN 5 THEN 'managed' WHEN 6 THEN 'device_static' WHEN 7 THEN 'managed_static'
                     WHEN 0 THEN 'unknown' END AS src_kind,
       CASE dst_kind WHEN 1 THEN 'pageable' WHEN 2 THEN 'pinned' WHEN 3 THEN 'device' WHEN 4 THEN 'array'
                     WHEN 5 THEN 'managed' WHEN 6 THEN 'device_static' WHEN 7 THEN 'managed_static'
                     WHEN 0 THEN 'unknown' END AS dst_kind,
       CASE sync_type WHEN 1 THEN 'event_synchronize' WHEN 2 THEN 'stream_wait_event'
                      WHEN 3 THEN 'stream_synchronize' WHEN 4 THEN 'context_synchronize'
                      WHEN 0 THEN 'unknown' END AS sync_type
FROM gpu_ops;

CREATE VIEW api_calls AS
SELECT e.id, (SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'pid') AS pid,
       e.tid, n.name, n.category, e.start_ns, e.start_ns + e.dur_ns AS end_ns, e.result, e.stream, e.stack_id,
       e.captured, e.pystack_id
FROM events e JOIN api_names n ON n.id = e.api_id;

-- The GPU record of a call: the first CUPTI record of its kind that
-- carries the call's correlation id (gpu_ops.corr = events.corr).

CREATE VIEW kernels AS
SELECT e.id AS api_call_id, COALESCE(s.demangled, s.value) AS name,
       s.value AS mangled_name, COALESCE(g.device, e.a1) AS device, e.stream,
       COALESCE(g.start_ns, e.start_ns) AS start_ns,
       COALESCE(g.start_ns + g.dur_ns, e.start_ns + e.dur_ns) AS end_ns,
       CASE WHEN g.id IS NULL THEN 'host' ELSE 'gpu' END AS time_source,
       e.start_ns AS api_start_ns, e.start_ns + e.dur_ns AS api_end_ns, g.stream AS gpu_stream,
       e.a2 AS grid_x, e.a3 AS grid_y, e.a4 AS grid_z, e.a5 AS block_x, e.a6 AS block_y, e.a7 AS block_z,
       e.a8 AS shared_mem, e.result, e.captured
FROM events e
LEFT JOIN strings s ON s.id = e.a0
LEFT JOIN gpu_ops g ON g.id = (SELECT g2.id FROM gpu_ops g2 WHERE g2.corr = e.corr AND g2.kind = 0 LIMIT 1)
WHERE e.api_id IN (SELECT id FROM api_names WHERE category = 'launch');

CREATE VIEW memcpys AS
SELECT a.call_id AS api_call_id, a.kind, a.bytes,
       CASE WHEN g.id IS NULL THEN a.host_mem
            WHEN a.kind IN ('HtoD', 'HtoH') AND g.src_kind IN ('pageable', 'pinned', 'managed') THEN g.src_kind
            WHEN a.kind = 'DtoH' AND g.dst_kind IN ('pageable', 'pinned', 'managed') THEN g.dst_kind
            ELSE a.host_mem END AS host_mem,
       a.async, COALESCE(g.device, a.device) AS device, e.stream,
       COALESCE(g.start_ns, e.start_ns) AS start_ns, COALESCE(g.end_ns, e.start_ns + e.dur_ns) AS end_ns,
       CASE WHEN g.id IS NULL THEN 'host' ELSE 'gpu' END AS time_source,
       e.start_ns AS api_start_ns, e.start_ns + e.dur_ns AS api_end_ns, g.stream AS gpu_stream,
       g.src_kind AS gpu_src_kind, g.dst_kind AS gpu_dst_kind, e.result, e.captured
FROM copy_args a JOIN events e ON e.id = a.call_id
LEFT JOIN gpu_records g ON g.id = (SELECT g2.id FROM gpu_ops g2 WHERE g2.corr = e.corr AND g2.kind = 1 LIMIT 1);

CREATE VIEW memsets AS
SELECT e.id AS api_call_id, e.a2 AS bytes, e.a4 AS async, COALESCE(g.device, e.a1) AS device, e.stream,
       COALESCE(g.start_ns, e.start_ns) AS start_ns,
       COALESCE(g.start_ns + g.dur_ns, e.start_ns + e.dur_ns) AS end_ns,
       CASE WHEN g.id IS NULL THEN 'host' ELSE 'gpu' END AS time_source,
       e.start_ns AS api_start_ns, e.start_ns + e.dur_ns AS api_end_ns, g.stream AS gpu_stream, e.result,
       e.captured
FROM events e
LEFT JOIN gpu_ops g ON g.id = (SELECT g2.id FROM gpu_ops g2 WHERE g2.corr = e.corr AND g2.kind = 2 LIMIT 1)
WHERE e.api_id IN (SELECT id FROM api_names WHERE category = 'memset');

CREATE VIEW syncs AS
SELECT a.call_id AS api_call_id, a.kind, e.stream, a.target, e.start_ns, e.start_ns + e.dur_ns AS end_ns,
       e.result
FROM sync_args a JOIN events e ON e.id = a.call_id;

-- One row per GPU interval (kernels, copies, memsets), linked to the call
-- that caused it; linked = 0 marks work whose call was not intercepted.
CREATE VIEW gpu_activity AS
SELECT g.id, g.kind, g.device, g.stream, g.start_ns, g.end_ns,
       (SELECT e.id FROM events e WHERE e.corr = g.corr) AS api_call_id,
       g.correlation_id,
       EXISTS (SELECT 1 FROM events e WHERE e.corr = g.corr) AS linked,
       COALESCE(s.demangled, s.value) AS name, g.bytes, g.copy_kind, g.src_kind, g.dst_kind
FROM gpu_records g LEFT JOIN strings s ON s.id = g.name_id
WHERE g.kind IN ('kernel', 'memcpy', 'memset');

CREATE VIEW allocations AS
SELECT a.call_id AS api_call_id, n.name AS api, a.kind, a.ptr, a.bytes,
       e.start_ns, e.start_ns + e.dur_ns AS end_ns, e.result
FROM alloc_args a JOIN events e ON e.id = a.call_id JOIN api_names n ON n.id = e.api_id;

CREATE VIEW stack_frames AS
SELECT s.stack_id, s.depth, m.path AS module, f.offset, f.function, f.ip
FROM stacks s JOIN frames f ON f.id = s.frame_id
LEFT JOIN modules m ON m.id = f.module_id;

CREATE VIEW py_stack_frames AS
SELECT s.pystack_id, s.depth, c.file, c.function, f.line, c.first_line, f.lasti
FROM py_stacks s JOIN py_frames f ON f.id = s.frame_id JOIN py_code c ON c.id = f.code_id;

-- @indexes
-- Built once, when the recording process ends: maintaining them row by row
-- would cost the writer most of its throughput. A trace whose process died
-- lacks them and is still fully readable, only slower to query.
CREATE INDEX events_start ON events(start_ns);
CREATE INDEX events_pystack ON events(pystack_id) WHERE pystack_id IS NOT NULL;
CREATE INDEX events_corr ON events(corr) WHERE corr IS NOT NULL;
CREATE INDEX frames_ip ON frames(ip);
CREATE INDEX gpu_ops_corr ON gpu_ops(corr) WHERE corr IS NOT NULL;
CREATE INDEX gpu_ops_start ON gpu_ops(start_ns);

-- gputrace trace schema, version 2 (PRAGMA user_version = 2).
--
-- Storage tables hold integers and ids; names, stacks and frames are stored
-- once. The views at the end are the public, stable surface: query those.
-- docs/schema.md documents every table and view with example queries.

PRAGMA user_version = 2;

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

-- Every intercepted call, host-side times on one CLOCK_MONOTONIC clock.
CREATE TABLE calls (
    id       INTEGER PRIMARY KEY,
    tid      INTEGER NOT NULL,
    api_id   INTEGER NOT NULL REFERENCES api_names(id),
    start_ns INTEGER NOT NULL,
    end_ns   INTEGER NOT NULL,
    result   INTEGER NOT NULL,
    stream   INTEGER,            -- stream handle value; NULL where the call has none
    stack_id INTEGER,            -- NULL when stacks are off or the stack table was full
    corr     INTEGER,            -- our CUPTI external correlation id; NULL when the call makes no GPU work
    captured INTEGER NOT NULL DEFAULT 0, -- 1: made during stream capture (a graph node, not an execution)
    pystack_id INTEGER           -- the Python stack (py_stacks); NULL when no Python ran on the thread
);

CREATE TABLE launch_args (
    call_id    INTEGER PRIMARY KEY REFERENCES calls(id),
    name_id    INTEGER REFERENCES strings(id),
    device     INTEGER,
    grid_x     INTEGER, grid_y  INTEGER, grid_z  INTEGER,
    block_x    INTEGER, block_y INTEGER, block_z INTEGER,
    shared_mem INTEGER
);

CREATE TABLE copy_args (
    call_id  INTEGER PRIMARY KEY REFERENCES calls(id),
    kind     TEXT NOT NULL,      -- HtoD, DtoH, DtoD, HtoH, PtoP
    bytes    INTEGER NOT NULL,
    host_mem TEXT NOT NULL,      -- pageable, pinned, managed, none, unknown
    async    INTEGER NOT NULL,
    device   INTEGER
);

CREATE TABLE memset_args (
    call_id INTEGER PRIMARY KEY REFERENCES calls(id),
    bytes   INTEGER NOT NULL,
    async   INTEGER NOT NULL,
    device  INTEGER
);

CREATE TABLE sync_args (
    call_id INTEGER PRIMARY KEY REFERENCES calls(id),
    kind    TEXT NOT NULL,       -- device, context, stream, event, stream_wait_event
    target  INTEGER              -- the stream or event handle waited on
);

CREATE TABLE alloc_args (
    call_id INTEGER PRIMARY KEY REFERENCES calls(id),
    kind    TEXT NOT NULL,       -- device, pinned, managed, registered, async
    ptr     INTEGER,
    bytes   INTEGER
);

-- GPU-side records from CUPTI, on the same clock as the calls.
CREATE TABLE gpu_ops (
    id             INTEGER PRIMARY KEY,
    kind           TEXT NOT NULL,  -- kernel, memcpy, memset, sync
    correlation_id INTEGER,        -- CUPTI's, links through ext_corr to calls.corr
    device         INTEGER,
    context        INTEGER,
    stream         INTEGER,        -- CUPTI stream id
    start_ns       INTEGER,
    end_ns         INTEGER,
    name_id        INTEGER REFERENCES strings(id),  -- kernels
    bytes          INTEGER,        -- memcpy, memset
    copy_kind      TEXT,           -- HtoD, DtoH, DtoD, HtoH, PtoP, HtoA, AtoH, AtoA, AtoD, DtoA
    src_kind       TEXT,           -- pageable, pinned, device, array, managed, device_static, managed_static, unknown
    dst_kind       TEXT,
    sync_type      TEXT            -- event_synchronize, stream_wait_event, stream_synchronize, context_synchronize
);

-- CUPTI correlation id -> our external correlation id (calls.corr).
CREATE TABLE ext_corr (
    correlation_id INTEGER PRIMARY KEY,
    external_id    INTEGER NOT NULL
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

CREATE VIEW api_calls AS
SELECT c.id, (SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'pid') AS pid,
       c.tid, n.name, n.category, c.start_ns, c.end_ns, c.result, c.stream, c.stack_id, c.captured,
       c.pystack_id
FROM calls c JOIN api_names n ON n.id = c.api_id;

-- The GPU record of a call: the first CUPTI record of `kind` that carries
-- the call's external correlation id (used as a subquery below).

CREATE VIEW kernels AS
SELECT l.call_id AS api_call_id, COALESCE(s.demangled, s.value) AS name,
       s.value AS mangled_name, COALESCE(g.device, l.device) AS device, c.stream,
       COALESCE(g.start_ns, c.start_ns) AS start_ns, COALESCE(g.end_ns, c.end_ns) AS end_ns,
       CASE WHEN g.id IS NULL THEN 'host' ELSE 'gpu' END AS time_source,
       c.start_ns AS api_start_ns, c.end_ns AS api_end_ns, g.stream AS gpu_stream,
       l.grid_x, l.grid_y, l.grid_z, l.block_x, l.block_y, l.block_z, l.shared_mem,
       c.result, c.captured
FROM launch_args l JOIN calls c ON c.id = l.call_id
LEFT JOIN strings s ON s.id = l.name_id
LEFT JOIN gpu_ops g ON g.id = (SELECT g2.id FROM ext_corr e JOIN gpu_ops g2 ON g2.correlation_id = e.correlation_id
                               WHERE e.external_id = c.corr AND g2.kind = 'kernel' LIMIT 1);

CREATE VIEW memcpys AS
SELECT a.call_id AS api_call_id, a.kind, a.bytes,
       CASE WHEN g.id IS NULL THEN a.host_mem
            WHEN a.kind IN ('HtoD', 'HtoH') AND g.src_kind IN ('pageable', 'pinned', 'managed') THEN g.src_kind
            WHEN a.kind = 'DtoH' AND g.dst_kind IN ('pageable', 'pinned', 'managed') THEN g.dst_kind
            ELSE a.host_mem END AS host_mem,
       a.async, COALESCE(g.device, a.device) AS device, c.stream,
       COALESCE(g.start_ns, c.start_ns) AS start_ns, COALESCE(g.end_ns, c.end_ns) AS end_ns,
       CASE WHEN g.id IS NULL THEN 'host' ELSE 'gpu' END AS time_source,
       c.start_ns AS api_start_ns, c.end_ns AS api_end_ns, g.stream AS gpu_stream,
       g.src_kind AS gpu_src_kind, g.dst_kind AS gpu_dst_kind, c.result, c.captured
FROM copy_args a JOIN calls c ON c.id = a.call_id
LEFT JOIN gpu_ops g ON g.id = (SELECT g2.id FROM ext_corr e JOIN gpu_ops g2 ON g2.correlation_id = e.correlation_id
                               WHERE e.external_id = c.corr AND g2.kind = 'memcpy' LIMIT 1);

CREATE VIEW memsets AS
SELECT a.call_id AS api_call_id, a.bytes, a.async, COALESCE(g.device, a.device) AS device, c.stream,
       COALESCE(g.start_ns, c.start_ns) AS start_ns, COALESCE(g.end_ns, c.end_ns) AS end_ns,
       CASE WHEN g.id IS NULL THEN 'host' ELSE 'gpu' END AS time_source,
       c.start_ns AS api_start_ns, c.end_ns AS api_end_ns, g.stream AS gpu_stream, c.result, c.captured
FROM memset_args a JOIN calls c ON c.id = a.call_id
LEFT JOIN gpu_ops g ON g.id = (SELECT g2.id FROM ext_corr e JOIN gpu_ops g2 ON g2.correlation_id = e.correlation_id
                               WHERE e.external_id = c.corr AND g2.kind = 'memset' LIMIT 1);

CREATE VIEW syncs AS
SELECT a.call_id AS api_call_id, a.kind, c.stream, a.target, c.start_ns, c.end_ns, c.result
FROM sync_args a JOIN calls c ON c.id = a.call_id;

-- One row per GPU interval (kernels, copies, memsets), linked to the call
-- that caused it; linked = 0 marks work whose call was not intercepted.
CREATE VIEW gpu_activity AS
SELECT g.id, g.kind, g.device, g.stream, g.start_ns, g.end_ns,
       (SELECT c.id FROM ext_corr e JOIN calls c ON c.corr = e.external_id
        WHERE e.correlation_id = g.correlation_id) AS api_call_id,
       g.correlation_id,
       EXISTS (SELECT 1 FROM ext_corr e JOIN calls c ON c.corr = e.external_id
               WHERE e.correlation_id = g.correlation_id) AS linked,
       COALESCE(s.demangled, s.value) AS name, g.bytes, g.copy_kind, g.src_kind, g.dst_kind
FROM gpu_ops g LEFT JOIN strings s ON s.id = g.name_id
WHERE g.kind IN ('kernel', 'memcpy', 'memset');

CREATE VIEW allocations AS
SELECT a.call_id AS api_call_id, n.name AS api, a.kind, a.ptr, a.bytes,
       c.start_ns, c.end_ns, c.result
FROM alloc_args a JOIN calls c ON c.id = a.call_id JOIN api_names n ON n.id = c.api_id;

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
CREATE INDEX calls_start ON calls(start_ns);
CREATE INDEX calls_api ON calls(api_id);
CREATE INDEX calls_stack ON calls(stack_id);
CREATE INDEX calls_pystack ON calls(pystack_id) WHERE pystack_id IS NOT NULL;
CREATE INDEX calls_tid ON calls(tid, start_ns);
CREATE INDEX frames_ip ON frames(ip);
CREATE INDEX calls_corr ON calls(corr) WHERE corr IS NOT NULL;
CREATE INDEX gpu_ops_corr ON gpu_ops(correlation_id);
CREATE INDEX gpu_ops_start ON gpu_ops(start_ns);
CREATE INDEX ext_corr_ext ON ext_corr(external_id);

-- gputrace trace schema, version 9 (PRAGMA user_version = 9).
--
-- Storage tables hold integers and ids; names, stacks and frames are stored
-- once. The views at the end are the public, stable surface: query those.
-- docs/schema.md documents every table and view with example queries.

PRAGMA user_version = 9;

-- Key/value facts about the traced process and the recording.
CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT
) WITHOUT ROWID;

-- One row per hooked API entry point (id is stable within a trace only).
CREATE TABLE api_names (
    id       INTEGER PRIMARY KEY,
    name     TEXT NOT NULL,
    category TEXT NOT NULL,  -- launch, memcpy, memset, sync, alloc, free, stream, event, graph_launch, graph_build,
                             -- module (version 8), other
    lib      TEXT NOT NULL   -- runtime (returns a cudaError_t) or driver (returns a CUresult)
);

-- NVIDIA's name for each result code, as the CUDA toolkit the tracer was
-- built with spells it (cudaErrorInvalidValue, CUDA_ERROR_INVALID_VALUE):
-- the same number means different things in the runtime and the driver.
CREATE TABLE result_names (
    lib  TEXT NOT NULL,      -- runtime or driver, as api_names.lib
    code INTEGER NOT NULL,
    name TEXT NOT NULL,
    PRIMARY KEY (lib, code)
) WITHOUT ROWID;

-- Interned strings: kernel names (mangled value, demangled once at write time).
CREATE TABLE strings (
    id        INTEGER PRIMARY KEY,
    value     TEXT NOT NULL,
    demangled TEXT
);

-- Every intercepted call, one row each, host-side times on one
-- CLOCK_MONOTONIC clock. Query it through the views below (calls,
-- launch_args, copy_args, ...). Few columns on purpose: each costs the
-- writer time on every row. a0..a2 hold each category's arguments:
--   launch   a0 the launch's configuration (launch_configs.id: kernel
--            name, device, grid, block, shared memory, captured)
--   memcpy   a0 flags, a1 bytes
--   memset   a0 flags, a1 bytes
--            flags: bits 0-2 copy kind (0 HtoD, 1 DtoH, 2 DtoD, 3 HtoH,
--            4 PtoP), bits 3-5 host memory (0 pageable, 1 pinned,
--            2 managed, 3 none, 4 unknown, 5 mapped), bit 6 async, bit 7 captured,
--            bits 8-11 and 12-15 CUPTI's source and destination memory
--            kinds (when its record is in this row), bits 16- device
--   sync     a0 kind (0 device, 1 context, 2 stream, 3 event,
--            4 stream_wait_event, 5 event_query, 6 stream_query; version 8)
--            | bit 7 captured, a1 the stream or event waited on or polled,
--            a2 (version 8) the polls a query row stands for: a run of
--            polls of one event or stream that returned cudaErrorNotReady
--            (CUDA_ERROR_NOT_READY) is one row from the first poll's start
--            to the last one's end; NULL: one
--   alloc, free
--            a0 kind (0 device, 1 pinned, 2 managed, 3 registered, 4 async,
--            5 mapped: host memory allocated or registered mapped)
--            | bit 7 captured (version 8), a1 bytes, a2 ptr
--   module   (version 8) a0 bits 0-2 what the call was given (0 nothing,
--            1 PTX, 2 cubin, 3 fatbinary, 4 another image, 5 a file),
--            bit 3 PTX the driver compiled (JIT), bit 7 captured; a1 the
--            image's bytes
--   others   a0 (version 8) 128 when a stream capture took the call (a host
--            function, an event record, a graph launch), else NULL
-- A launch, copy or memset's GPU record is kept in its own row (g_*) when
-- CUPTI delivered it within a second, which is nearly always; else it is
-- in gpu_ops, linked by corr. The views look in both.
CREATE TABLE events (
    id         INTEGER PRIMARY KEY,
    tid        INTEGER NOT NULL,
    api_id     INTEGER NOT NULL REFERENCES api_names(id),
    start_ns   INTEGER NOT NULL,
    dur_ns     INTEGER NOT NULL,   -- end_ns - start_ns: fewer bytes than the end time
    result     INTEGER NOT NULL,
    stream     INTEGER,            -- stream handle value; NULL where the call has none
    stack_id   INTEGER,            -- NULL when stacks are off or the stack table was full
    pystack_id INTEGER,            -- the Python stack (py_stacks); NULL when no Python ran on the thread
    corr       INTEGER,            -- our CUPTI external correlation id; NULL when the call makes no GPU work,
                                   -- GPU timing is off, or its GPU record is in this row
    a0 INTEGER, a1 INTEGER, a2 INTEGER,
    g_start_ns INTEGER,            -- GPU start minus start_ns; NULL: no GPU record in this row
    g_dur_ns   INTEGER,            -- the GPU record's duration
    g_stream   INTEGER             -- its CUPTI stream id * 256 + its device
);

-- Launch configurations, stored once: the kernel, device, grid, block,
-- shared memory and whether it was captured into a graph.
CREATE TABLE launch_configs (
    id         INTEGER PRIMARY KEY,
    name_id    INTEGER REFERENCES strings(id),
    device     INTEGER NOT NULL,
    grid_x     INTEGER NOT NULL,
    grid_y     INTEGER NOT NULL,
    grid_z     INTEGER NOT NULL,
    block_x    INTEGER NOT NULL,
    block_y    INTEGER NOT NULL,
    block_z    INTEGER NOT NULL,
    shared_mem INTEGER NOT NULL,
    captured   INTEGER NOT NULL
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
    sync_type      INTEGER,          -- CUPTI_ActivitySynchronizationType: 1 event_synchronize, 2 stream_wait_event, 3 stream_synchronize, 4 context_synchronize
    -- CUDA Graphs (issue 18): NULL for work no graph ran, and in older traces
    graph_id       INTEGER,          -- CUPTI's graphId of the graph that ran it
    graph_node_id  INTEGER           -- CUPTI's graphNodeId: graph_nodes.node_id
);

-- CUDA Graph nodes: one row per node the program made, by capture (a
-- launch, copy, memset, host function, stream-ordered allocation or free
-- on a capturing stream, or on a stream joined to the capture through an
-- event), node by
-- node (cudaGraphAdd*Node, cuGraphAdd*Node) or by cloning a graph. Query
-- it through the graph_nodes view. Only nodes CUPTI gave an id are rows
-- (GPU timing on): the id is what links a replayed node's GPU work here.
CREATE TABLE graph_node_rows (
    node_id     INTEGER PRIMARY KEY, -- CUPTI's graphNodeId
    graph_id    INTEGER,             -- CUPTI's graphId of the graph it is in
    kind        INTEGER NOT NULL,    -- 0 kernel, 1 memcpy, 2 memset, 3 host, 4 empty, 5 other,
                                     -- 6 mem_alloc, 7 mem_free (version 8)
    name_id     INTEGER,             -- kernel nodes: strings(id)
    api_id      INTEGER NOT NULL,    -- the call that made it (api_names); a clone's: its original's
    tid         INTEGER NOT NULL,    -- that call's thread, start time and stacks
    ns          INTEGER NOT NULL,
    stack_id    INTEGER,
    pystack_id  INTEGER,
    cloned_from INTEGER              -- a clone's node: the node it was cloned from
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
    offset    INTEGER,           -- ip - 1 (inside the call instruction) relative to the module's load base
    function  TEXT,              -- demangled; NULL when unknown
    -- version 6 (source lines, from DWARF): NULL when the module has no line information
    file      TEXT,              -- source file of the call, as the line table names it
    line      INTEGER,
    "column"  INTEGER,
    inlined   INTEGER NOT NULL DEFAULT 0  -- 1: a function inlined at the next depth's line
    -- end version 6 (source lines)
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

-- Kinds of memory, as CUPTI numbers them (CUpti_ActivityMemoryKind).
CREATE VIEW cupti_memory_kinds(code, name) AS
VALUES (0, 'unknown'), (1, 'pageable'), (2, 'pinned'), (3, 'device'), (4, 'array'), (5, 'managed'),
       (6, 'device_static'), (7, 'managed_static');

-- The calls and their arguments, as version 2 stored them; error (version
-- 5) is NVIDIA's name for a failed call's result.
CREATE VIEW calls AS
SELECT e.id, e.tid, e.api_id, e.start_ns, e.start_ns + e.dur_ns AS end_ns, e.result, e.stream, e.stack_id, e.corr,
       CASE n.category WHEN 'launch' THEN (SELECT c.captured FROM launch_configs c WHERE c.id = e.a0)
                       ELSE (COALESCE(e.a0, 0) >> 7) & 1 END AS captured,
       e.pystack_id,
       CASE WHEN e.result != 0 THEN
           COALESCE((SELECT r.name FROM result_names r WHERE r.lib = n.lib AND r.code = e.result),
                    'error ' || e.result) END AS error
FROM events e JOIN api_names n ON n.id = e.api_id;

CREATE VIEW launch_args AS
SELECT e.id AS call_id, c.name_id, c.device, c.grid_x, c.grid_y, c.grid_z, c.block_x, c.block_y, c.block_z,
       c.shared_mem
FROM events e JOIN launch_configs c ON c.id = e.a0
WHERE e.api_id IN (SELECT id FROM api_names WHERE category = 'launch');

CREATE VIEW copy_args AS
SELECT id AS call_id,
       CASE a0 & 7 WHEN 0 THEN 'HtoD' WHEN 1 THEN 'DtoH' WHEN 2 THEN 'DtoD' WHEN 3 THEN 'HtoH' WHEN 4 THEN 'PtoP' END
           AS kind,
       a1 AS bytes,
       CASE (a0 >> 3) & 7 WHEN 0 THEN 'pageable' WHEN 1 THEN 'pinned' WHEN 2 THEN 'managed' WHEN 3 THEN 'none'
                          WHEN 4 THEN 'unknown' WHEN 5 THEN 'mapped' END AS host_mem,
       (a0 >> 6) & 1 AS async, a0 >> 16 AS device
FROM events WHERE api_id IN (SELECT id FROM api_names WHERE category = 'memcpy');

CREATE VIEW memset_args AS
SELECT id AS call_id, a1 AS bytes, (a0 >> 6) & 1 AS async, a0 >> 16 AS device
FROM events WHERE api_id IN (SELECT id FROM api_names WHERE category = 'memset');

CREATE VIEW sync_args AS
SELECT id AS call_id,
       CASE a0 & 127 WHEN 0 THEN 'device' WHEN 1 THEN 'context' WHEN 2 THEN 'stream' WHEN 3 THEN 'event'
               WHEN 4 THEN 'stream_wait_event' WHEN 5 THEN 'event_query' WHEN 6 THEN 'stream_query' END AS kind,
       a1 AS target,
       CASE WHEN a0 & 127 IN (5, 6) THEN COALESCE(a2, 1) END AS polls
FROM events WHERE api_id IN (SELECT id FROM api_names WHERE category = 'sync');

-- @module_args (version 8): what each module-loading call was given.
CREATE VIEW module_args AS
SELECT id AS call_id,
       CASE a0 & 7 WHEN 0 THEN NULL WHEN 1 THEN 'ptx' WHEN 2 THEN 'cubin' WHEN 3 THEN 'fatbin' WHEN 4 THEN 'other'
                   WHEN 5 THEN 'file' END AS kind,
       NULLIF(a1, 0) AS bytes, (a0 >> 3) & 1 AS jit
FROM events WHERE api_id IN (SELECT id FROM api_names WHERE category = 'module');

CREATE VIEW alloc_args AS
SELECT id AS call_id,
       CASE a0 & 127 WHEN 0 THEN 'device' WHEN 1 THEN 'pinned' WHEN 2 THEN 'managed' WHEN 3 THEN 'registered'
               WHEN 4 THEN 'async' WHEN 5 THEN 'mapped' END AS kind,
       a2 AS ptr, a1 AS bytes
FROM events WHERE api_id IN (SELECT id FROM api_names WHERE category IN ('alloc', 'free'));

-- CUPTI's records with their kinds spelled out, as version 2 stored them.
CREATE VIEW gpu_records AS
SELECT id, CASE kind WHEN 0 THEN 'kernel' WHEN 1 THEN 'memcpy' WHEN 2 THEN 'memset' WHEN 3 THEN 'sync' END AS kind,
       corr, correlation_id, device, stream, start_ns, start_ns + dur_ns AS end_ns, name_id, bytes,
       CASE copy_kind WHEN 1 THEN 'HtoD' WHEN 2 THEN 'DtoH' WHEN 3 THEN 'HtoA' WHEN 4 THEN 'AtoH'
                      WHEN 5 THEN 'AtoA' WHEN 6 THEN 'AtoD' WHEN 7 THEN 'DtoA' WHEN 8 THEN 'DtoD'
                      WHEN 9 THEN 'HtoH' WHEN 10 THEN 'PtoP' WHEN 0 THEN 'unknown' END AS copy_kind,
       (SELECT name FROM cupti_memory_kinds WHERE code = src_kind) AS src_kind,
       (SELECT name FROM cupti_memory_kinds WHERE code = dst_kind) AS dst_kind,
       CASE sync_type WHEN 1 THEN 'event_synchronize' WHEN 2 THEN 'stream_wait_event'
                      WHEN 3 THEN 'stream_synchronize' WHEN 4 THEN 'context_synchronize'
                      WHEN 0 THEN 'unknown' END AS sync_type
FROM gpu_ops;

CREATE VIEW api_calls AS
SELECT c.id, (SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'pid') AS pid,
       c.tid, n.name, n.category, c.start_ns, c.end_ns, c.result, c.stream, c.stack_id, c.captured, c.pystack_id,
       c.error
FROM calls c JOIN api_names n ON n.id = c.api_id;

-- Each kernel, copy and memset in gpu_ops with the call that made it
-- (gpu_ops.corr = events.corr; the call's columns NULL when it was not
-- intercepted). via: how the work was submitted, the call's category,
-- 'graph' for a graph launch.
CREATE VIEW gpu_op_calls AS
SELECT g.id, g.kind, g.correlation_id, g.device, g.stream AS gpu_stream, g.start_ns, g.start_ns + g.dur_ns AS end_ns,
       g.name_id, g.bytes, g.copy_kind, g.src_kind, g.dst_kind,
       e.id AS call_id, n.category, e.stream, e.start_ns AS api_start_ns, e.start_ns + e.dur_ns AS api_end_ns,
       COALESCE(e.result, 0) AS result, e.a0,
       CASE n.category WHEN 'graph_launch' THEN 'graph' ELSE n.category END AS via,
       g.graph_id, g.graph_node_id
FROM gpu_ops g LEFT JOIN events e ON e.corr = g.corr LEFT JOIN api_names n ON n.id = e.api_id
WHERE g.kind < 3;

-- One row per kernel the GPU ran, and per launch call with no GPU record
-- (GPU timing off or unavailable, a failed launch: its host times). A
-- launch made during stream capture ran nothing and is not a row; the
-- graph's launches run its kernels (via = 'graph'). Here and below, the
-- api_id test comes first so that other calls are passed over before
-- anything is looked up for them.
CREATE VIEW kernels AS
SELECT e.id AS api_call_id, COALESCE(s.demangled, s.value) AS name, s.value AS mangled_name,
       CASE WHEN e.g_dur_ns IS NULL THEN c.device ELSE e.g_stream & 255 END AS device, e.stream,
       COALESCE(e.start_ns + e.g_start_ns, e.start_ns) AS start_ns,
       COALESCE(e.start_ns + e.g_start_ns + e.g_dur_ns, e.start_ns + e.dur_ns) AS end_ns,
       CASE WHEN e.g_dur_ns IS NULL THEN 'host' ELSE 'gpu' END AS time_source,
       e.start_ns AS api_start_ns, e.start_ns + e.dur_ns AS api_end_ns, e.g_stream >> 8 AS gpu_stream,
       c.grid_x, c.grid_y, c.grid_z, c.block_x, c.block_y, c.block_z, c.shared_mem, e.result, 0 AS captured,
       'launch' AS via, NULL AS graph_node_id
FROM events e JOIN launch_configs c ON c.id = e.a0 LEFT JOIN strings s ON s.id = c.name_id
WHERE e.api_id IN (SELECT id FROM api_names WHERE category = 'launch')
  AND (e.g_dur_ns IS NOT NULL
       OR (c.captured = 0 AND (e.corr IS NULL
                               OR NOT EXISTS (SELECT 1 FROM gpu_ops g WHERE g.corr = e.corr AND g.kind = 0))))
UNION ALL
SELECT o.call_id, COALESCE(s.demangled, s.value), s.value, o.device, o.stream, o.start_ns, o.end_ns, 'gpu',
       o.api_start_ns, o.api_end_ns, o.gpu_stream,
       c.grid_x, c.grid_y, c.grid_z, c.block_x, c.block_y, c.block_z, c.shared_mem, o.result, 0, o.via,
       o.graph_node_id
FROM gpu_op_calls o LEFT JOIN launch_configs c ON o.category = 'launch' AND c.id = o.a0
LEFT JOIN strings s ON s.id = COALESCE(o.name_id, c.name_id)
WHERE o.kind = 0;

-- CUDA Graph nodes with their kind, kernel and the call that made them
-- (for a clone's node, its original's). Each kernel, copy and memset a
-- graph launch replayed names its node in graph_node_id (kernels,
-- gpu_op_calls), so JOIN graph_nodes ON node_id = graph_node_id gives
-- where the node was made beside the launch that ran it (call_id).
CREATE VIEW graph_nodes AS
SELECT n.node_id, n.graph_id,
       CASE n.kind WHEN 0 THEN 'kernel' WHEN 1 THEN 'memcpy' WHEN 2 THEN 'memset' WHEN 3 THEN 'host'
                   WHEN 4 THEN 'empty' WHEN 6 THEN 'mem_alloc' WHEN 7 THEN 'mem_free' ELSE 'other' END AS kind,
       COALESCE(s.demangled, s.value) AS kernel_name, a.name AS api, n.tid, n.ns AS api_start_ns, n.stack_id,
       n.pystack_id, n.cloned_from
FROM graph_node_rows n LEFT JOIN strings s ON s.id = n.name_id LEFT JOIN api_names a ON a.id = n.api_id;

-- One row per copy the GPU ran (each copy of a batch its own), and per
-- copy call with no GPU record; copies made during stream capture ran
-- nothing and are not rows. host_mem: 'mapped' when the call's host
-- memory is mapped (zero-copy) page-locked memory, which CUPTI calls
-- pinned; else CUPTI's memory kind of the host side when it names one
-- (pageable, pinned, managed), else the call's own reading; for a copy no
-- copy call made (a graph's), 'none' then.
CREATE VIEW memcpys AS
SELECT e.id AS api_call_id,
       CASE e.a0 & 7 WHEN 0 THEN 'HtoD' WHEN 1 THEN 'DtoH' WHEN 2 THEN 'DtoD' WHEN 3 THEN 'HtoH' WHEN 4 THEN 'PtoP' END
           AS kind,
       e.a1 AS bytes,
       CASE WHEN (e.a0 >> 3) & 7 = 5 THEN 'mapped'
            WHEN e.a0 & 7 IN (0, 3) AND src.code IN (1, 2, 5) THEN src.name
            WHEN e.a0 & 7 = 1 AND dst.code IN (1, 2, 5) THEN dst.name
            ELSE CASE (e.a0 >> 3) & 7 WHEN 0 THEN 'pageable' WHEN 1 THEN 'pinned' WHEN 2 THEN 'managed'
                                      WHEN 3 THEN 'none' WHEN 4 THEN 'unknown' END END AS host_mem,
       (e.a0 >> 6) & 1 AS async, CASE WHEN e.g_dur_ns IS NULL THEN e.a0 >> 16 ELSE e.g_stream & 255 END AS device,
       e.stream, COALESCE(e.start_ns + e.g_start_ns, e.start_ns) AS start_ns,
       COALESCE(e.start_ns + e.g_start_ns + e.g_dur_ns, e.start_ns + e.dur_ns) AS end_ns,
       CASE WHEN e.g_dur_ns IS NULL THEN 'host' ELSE 'gpu' END AS time_source,
       e.start_ns AS api_start_ns, e.start_ns + e.dur_ns AS api_end_ns, e.g_stream >> 8 AS gpu_stream,
       src.name AS gpu_src_kind, dst.name AS gpu_dst_kind, e.result, 0 AS captured, 'memcpy' AS via,
       NULL AS graph_node_id
FROM events e
LEFT JOIN cupti_memory_kinds src ON src.code = CASE WHEN e.g_dur_ns IS NOT NULL THEN (e.a0 >> 8) & 15 END
LEFT JOIN cupti_memory_kinds dst ON dst.code = CASE WHEN e.g_dur_ns IS NOT NULL THEN (e.a0 >> 12) & 15 END
WHERE e.api_id IN (SELECT id FROM api_names WHERE category = 'memcpy')
  AND (e.g_dur_ns IS NOT NULL
       OR ((e.a0 >> 7) & 1 = 0 AND (e.corr IS NULL
                                    OR NOT EXISTS (SELECT 1 FROM gpu_ops g WHERE g.corr = e.corr AND g.kind = 1))))
UNION ALL
SELECT o.call_id, o.dir, o.bytes,
       CASE WHEN o.host = 'mapped' THEN 'mapped'
            WHEN o.dir IN ('HtoD', 'HtoH') AND src.code IN (1, 2, 5) THEN src.name
            WHEN o.dir = 'DtoH' AND dst.code IN (1, 2, 5) THEN dst.name
            ELSE o.host END,
       o.is_async, o.device, o.stream, o.start_ns, o.end_ns, 'gpu', o.api_start_ns, o.api_end_ns, o.gpu_stream,
       src.name, dst.name, o.result, 0, o.via, o.graph_node_id
FROM (SELECT o.*,
             CASE WHEN o.category = 'memcpy' THEN
                      CASE o.a0 & 7 WHEN 0 THEN 'HtoD' WHEN 1 THEN 'DtoH' WHEN 2 THEN 'DtoD' WHEN 3 THEN 'HtoH'
                                    WHEN 4 THEN 'PtoP' END
                  ELSE CASE o.copy_kind WHEN 1 THEN 'HtoD' WHEN 2 THEN 'DtoH' WHEN 3 THEN 'HtoA' WHEN 4 THEN 'AtoH'
                                        WHEN 5 THEN 'AtoA' WHEN 6 THEN 'AtoD' WHEN 7 THEN 'DtoA' WHEN 8 THEN 'DtoD'
                                        WHEN 9 THEN 'HtoH' WHEN 10 THEN 'PtoP' WHEN 0 THEN 'unknown' END END AS dir,
             CASE WHEN o.category = 'memcpy' THEN
                      CASE (o.a0 >> 3) & 7 WHEN 0 THEN 'pageable' WHEN 1 THEN 'pinned' WHEN 2 THEN 'managed'
                                           WHEN 3 THEN 'none' WHEN 4 THEN 'unknown' WHEN 5 THEN 'mapped' END
                  ELSE 'none' END AS host,
             CASE WHEN o.category = 'memcpy' THEN (o.a0 >> 6) & 1 WHEN o.call_id IS NOT NULL THEN 1 END AS is_async
      FROM gpu_op_calls o WHERE o.kind = 1) o
LEFT JOIN cupti_memory_kinds src ON src.code = o.src_kind
LEFT JOIN cupti_memory_kinds dst ON dst.code = o.dst_kind;

-- One row per memset the GPU ran, and per memset call with no GPU record;
-- memsets made during stream capture ran nothing and are not rows.
CREATE VIEW memsets AS
SELECT e.id AS api_call_id, e.a1 AS bytes, (e.a0 >> 6) & 1 AS async,
       CASE WHEN e.g_dur_ns IS NULL THEN e.a0 >> 16 ELSE e.g_stream & 255 END AS device, e.stream,
       COALESCE(e.start_ns + e.g_start_ns, e.start_ns) AS start_ns,
       COALESCE(e.start_ns + e.g_start_ns + e.g_dur_ns, e.start_ns + e.dur_ns) AS end_ns,
       CASE WHEN e.g_dur_ns IS NULL THEN 'host' ELSE 'gpu' END AS time_source,
       e.start_ns AS api_start_ns, e.start_ns + e.dur_ns AS api_end_ns, e.g_stream >> 8 AS gpu_stream, e.result,
       0 AS captured, 'memset' AS via, NULL AS graph_node_id
FROM events e
WHERE e.api_id IN (SELECT id FROM api_names WHERE category = 'memset')
  AND (e.g_dur_ns IS NOT NULL
       OR ((e.a0 >> 7) & 1 = 0 AND (e.corr IS NULL
                                    OR NOT EXISTS (SELECT 1 FROM gpu_ops g WHERE g.corr = e.corr AND g.kind = 2))))
UNION ALL
SELECT o.call_id, o.bytes,
       CASE WHEN o.category = 'memset' THEN (o.a0 >> 6) & 1 WHEN o.call_id IS NOT NULL THEN 1 END,
       o.device, o.stream, o.start_ns, o.end_ns, 'gpu', o.api_start_ns, o.api_end_ns, o.gpu_stream, o.result, 0, o.via,
       o.graph_node_id
FROM gpu_op_calls o
WHERE o.kind = 2;

CREATE VIEW syncs AS
SELECT a.call_id AS api_call_id, a.kind, e.stream, a.target, e.start_ns, e.start_ns + e.dur_ns AS end_ns,
       e.result
FROM sync_args a JOIN events e ON e.id = a.call_id;

-- One row per GPU interval (kernels, copies, memsets), linked to the call
-- that caused it; linked = 0 marks work whose call was not intercepted.
-- id and correlation_id are gpu_ops' and CUPTI's; NULL for records kept
-- in their call's row.
CREATE VIEW gpu_activity AS
SELECT NULL AS id, CASE n.category WHEN 'launch' THEN 'kernel' ELSE n.category END AS kind,
       e.g_stream & 255 AS device, e.g_stream >> 8 AS stream, e.start_ns + e.g_start_ns AS start_ns,
       e.start_ns + e.g_start_ns + e.g_dur_ns AS end_ns, e.id AS api_call_id, NULL AS correlation_id, 1 AS linked,
       CASE WHEN n.category = 'launch' THEN
           (SELECT COALESCE(s.demangled, s.value) FROM launch_configs c JOIN strings s ON s.id = c.name_id
            WHERE c.id = e.a0) END AS name,
       CASE WHEN n.category != 'launch' THEN e.a1 END AS bytes,
       CASE WHEN n.category = 'memcpy' THEN
           CASE e.a0 & 7 WHEN 0 THEN 'HtoD' WHEN 1 THEN 'DtoH' WHEN 2 THEN 'DtoD' WHEN 3 THEN 'HtoH' WHEN 4 THEN 'PtoP' END
       END AS copy_kind,
       CASE WHEN n.category = 'memcpy' THEN (SELECT name FROM cupti_memory_kinds WHERE code = (e.a0 >> 8) & 15)
       END AS src_kind,
       CASE WHEN n.category = 'memcpy' THEN (SELECT name FROM cupti_memory_kinds WHERE code = (e.a0 >> 12) & 15)
       END AS dst_kind,
       n.category AS via
FROM events e JOIN api_names n ON n.id = e.api_id
WHERE e.g_dur_ns IS NOT NULL
UNION ALL
SELECT o.id, r.kind, o.device, o.gpu_stream, o.start_ns, o.end_ns, o.call_id, o.correlation_id,
       o.call_id IS NOT NULL AS linked, COALESCE(s.demangled, s.value) AS name, o.bytes, r.copy_kind, r.src_kind,
       r.dst_kind, o.via
FROM gpu_op_calls o JOIN gpu_records r ON r.id = o.id LEFT JOIN strings s ON s.id = o.name_id;

CREATE VIEW allocations AS
SELECT a.call_id AS api_call_id, n.name AS api, a.kind, a.ptr, a.bytes,
       e.start_ns, e.start_ns + e.dur_ns AS end_ns, e.result
FROM alloc_args a JOIN events e ON e.id = a.call_id JOIN api_names n ON n.id = e.api_id;

CREATE VIEW stack_frames AS
SELECT s.stack_id, s.depth, m.path AS module, f.offset, f.function, f.ip,
       f.file, f.line, f."column", f.inlined -- version 6 (source lines)
FROM stacks s JOIN frames f ON f.id = s.frame_id
LEFT JOIN modules m ON m.id = f.module_id;

CREATE VIEW py_stack_frames AS
SELECT s.pystack_id, s.depth, c.file, c.function, f.line, c.first_line, f.lasti
FROM py_stacks s JOIN py_frames f ON f.id = s.frame_id JOIN py_code c ON c.id = f.code_id;

-- ---------------------------------------------------------------------------
-- @nvtx (version 6): NVTX ranges, marks and names, recorded through NVTX's
-- injection interface. Older traces have none of these tables or views.

-- NVTX's strings (messages, domain and category names, object names):
-- UTF-8 (wide strings converted), at most 256 bytes (longer ones cut,
-- counted in meta nvtx_truncated_strings), bytes that are not UTF-8 made
-- U+FFFD.
CREATE TABLE nvtx_strings (
    id    INTEGER PRIMARY KEY,
    value TEXT NOT NULL
);

-- One row per range, written when it ends, or when the trace is finished
-- for a range still open then (end_ns NULL). kind 0: push/pop (one
-- thread; depth and parent_id from that thread's stack in its domain),
-- 1: start/end (may end on another thread; no depth or parent). ids
-- count up in the order the ranges were opened on each thread.
CREATE TABLE nvtx_ranges (
    id           INTEGER PRIMARY KEY,
    kind         INTEGER NOT NULL,
    tid          INTEGER NOT NULL,   -- the thread that pushed or started it
    end_tid      INTEGER,            -- the thread that popped or ended it
    domain_id    INTEGER,            -- nvtx_strings id of the domain's name; NULL: the default domain
    category     INTEGER NOT NULL,   -- 0: none
    name_id      INTEGER,            -- nvtx_strings id of the message; NULL: none
    start_ns     INTEGER NOT NULL,
    end_ns       INTEGER,
    depth        INTEGER,            -- push/pop: 0 outermost
    parent_id    INTEGER,            -- push/pop: the enclosing range of the same thread and domain
    payload,                         -- INTEGER or REAL, per payload_type; NULL: none
    payload_type INTEGER,            -- NVTX's: 1 uint64, 2 int64, 3 double, 4 uint32, 5 int32, 6 float
    stack_id     INTEGER,            -- where it was pushed or started (stacks)
    pystack_id   INTEGER
);

CREATE TABLE nvtx_marks (
    id           INTEGER PRIMARY KEY,
    tid          INTEGER NOT NULL,
    domain_id    INTEGER,
    category     INTEGER NOT NULL,
    name_id      INTEGER,
    ns           INTEGER NOT NULL,
    payload,
    payload_type INTEGER,
    stack_id     INTEGER,
    pystack_id   INTEGER
);

-- Names given to things: kind 0 an OS thread (object = its tid), 1 a
-- cudaStream_t, 2 a CUstream (object = the handle value, as calls.stream),
-- 3 a category (object = the category number, in domain_id's domain).
CREATE TABLE nvtx_names (
    kind      INTEGER NOT NULL,
    domain_id INTEGER,
    object    INTEGER NOT NULL,
    name_id   INTEGER,
    ns        INTEGER NOT NULL
);

CREATE VIEW ranges AS
SELECT r.id, CASE r.kind WHEN 0 THEN 'push' ELSE 'start' END AS kind, r.tid, r.end_tid,
       d.value AS domain, r.category,
       (SELECT s.value FROM nvtx_names n JOIN nvtx_strings s ON s.id = n.name_id
        WHERE n.kind = 3 AND n.object = r.category AND n.domain_id IS r.domain_id
        ORDER BY n.rowid DESC LIMIT 1) AS category_name,
       m.value AS name, r.start_ns, r.end_ns, r.depth, r.parent_id, r.payload,
       CASE r.payload_type WHEN 1 THEN 'uint64' WHEN 2 THEN 'int64' WHEN 3 THEN 'double' WHEN 4 THEN 'uint32'
                           WHEN 5 THEN 'int32' WHEN 6 THEN 'float' END AS payload_type,
       r.stack_id, r.pystack_id
FROM nvtx_ranges r LEFT JOIN nvtx_strings d ON d.id = r.domain_id LEFT JOIN nvtx_strings m ON m.id = r.name_id;

CREATE VIEW marks AS
SELECT k.id, k.tid, d.value AS domain, k.category,
       (SELECT s.value FROM nvtx_names n JOIN nvtx_strings s ON s.id = n.name_id
        WHERE n.kind = 3 AND n.object = k.category AND n.domain_id IS k.domain_id
        ORDER BY n.rowid DESC LIMIT 1) AS category_name,
       m.value AS name, k.ns, k.payload,
       CASE k.payload_type WHEN 1 THEN 'uint64' WHEN 2 THEN 'int64' WHEN 3 THEN 'double' WHEN 4 THEN 'uint32'
                           WHEN 5 THEN 'int32' WHEN 6 THEN 'float' END AS payload_type,
       k.stack_id, k.pystack_id
FROM nvtx_marks k LEFT JOIN nvtx_strings d ON d.id = k.domain_id LEFT JOIN nvtx_strings m ON m.id = k.name_id;

-- The last name NVTX gave each thread and each stream.
CREATE VIEW thread_names AS
SELECT n.object AS tid, s.value AS name FROM nvtx_names n JOIN nvtx_strings s ON s.id = n.name_id
WHERE n.kind = 0 AND n.rowid = (SELECT max(o.rowid) FROM nvtx_names o WHERE o.kind = 0 AND o.object = n.object);

CREATE VIEW stream_names AS
SELECT n.object AS stream, s.value AS name FROM nvtx_names n JOIN nvtx_strings s ON s.id = n.name_id
WHERE n.kind IN (1, 2)
  AND n.rowid = (SELECT max(o.rowid) FROM nvtx_names o WHERE o.kind IN (1, 2) AND o.object = n.object);
-- @nvtx end

-- @samples (version 7): what the host threads were doing, sampled by the
-- tracer's own thread at GPUTRACE_SAMPLE_HZ (docs/report.md, "Host during
-- the gap"). Older traces have neither table nor view.

-- One row per sample of one thread. state 0: running (on a CPU or ready
-- to run), 1: blocked in the system call `syscall`, 2: blocked outside a
-- system call (a page fault, stopped). stack_id: for a blocked thread, one
-- frame, the program counter the kernel reports (stacks); NULL for a
-- running one. pystack_id: the Python stack it was in (py_stacks); NULL
-- when it runs no Python, or the sample was not read (torn samples are
-- dropped, counted in meta samples_torn).
CREATE TABLE samples (
    id         INTEGER PRIMARY KEY,
    tid        INTEGER NOT NULL,
    ns         INTEGER NOT NULL,
    state      INTEGER NOT NULL,
    syscall    INTEGER,
    stack_id   INTEGER,
    pystack_id INTEGER
);

-- The names of the system calls samples name (x86-64 numbers).
CREATE TABLE syscall_names (
    nr   INTEGER PRIMARY KEY,
    name TEXT NOT NULL
);

CREATE VIEW host_samples AS
SELECT s.id, s.tid, s.ns,
       CASE s.state WHEN 0 THEN 'running' WHEN 1 THEN 'syscall' ELSE 'waiting' END AS state,
       CASE WHEN s.syscall IS NOT NULL THEN COALESCE(n.name, 'syscall ' || s.syscall) END AS syscall,
       s.stack_id, s.pystack_id
FROM samples s LEFT JOIN syscall_names n ON n.nr = s.syscall;
-- @samples end

-- @categories (version 9): the kind of work each kernel does (matmul,
-- attention, convolution, elementwise, reduction, collective, ...), by
-- ordered GLOB patterns over its name (docs/schema.md, "Kernel
-- categories"). The rows are gputrace's defaults at the time the trace was
-- written (analyzer/trace/kernel_categories.tsv, copied here by
-- scripts/gen_category_rules.py); the analyzer gives older traces the same
-- table and view. A user's own rules (`gputrace report --categories FILE`)
-- are the report's, not the trace's.
CREATE TABLE kernel_category_rules (
    priority INTEGER PRIMARY KEY,  -- tried lowest first; the first pattern that matches wins
    pattern  TEXT NOT NULL,        -- a GLOB over kernels.name (the demangled name where there is one)
    category TEXT NOT NULL
);
-- @category_rules
INSERT INTO kernel_category_rules (priority, pattern, category) VALUES
    (1, 'ncclKernel_*', 'collective'),
    (2, 'ncclDevKernel_*', 'collective'),
    (3, 'triton_poi_*', 'elementwise'),
    (4, 'triton_red_*', 'reduction'),
    (5, 'triton_per_*', 'reduction'),
    (6, 'triton_tem_*mm*', 'matmul'),
    (7, 'triton_mm*', 'matmul'),
    (8, '*flash_fwd*', 'attention'),
    (9, '*flash_bwd*', 'attention'),
    (10, '*pytorch_flash::*', 'attention'),
    (11, '*fmha*', 'attention'),
    (12, '*attention_kernel_batched_impl*', 'attention'),
    (13, '*AttentionKernel<*', 'attention'),
    (14, '*PrefillWithKVCache*', 'attention'),
    (15, '*_sdpa_*', 'attention'),
    (16, '*cublasLt::epilogue::*', 'matmul'),
    (17, '*scal_kernel<*(cublasTransposeParams<*', 'matmul'),
    (18, '*multi_tensor_apply_kernel<*', 'elementwise'),
    (19, 'void at::native::vectorized_elementwise_kernel<*', 'elementwise'),
    (20, 'void at::native::unrolled_elementwise_kernel<*', 'elementwise'),
    (21, 'void at::native::elementwise_kernel<*', 'elementwise'),
    (22, 'void at::native::reduce_kernel<*', 'reduction'),
    (23, '*fprop*', 'convolution'),
    (24, '*dgrad*', 'convolution'),
    (25, '*wgrad*', 'convolution'),
    (26, '*convolve*', 'convolution'),
    (27, '*scudnn*', 'convolution'),
    (28, '*winograd*', 'convolution'),
    (29, '*conv2d*', 'convolution'),
    (30, '*[Ss]oft[Mm]ax*', 'reduction'),
    (31, '*layer_norm*', 'reduction'),
    (32, '*batch_norm*', 'reduction'),
    (33, '*RMSNorm*', 'reduction'),
    (34, '*GammaBetaBackward*', 'reduction'),
    (35, '*reduce_kernel*', 'reduction'),
    (36, 'nvjet_*', 'matmul'),
    (37, '*gemm*', 'matmul'),
    (38, '*gemv*', 'matmul'),
    (39, '*cutlass::Kernel*', 'matmul'),
    (40, '*elementwise_kernel*', 'elementwise'),
    (41, '*elementwise_grid_stride_kernel*', 'elementwise'),
    (42, '*kernelPointwiseApply*', 'elementwise');
-- @category_rules end

-- Every row of `kernels` with its category: the first rule's whose pattern
-- matches the name, 'other' when none does (or the kernel has no name).
CREATE VIEW kernel_categories AS
SELECT k.*, COALESCE((SELECT r.category FROM kernel_category_rules r WHERE k.name GLOB r.pattern
                      ORDER BY r.priority LIMIT 1), 'other') AS category
FROM kernels k;
-- @categories end

-- @indexes
-- Built once, when the recording process ends: maintaining them row by row
-- would cost the writer most of its throughput. A trace whose process died
-- lacks them and is still fully readable, only slower to query. There is no
-- index on events(start_ns): at exit it cost about 350 ns of CPU and 15
-- bytes per call, a third of the file, and a time window over ten million
-- calls scans in about half a second without it (docs/schema.md says how
-- to add it). The partial indexes on events are left out when no row has
-- the column (GPU timing off, no Python).
CREATE INDEX events_pystack ON events(pystack_id) WHERE pystack_id IS NOT NULL;
CREATE INDEX events_corr ON events(corr) WHERE corr IS NOT NULL;
CREATE INDEX frames_ip ON frames(ip);
CREATE INDEX gpu_ops_corr ON gpu_ops(corr) WHERE corr IS NOT NULL;
-- kernels, memcpys, memsets: each kind's records, and a call's of one kind.
CREATE INDEX gpu_ops_kind ON gpu_ops(kind, corr);
CREATE INDEX gpu_ops_start ON gpu_ops(start_ns);
CREATE INDEX nvtx_ranges_start ON nvtx_ranges(start_ns);
CREATE INDEX samples_tid_ns ON samples(tid, ns);

"""CUDA Graphs built every way (issue 18): node by node with the runtime
and the driver, by stream capture, cloned, updated, replayed a number of
times the test sets. Every replayed kernel, copy and memset must be in the
trace linked to the node it ran as, and through it to the call (and the
site) that made the node, beside the graph launch that ran it. Every count
below is computed here in plain SQL over the public views and checked
against the numbers the workload was given."""
from gtlib import assert_eq, prog, run_traced

R1, R2, R3, R4 = 3, 2, 4, 5


def site(alias):
    """SQL for the innermost function of a stack id column (its name, without a C++ signature)."""
    return ("(SELECT substr(f.function, 1, instr(f.function || '(', '(') - 1) FROM stack_frames f "
            "WHERE f.stack_id = %s AND f.depth = 0)" % alias)


def user_site(alias):
    """The innermost frame that is not nvcc's generated launch stub."""
    return ("(SELECT substr(f.function, 1, instr(f.function || '(', '(') - 1) FROM stack_frames f "
            "WHERE f.stack_id = %s AND f.function NOT LIKE '__device_stub%%' ORDER BY f.depth LIMIT 1)" % alias)


def graph_build():
    run = run_traced([prog("graph_build"), str(R1), str(R2), str(R3), str(R4)], env={"FAKECUDA_KERNEL_NS": "5000"})
    assert run.proc.returncode == 0, run.proc.stderr
    # the host node runs in G1 (2 x R1 launches) and in its clone G2 (R2)
    assert_eq(run.proc.stdout, "graph_build: host node ran %d times\n" % (2 * R1 + R2))
    return run


def test_graph_nodes_are_recorded_with_kind_kernel_and_creation_site():
    run = graph_build()
    nodes = run.q("SELECT graph_id, kind, kernel_name, api, %s, cloned_from IS NOT NULL FROM graph_nodes n "
                  "ORDER BY node_id" % site("n.stack_id"))
    g1 = [("kernel", "node_a", "cudaGraphAddKernelNode"), ("memset", None, "cudaGraphAddMemsetNode"),
          ("kernel", "node_b", "cudaGraphAddKernelNode"), ("memcpy", None, "cudaGraphAddMemcpyNode1D"),
          ("host", None, "cudaGraphAddHostNode"), ("empty", None, "cudaGraphAddEmptyNode")]
    g3 = [("kernel", "cap_c", "cudaLaunchKernel"), ("kernel", "cap_d", "cudaLaunchKernel"),
          ("kernel", "cap_c", "cudaLaunchKernel"), ("memset", None, "cudaMemsetAsync")]
    g4 = [("kernel", "drv_node", "cuGraphAddKernelNode_v2"), ("memset", None, "cuGraphAddMemsetNode")]
    graphs = sorted(set(n[0] for n in nodes))
    assert_eq(len(graphs), 4, "graphs")
    want = ([(graphs[0],) + n + ("build_nodes", 0) for n in g1] +
            # a clone's nodes keep their original's kind, kernel and site
            [(graphs[1],) + n + ("build_nodes", 1) for n in g1] +
            [(graphs[2],) + n + ("capture_step", 0) for n in g3] +
            [(graphs[3],) + n + ("build_driver", 0) for n in g4])
    assert_eq(nodes, want)
    # each clone names its original, of the same kind and kernel
    assert_eq(run.q1("SELECT count(*) FROM graph_nodes c JOIN graph_nodes o ON o.node_id = c.cloned_from "
                     "WHERE o.kind = c.kind AND o.kernel_name IS c.kernel_name AND o.graph_id != c.graph_id"), 6)
    # the calls that built the graphs are recorded, each once
    calls = run.q("SELECT name, count(*) FROM api_calls WHERE category = 'graph_build' GROUP BY name ORDER BY name")
    assert_eq(calls, [("cuGraphAddKernelNode_v2", 1), ("cuGraphAddMemsetNode", 1), ("cuGraphCreate", 1),
                      ("cuGraphInstantiateWithFlags", 1), ("cudaGraphAddEmptyNode", 1), ("cudaGraphAddHostNode", 1),
                      ("cudaGraphAddKernelNode", 2), ("cudaGraphAddMemcpyNode1D", 1), ("cudaGraphAddMemsetNode", 1),
                      ("cudaGraphClone", 1), ("cudaGraphCreate", 1), ("cudaGraphExecUpdate", 1),
                      ("cudaGraphInstantiate", 2), ("cudaGraphInstantiateWithFlags", 1)])
    assert_eq(run.q1("SELECT count(*) FROM api_calls WHERE category = 'graph_build' AND result != 0"), 0)
    # a node's creation time is its call's
    assert_eq(run.q1("SELECT count(*) FROM graph_nodes n WHERE n.cloned_from IS NULL AND NOT EXISTS "
                     "(SELECT 1 FROM api_calls c WHERE c.tid = n.tid AND c.start_ns = n.api_start_ns "
                     "AND c.name = n.api AND c.stack_id IS n.stack_id)"), 0)


def test_every_replayed_kernel_links_to_its_node_and_launch():
    run = graph_build()
    # by kernel, the site that made its node and the site that launched the graph
    rows = run.q("SELECT k.name, %s, %s, count(*) FROM kernels k JOIN graph_nodes n ON n.node_id = k.graph_node_id "
                 "JOIN api_calls c ON c.id = k.api_call_id WHERE k.via = 'graph' GROUP BY 1, 2, 3 ORDER BY 1, 2, 3"
                 % (site("n.stack_id"), site("c.stack_id")))
    assert_eq(rows, [("cap_c", "capture_step", "replay_captured", 2 * R3),
                     ("cap_d", "capture_step", "replay_captured", R3),
                     ("drv_node", "build_driver", "replay_driver", R4),
                     ("node_a", "build_nodes", "replay_clone", R2),
                     ("node_a", "build_nodes", "replay_nodes", 2 * R1),
                     ("node_b", "build_nodes", "replay_clone", R2),
                     ("node_b", "build_nodes", "replay_nodes", 2 * R1)])
    # nothing a graph ran is lost or attributed to another node's kernel
    assert_eq(run.q1("SELECT count(*) FROM kernels WHERE via = 'graph'"), 2 * (2 * R1 + R2) + 3 * R3 + R4)
    assert_eq(run.q1("SELECT count(*) FROM kernels k LEFT JOIN graph_nodes n ON n.node_id = k.graph_node_id "
                     "WHERE k.via = 'graph' AND (n.node_id IS NULL OR n.kind != 'kernel' "
                     "OR n.kernel_name IS NOT k.name)"), 0)
    # each graph launch ran each of its nodes once
    per_launch = run.q("SELECT c.name, %s, count(DISTINCT o.graph_node_id), count(*) FROM gpu_op_calls o "
                       "JOIN api_calls c ON c.id = o.call_id GROUP BY o.call_id HAVING o.via = 'graph'"
                       % site("c.stack_id"))
    expect = {"replay_nodes": 4, "replay_clone": 4, "replay_captured": 4, "replay_driver": 2}
    assert_eq(len(per_launch), 2 * R1 + R2 + R3 + R4)
    for name, fn, distinct, n in per_launch:
        assert_eq((distinct, n), (expect[fn], expect[fn]), fn)
        assert_eq(name, "cuGraphLaunch" if fn == "replay_driver" else "cudaGraphLaunch")
    # plain work names no node
    assert_eq(run.q("SELECT name, via, graph_node_id FROM kernels WHERE via != 'graph'"),
              [("plain_kernel", "launch", None)])
    # copies and memsets replayed, by node
    ops = run.q("SELECT 'memcpy', o.kind, o.bytes, n.kind, n.api, %s, count(*) FROM memcpys o "
                "JOIN graph_nodes n ON n.node_id = o.graph_node_id GROUP BY 1, 2, 3, 4, 5, 6 UNION ALL "
                "SELECT 'memset', NULL, o.bytes, n.kind, n.api, %s, count(*) FROM memsets o "
                "JOIN graph_nodes n ON n.node_id = o.graph_node_id GROUP BY 1, 2, 3, 4, 5, 6 ORDER BY 1, 3"
                % (site("n.stack_id"), site("n.stack_id")))
    assert_eq(ops, [("memcpy", "DtoD", 8192, "memcpy", "cudaGraphAddMemcpyNode1D", "build_nodes", 2 * R1 + R2),
                    ("memset", None, 1024, "memset", "cuGraphAddMemsetNode", "build_driver", R4),
                    ("memset", None, 2048, "memset", "cudaMemsetAsync", "capture_step", R3),
                    ("memset", None, 4096, "memset", "cudaGraphAddMemsetNode", "build_nodes", 2 * R1 + R2)])
    for view in ("kernels", "memcpys", "memsets"):
        assert_eq(run.q1("SELECT count(*) FROM %s WHERE via = 'graph' AND graph_node_id IS NULL" % view), 0, view)
        assert_eq(run.q1("SELECT count(*) FROM %s WHERE via != 'graph' AND graph_node_id IS NOT NULL" % view), 0)
    assert_eq(run.q1("SELECT count(*) FROM gpu_activity WHERE linked = 0"), 0)


def test_graphs_without_gpu_timing_record_the_calls_and_no_nodes():
    run = run_traced([prog("graph_build"), "1", "1", "1", "1"], env={"GPUTRACE_GPU_TIMING": "off"})
    assert run.proc.returncode == 0, run.proc.stderr
    assert_eq(run.proc.stdout, "graph_build: host node ran 3 times\n")
    # nothing names the nodes without CUPTI, so nothing could link to them
    assert_eq(run.q1("SELECT count(*) FROM graph_nodes"), 0)
    assert_eq(run.q1("SELECT count(*) FROM api_calls WHERE category = 'graph_build'"), 16)
    assert_eq(run.q1("SELECT count(*) FROM api_calls WHERE captured = 1"), 4)


def test_nvcc_built_graphs_link_kernels_to_their_nodes():
    r = 3
    run = run_traced([prog("graph_nvcc"), str(r)])
    assert run.proc.returncode == 0, run.proc.stderr
    assert_eq(run.proc.stdout, "graph_nvcc: ok\n")
    nodes = run.q("SELECT kernel_name, api, %s FROM graph_nodes n ORDER BY node_id" % site("n.stack_id"))
    # a <<<>>> launch's innermost frame is nvcc's stub for the kernel
    assert_eq(nodes, [("step_k(float*, int)", "__cudaLaunchKernel", "__device_stub__Z6step_kPfi"),
                      ("step_k(float*, int)", "__cudaLaunchKernel", "__device_stub__Z6step_kPfi"),
                      ("tail_k(float*, int)", "__cudaLaunchKernel", "__device_stub__Z6tail_kPfi"),
                      ("tail_k(float*, int)", "cudaGraphAddKernelNode", "add_cu"),
                      ("step_k(float*, int)", "cudaGraphAddKernelNode", "add_cu")])
    rows = run.q("SELECT k.name, %s, %s, count(*) FROM kernels k JOIN graph_nodes n ON n.node_id = k.graph_node_id "
                 "JOIN api_calls c ON c.id = k.api_call_id GROUP BY 1, 2, 3 ORDER BY 1, 2"
                 % (user_site("n.stack_id"), user_site("c.stack_id")))
    assert_eq(rows, [("step_k(float*, int)", "add_cu", "replay_cu", r),
                     ("step_k(float*, int)", "capture_cu", "replay_cu", 2 * r),
                     ("tail_k(float*, int)", "add_cu", "replay_cu", r),
                     ("tail_k(float*, int)", "capture_cu", "replay_cu", r)])
    # and zero_copy()'s mapped host memory, its kernel and its copy
    assert_eq(run.q1("SELECT count(*) FROM kernels"), 5 * r + 1)
    assert_eq(run.q("SELECT name, graph_node_id FROM kernels WHERE via = 'launch'"), [("step_k(float*, int)", None)])
    assert_eq(run.q("SELECT api, kind, bytes FROM allocations WHERE api = 'cudaHostAlloc'"),
              [("cudaHostAlloc", "mapped", 4096)])
    assert_eq(run.q("SELECT kind, bytes, host_mem FROM memcpys"), [("HtoD", 4096, "mapped")])


def test_report_attributes_graph_work_to_node_creation_and_launch():
    import subprocess
    import oracle
    from gtlib import GPUTRACE, site_function
    run = graph_build()
    # every figure of the report, the graph nodes section included, against the oracle
    assert_eq(oracle.verify([run.trace]), [])
    rc, doc, err = oracle.run_report([run.trace])
    assert_eq(rc, 0, err)
    got = {}
    # nodes that run no GPU work are shown too, with no runs (issue 31)
    assert_eq(sorted((r["kind"], site_function(r["created_at"][0]), r["launched_at"], r["nodes"], r["runs"])
                     for r in doc["graph_nodes"] if not r["runs"]),
              [("empty", "build_nodes", ["(no recorded call)"], 2, 0),
               ("host", "build_nodes", ["(no recorded call)"], 2, 0)])
    for r in doc["graph_nodes"]:
        if not r["runs"]:
            continue
        k = (r["kernel"] or r["kind"], site_function(r["created_at"][0]), site_function(r["launched_at"][0]))
        got[k] = got.get(k, 0) + r["runs"]
    assert_eq(got, {("cap_c", "capture_step", "replay_captured"): 2 * R3,
                    ("cap_d", "capture_step", "replay_captured"): R3,
                    ("drv_node", "build_driver", "replay_driver"): R4,
                    ("node_a", "build_nodes", "replay_nodes"): 2 * R1,
                    ("node_a", "build_nodes", "replay_clone"): R2,
                    ("node_b", "build_nodes", "replay_nodes"): 2 * R1,
                    ("node_b", "build_nodes", "replay_clone"): R2,
                    ("memset", "build_nodes", "replay_nodes"): 2 * R1,
                    ("memset", "build_nodes", "replay_clone"): R2,
                    ("memset", "capture_step", "replay_captured"): R3,
                    ("memset", "build_driver", "replay_driver"): R4,
                    ("memcpy", "build_nodes", "replay_nodes"): 2 * R1,
                    ("memcpy", "build_nodes", "replay_clone"): R2})
    # the text says where each node was created and where it was launched
    text = subprocess.run([GPUTRACE, "report", "--top", "0", run.trace], capture_output=True, text=True).stdout
    sec = text.split("Graph nodes: what CUDA Graphs ran, by where each node was created\n")[1].split("\n\n")[0]
    first = sec.split("  drv_node\n")[1].splitlines()[0]
    assert_eq(first, "    %d runs of 1 kernel node, GPU %.1f us" % (R4, R4 * 5.0))  # FAKECUDA_KERNEL_NS
    assert "graph node created\n      at graph_build.c:" in sec and " in build_driver\n" in sec, sec
    assert "    launched\n      at graph_build.c:" in sec and " in replay_driver\n" in sec, sec


KB = 1024


def test_mapped_host_memory_is_its_own_kind():
    import oracle
    k, c = 3, 4
    run = run_traced([prog("mapped_mem"), str(k), str(c)])
    assert run.proc.returncode == 0, run.proc.stderr
    assert_eq(run.proc.stdout, "mapped_mem: ok\n")
    allocs = run.q("SELECT a.api, a.kind, a.bytes, %s FROM allocations a JOIN api_calls c ON c.id = a.api_call_id "
                   "WHERE c.category = 'alloc' AND a.api != 'cudaMalloc' ORDER BY a.api_call_id" % site("c.stack_id"))
    assert_eq(allocs, [("cudaMallocHost", "pinned", 64 * KB, "main"),
                       ("cudaHostAlloc", "mapped", 1024 * KB, "map_alloc"),
                       ("cudaHostRegister", "mapped", 128 * KB, "map_register"),
                       ("cuMemHostAlloc", "mapped", 32 * KB, "map_driver"),
                       ("cudaMallocHost", "pinned", 16 * KB, "map_asked")])
    # the device pointers asked for are recorded calls
    assert_eq(run.q("SELECT name, category, count(*) FROM api_calls WHERE name LIKE '%GetDevicePointer%' GROUP BY 1"),
              [("cudaHostGetDevicePointer", "other", 2)])
    # each copy's host memory: mapped for the three mapped kinds and for the
    # pinned memory whose device pointer was asked for; CUPTI calls them all pinned
    copies = run.q("SELECT c.name, m.bytes, m.host_mem, m.gpu_src_kind, count(*) FROM memcpys m "
                   "JOIN api_calls c ON c.id = m.api_call_id GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3")
    assert_eq(copies, [("cuMemcpyHtoD_v2", 4 * KB, "mapped", "pinned", c),
                       ("cudaMemcpy", 64 * KB, "pageable", "pageable", c),
                       ("cudaMemcpyAsync", 4 * KB, "mapped", "pinned", c),
                       ("cudaMemcpyAsync", 64 * KB, "mapped", "pinned", 2 * c),
                       ("cudaMemcpyAsync", 64 * KB, "pinned", "pinned", c)])
    assert_eq(run.q("SELECT host_mem, count(*) FROM copy_args GROUP BY 1 ORDER BY 1"),
              [("mapped", 4 * c), ("pageable", c), ("pinned", c)])
    assert_eq(run.q1("SELECT count(*) FROM kernels WHERE name = 'zc_read'"), k)
    # the report: its figures against the oracle, and what it says about mapped memory
    assert_eq(oracle.verify([run.trace]), [])
    rc, doc, err = oracle.run_report([run.trace])
    assert_eq((doc["summary"]["mapped_host_allocs"], doc["summary"]["mapped_host_bytes"]),
              (3, (1024 + 128 + 32) * KB))
    assert_eq(sum(r["mapped_bytes"] for r in doc["h2d_hotspots"]), c * (64 + 64 + 4 + 4) * KB)
    assert_eq(sum(r["pinned_bytes"] for r in doc["h2d_hotspots"]), c * 64 * KB)
    import subprocess
    from gtlib import GPUTRACE
    text = subprocess.run([GPUTRACE, "report", run.trace], capture_output=True, text=True).stdout
    assert ("mapped (zero-copy) host memory: 1.2 MiB in 3 allocations; kernels read it\n"
            "  over the bus as they run, and CUPTI's kernel records do not say which\n"
            "  kernels or how many bytes: those reads are in no figure here\n") in text, text
    assert "pageable 0 B, pinned 0 B, mapped %d.0 KiB;" % (c * 64) in text, text


def test_trace_without_graph_nodes_still_reports():
    """A version 6 trace written before graph nodes were recorded (no
    graph_node_rows, no graph_nodes view) reads as before: no graph nodes
    section, every other figure as the oracle computes it."""
    import shutil
    import sqlite3
    import oracle
    run = graph_build()
    old = run.trace + ".old.db"
    shutil.copy(run.trace, old)
    con = sqlite3.connect(old)
    con.execute("DROP VIEW graph_nodes")
    con.execute("DROP TABLE graph_node_rows")
    con.commit()
    con.close()
    rc, doc, err = oracle.run_report([old])
    assert_eq(rc, 0, err)
    assert_eq(doc["graph_nodes"], [])
    assert_eq(oracle.verify([old]), [])
    # the graph launches' work is still counted, by launch site
    assert_eq(sum(r["kernels"] for r in doc["graph_launches"]), 2 * (2 * R1 + R2) + 3 * R3 + R4)


def test_static_runtime_graphs_are_caught_at_the_driver():
    """nvcc's default links the runtime statically: its cuGraph* calls reach
    the driver through cuGetProcAddress, where the hook table's driver
    entries catch them; the nodes and their replayed work link the same."""
    run = run_traced([prog("graph_build_static"), str(R1), str(R2), str(R3), str(R4)])
    assert run.proc.returncode == 0, run.proc.stderr
    assert_eq(run.proc.stdout, "graph_build: host node ran %d times\n" % (2 * R1 + R2))
    # the program's own function: the first frame outside the runtime linked into it
    user = ("(SELECT f.function FROM stack_frames f WHERE f.stack_id = %s AND f.function NOT LIKE 'cuda%%' "
            "AND f.function NOT LIKE 'fr\\_%%' ESCAPE '\\' ORDER BY f.depth LIMIT 1)")
    rows = run.q("SELECT k.name, n.api, %s, %s, count(*) FROM kernels k JOIN graph_nodes n ON n.node_id = k.graph_node_id "
                 "JOIN api_calls c ON c.id = k.api_call_id GROUP BY 1, 2, 3, 4 ORDER BY 1, 3, 4"
                 % (user % "n.stack_id", user % "c.stack_id"))
    assert_eq(rows, [("cap_c", "cuLaunchKernel", "capture_step", "replay_captured", 2 * R3),
                     ("cap_d", "cuLaunchKernel", "capture_step", "replay_captured", R3),
                     ("drv_node", "cuGraphAddKernelNode_v2", "build_driver", "replay_driver", R4),
                     ("node_a", "cuGraphAddKernelNode_v2", "build_nodes", "replay_clone", R2),
                     ("node_a", "cuGraphAddKernelNode_v2", "build_nodes", "replay_nodes", 2 * R1),
                     ("node_b", "cuGraphAddKernelNode_v2", "build_nodes", "replay_clone", R2),
                     ("node_b", "cuGraphAddKernelNode_v2", "build_nodes", "replay_nodes", 2 * R1)])
    assert_eq(run.q1("SELECT count(*) FROM kernels WHERE via = 'graph' AND graph_node_id IS NULL"), 0)
    assert_eq(run.q1("SELECT count(*) FROM graph_nodes WHERE cloned_from IS NOT NULL"), 6)


FORK_R = 3
MIB64 = 64 << 20


def test_fork_join_capture_attributes_every_node_to_its_call():
    """Issue 31, item 3: a capture that forks a second stream through an
    event and joins it back (NVIDIA's simpleCudaGraphs pattern). Each node
    is attributed to the call that made it, never to an event record or a
    wait that came after it; work on the joined stream is captured (it ran
    nothing when submitted); every node is in the report, whatever its
    kind. Truth: the program's own count of nodes and host runs, and the
    simulator's log of the GPU work each replay ran."""
    import oracle
    from gtlib import site_function, tmpdir
    import os
    log = os.path.join(tmpdir(), "fakecuda.log")
    run = run_traced([prog("graph_fork"), str(FORK_R)], env={"FAKECUDA_KERNEL_NS": "5000", "FAKECUDA_LOG": log})
    assert run.proc.returncode == 0, run.proc.stderr
    assert_eq(run.proc.stdout, "graph_fork: 5 nodes, host function ran %d times\n" % FORK_R)
    nodes = run.q("SELECT node_id, kind, kernel_name, api, %s FROM graph_nodes n ORDER BY node_id" % site("n.stack_id"))
    assert_eq([n[1:] for n in nodes],
              [("kernel", "fork_k", "cudaLaunchKernel", "capture_fork"),
               ("memcpy", None, "cudaMemcpyAsync", "capture_fork"),
               ("memset", None, "cudaMemsetAsync", "capture_fork"),
               ("host", None, "cudaLaunchHostFunc", "capture_fork"),
               ("kernel", "join_k", "cudaLaunchKernel", "capture_fork")])
    # each node's maker is the call made at its creation time
    assert_eq(run.q1("SELECT count(*) FROM graph_nodes n WHERE NOT EXISTS (SELECT 1 FROM api_calls c "
                     "WHERE c.tid = n.tid AND c.start_ns = n.api_start_ns AND c.name = n.api)"), 0)
    # every call inside the capture is flagged captured, on both streams; none outside
    calls = run.q("SELECT name, captured FROM api_calls WHERE start_ns > (SELECT start_ns FROM api_calls "
                  "WHERE name = 'cudaStreamBeginCapture') AND start_ns < (SELECT start_ns FROM api_calls "
                  "WHERE name = 'cudaStreamEndCapture') ORDER BY start_ns")
    assert_eq(calls, [("cudaLaunchKernel", 1), ("cudaEventRecord", 1), ("cudaStreamWaitEvent", 1),
                      ("cudaMemcpyAsync", 1), ("cudaMemsetAsync", 1), ("cudaLaunchHostFunc", 1),
                      ("cudaEventRecord", 1), ("cudaStreamWaitEvent", 1), ("cudaLaunchKernel", 1)])
    # the captured calls ran nothing: no GPU work is theirs
    assert_eq(run.q1("SELECT count(*) FROM gpu_op_calls o JOIN api_calls c ON c.id = o.call_id "
                     "WHERE c.captured = 1"), 0)
    # the simulator's log: per replay, each GPU node ran once, under its node id
    by_node = {}
    for line in open(log):
        f = line.split()
        if int(f[8]):  # kind name stream start end bytes corr graph-id graph-node-id
            by_node.setdefault(int(f[8]), []).append((f[0], int(f[5])))
    ids = {n[1] + (n[2] or ""): n[0] for n in nodes}
    assert_eq(sorted(by_node), sorted([ids["kernelfork_k"], ids["memcpy"], ids["memset"], ids["kerneljoin_k"]]))
    assert_eq([len(by_node[i]) for i in sorted(by_node)], [FORK_R] * 4)
    assert_eq(set(by_node[ids["memcpy"]]), {("memcpy", MIB64)})
    # the trace links the same work to the same nodes
    got = run.q("SELECT graph_node_id, count(*) FROM (SELECT graph_node_id FROM kernels WHERE via = 'graph' "
                "UNION ALL SELECT graph_node_id FROM memcpys WHERE graph_node_id IS NOT NULL "
                "UNION ALL SELECT graph_node_id FROM memsets WHERE graph_node_id IS NOT NULL) GROUP BY 1 ORDER BY 1")
    assert_eq(got, [(i, len(by_node[i])) for i in sorted(by_node)])
    # the report shows every node, the 64 MiB copy and the host function included
    assert_eq(oracle.verify([run.trace]), [])
    rc, doc, err = oracle.run_report([run.trace])
    assert_eq(rc, 0, err)
    rows = sorted((r["kind"], r["kernel"], site_function(r["created_at"][0]), r["nodes"], r["runs"])
                  for r in doc["graph_nodes"])
    assert_eq(rows, [("host", None, "capture_fork", 1, 0), ("kernel", "fork_k", "capture_fork", 1, FORK_R),
                     ("kernel", "join_k", "capture_fork", 1, FORK_R), ("memcpy", None, "capture_fork", 1, FORK_R),
                     ("memset", None, "capture_fork", 1, FORK_R)])

"""Call paths beyond plain symbol interposition: driver entry points that the
runtime and the driver hand out must come back wrapped, so the work done
through them is recorded like any other call."""
from gtlib import assert_eq, prog, run_traced, stack_functions


def test_runtime_driver_entry_points_come_back_wrapped():
    run = run_traced([prog("entry_point")])
    assert run.proc.returncode == 0, run.proc.stderr
    assert_eq(run.proc.stdout, "entry_point: 3 launches, 1 copy\n")
    ks = run.q("SELECT k.name, c.name, c.stack_id FROM kernels k JOIN api_calls c ON c.id = k.api_call_id")
    assert_eq(len(ks), 3, "launches through cudaGetDriverEntryPoint")
    assert all(k[0] == "ep_kernel" and k[1] == "cuLaunchKernel" for k in ks), ks
    assert_eq(stack_functions(run.trace, ks[0][2])[0], "ep_launches")
    # the per-thread variant asked of cudaGetDriverEntryPointByVersion
    copies = run.q("SELECT c.name, m.bytes, m.kind, m.stream, c.stack_id FROM memcpys m "
                   "JOIN api_calls c ON c.id = m.api_call_id")
    assert_eq([(c[0], c[1], c[2], c[3]) for c in copies], [("cuMemcpyHtoD_v2_ptds", 8192, "HtoD", 2)])
    assert_eq(stack_functions(run.trace, copies[0][4])[0], "ep_copy")
    # and their GPU work is linked to them
    assert_eq(run.q1("SELECT count(*) FROM gpu_activity WHERE linked = 0"), 0)
    assert_eq(run.q1("SELECT count(*) FROM gpu_activity"), 4)

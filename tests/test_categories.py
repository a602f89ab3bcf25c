"""GPU time by kind of work (docs/report.md, "Kernel categories").

build/tests/progs/kinds_work launches kernels named as cuBLAS, CUTLASS,
FlashAttention, xFormers, cuDNN, ATen, inductor and NCCL name theirs (some
mangled, as a .cu file registers them), with durations and launch counts
the program sets: the categories each name must fall in are written here,
from the libraries, and the report's figures are checked against the
program's own table and against tests/oracle_categories.py's recomputation
from the views and kernel_category_rules. A user's rules file overrides
the defaults; traces of every older schema version get the defaults; diff
sees a change of mix between two variants."""
import json
import os
import shutil
import sqlite3
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gtlib  # noqa: E402
import make_trace as mt  # noqa: E402
import oracle  # noqa: E402
import oracle_categories  # noqa: E402
from gtlib import assert_eq  # noqa: E402

GPUTRACE = os.environ.get("GPUTRACE_UNDER_TEST") or gtlib.GPUTRACE

# Each kernel kinds_work launches: (part of its name, category, duration
# in ns as the program registers it, launches per step, phase)
KINDS = [
    ("sm80_xmma_gemm_f32f32", "matmul", 2000000, 1, "forward"),
    ("nvjet_tst_192x176", "matmul", 1000000, 1, "backward"),
    ("pytorch_flash::flash_fwd_kernel", "attention", 1500000, 1, "forward"),
    ("fmha_cutlassF_f16", "attention", 500000, 1, "forward"),
    ("sm80_xmma_fprop_implicit_gemm", "convolution", 1200000, 1, "forward"),
    ("at::native::vectorized_elementwise_kernel", "elementwise", 300000, 1, "forward"),
    ("triton_poi_fused__native_batch_norm", "elementwise", 200000, 1, "forward"),
    ("triton_red_fused_add_bmm_mm_mul", "reduction", 400000, 1, "forward"),
    ("vectorized_layer_norm_kernel", "reduction", 250000, 1, "forward"),
    ("ncclKernel_AllReduce_RING_LL_Sum_half", "collective", 800000, 1, "backward"),
    ("cublasLt::epilogue::impl::globalKernel", "matmul", 150000, 1, "backward"),
    ("scal_kernel<float, float", "matmul", 50000, 1, "backward"),
    ("multi_tensor_apply_kernel", "elementwise", 120000, 1, "backward"),
    ("kinds_custom_kernel", "other", 100000, 1, "forward"),
]
STEPS = 2
_TRACES = {}


def gt(*args, env=None):
    e = dict(os.environ)
    e.pop("GPUTRACE_CATEGORIES", None)
    e.update(env or {})
    return subprocess.run([GPUTRACE] + list(args), capture_output=True, text=True, timeout=120, env=e)


def trace(variant="base"):
    if variant not in _TRACES:
        r = gtlib.run_traced([gtlib.prog("kinds_work"), variant], env={"NVTX_INJECTION64_PATH": gtlib.SHIM})
        assert r.proc.returncode == 0, r.proc.stderr
        assert "kinds_work: %s done" % variant in r.proc.stdout
        _TRACES[variant] = r.trace
    return _TRACES[variant]


def report(path, *args, env=None):
    r = gt("report", "--format", "json", "--top", "0", *args, path, env=env)
    assert_eq(r.returncode, 0, r.stderr)
    return json.loads(r.stdout)


def oracle_errors(path, doc, user_rules=()):
    c = oracle.Checker()
    oracle_categories.check(c, oracle.expected([path]), doc, user_rules)
    return c.errs


def want_from_program(variant="base", phase=None):
    """{category: (operations, GPU ns)} from the program's own table."""
    out = {}
    for _, cat, ns, per_step, ph in KINDS:
        if phase and ph != phase:
            continue
        if variant == "attn" and cat == "convolution":
            continue
        if variant == "attn" and "flash_fwd" in _:
            ns *= 3
        n, t = out.get(cat, (0, 0))
        out[cat] = (n + per_step * STEPS, t + ns * per_step * STEPS)
    return out


def kernel_rows(doc, cats=("copy", "memset")):
    return {r["category"]: (r["count"], r["gpu_ns"]) for r in doc if r["category"] not in cats}


def test_categories_of_library_kernels():
    """Every library's kernel falls in its category in the SQL view and in
    the report; per category, the operations and GPU time the program
    launched; the copies and memsets it made; shares adding up to 100."""
    path = trace()
    rows = gtlib.query(path, "SELECT name, category, end_ns - start_ns FROM kernel_categories")
    assert_eq(len(rows), sum(k[3] for k in KINDS) * STEPS)
    for name, cat, dur in rows:
        match = [k for k in KINDS if k[0] in name]
        assert len(match) == 1, (name, match)
        assert_eq((cat, dur), (match[0][1], match[0][2]), name)
    doc = report(path)
    cats = doc["categories"]
    assert_eq(kernel_rows(cats), want_from_program())
    by = {r["category"]: r for r in cats}
    assert_eq(by["copy"]["count"], STEPS)
    assert_eq(by["memset"]["count"], STEPS)
    assert abs(sum(r["share_pct"] for r in cats) - 100.0) < 1e-3, cats
    assert_eq([r["gpu_ns"] for r in cats], sorted((r["gpu_ns"] for r in cats), reverse=True))
    assert_eq(oracle_errors(path, doc), [])


def test_categories_per_phase_and_step():
    """The forward and backward phases (each synced before its range ends)
    hold the kernels the program launched in them; each listed step holds
    one step's worth."""
    path = trace()
    doc = report(path)
    phases = {p["name"]: p for p in doc["phases"]}
    assert_eq(sorted(phases), ["backward", "forward"])
    for ph in ("forward", "backward"):
        assert_eq(kernel_rows(phases[ph]["categories"]), want_from_program(phase=ph), ph)
    fwd = {r["category"] for r in phases["forward"]["categories"]}
    assert "copy" in fwd and "collective" not in fwd, fwd
    steps = doc["steps"][0]["slowest"]
    assert steps, doc["steps"]
    for s in steps:
        got = kernel_rows(s["categories"])
        assert_eq(got, {c: (n // STEPS, t // STEPS) for c, (n, t) in want_from_program().items()})
    assert_eq(oracle_errors(path, doc), [])
    # and the whole report agrees with the oracle too
    assert_eq(oracle.check([path], doc), [])


def test_categories_in_text_and_html():
    path = trace()
    r = gt("report", path)
    assert_eq(r.returncode, 0, r.stderr)
    assert "GPU time by kind of work" in r.stdout, r.stdout[:2000]
    section = r.stdout.split("GPU time by kind of work", 1)[1].split("\n\n", 1)[0]
    for cat in ("matmul", "attention", "convolution", "elementwise", "reduction", "collective", "other", "copy",
                "memset"):
        assert "\n  %s " % cat in section, (cat, section)
    assert "GPU work: matmul" in r.stdout, r.stdout
    out = os.path.join(gtlib.tmpdir(), "r.html")
    r = gt("report", "--format", "html", "-o", out, path)
    assert_eq(r.returncode, 0, r.stderr)
    html = open(out).read()
    assert "id=categories" in html and "<td>attention</td>" in html, "no categories table"


def test_pytorch_kernels_by_their_own_names():
    """PyTorch 2.15's own kernels, as libtorch_cuda names them (demangled by
    the tracer): its elementwise kernels (a multiply, a clamp, an add, a
    dtype conversion, the random number generator) are elementwise; its
    softmax, layer norm and sum are reductions; none is left `other`."""
    d = gtlib.tmpdir()
    script = os.path.join(gtlib.ROOT, "tests", "progs", "py", "kinds_torch.py")
    r = subprocess.run([GPUTRACE, "record", "-q", "-o", os.path.join(d, "t.db"), "--", gtlib.PYENV_PYTHON, script],
                       env=gtlib.torch_env(), capture_output=True, text=True, timeout=600)
    assert_eq(r.returncode, 0, r.stderr[-3000:])
    path = os.path.join(d, "t.db")
    want = {"distribution_elementwise_grid_stride_kernel": "elementwise", "BinaryFunctor": "elementwise",
            "launch_clamp_scalar": "elementwise", "CUDAFunctorOnSelf_add": "elementwise",
            "softmax_warp_forward": "reduction", "vectorized_layer_norm_kernel": "reduction",
            "at::native::reduce_kernel<": "reduction"}
    rows = gtlib.query(path, "SELECT DISTINCT name, category FROM kernel_categories")
    seen = set()
    for name, cat in rows:
        assert cat != "other", name
        for part, c in want.items():
            if part in name:
                assert_eq(cat, c, name)
                seen.add(part)
    assert_eq(seen, set(want))
    doc = report(path)
    assert_eq(oracle_errors(path, doc), [])
    assert "other" not in {x["category"] for x in doc["categories"]}, doc["categories"]


def test_user_rules_override():
    """A user's rules come before the trace's: nvjet_ kernels named apart,
    the custom kernel given a category of its own; from --categories and
    from GPUTRACE_CATEGORIES alike. A file that is not rules is refused."""
    path = trace()
    d = gtlib.tmpdir()
    rules = os.path.join(d, "mine.tsv")
    with open(rules, "w") as f:
        f.write("# my team's kernels\nnvjet_*\thopper_gemm\n\n*kinds_custom*\tcustom\n")
    user = oracle_categories.read_rules(rules)
    assert_eq(user, [("nvjet_*", "hopper_gemm"), ("*kinds_custom*", "custom")])
    for args, env in (((("--categories", rules)), None), ((), {"GPUTRACE_CATEGORIES": rules})):
        doc = report(path, *args, env=env)
        got = kernel_rows(doc["categories"])
        want = want_from_program()
        want["matmul"] = (want["matmul"][0] - STEPS, want["matmul"][1] - 1000000 * STEPS)
        want["hopper_gemm"] = (STEPS, 1000000 * STEPS)
        want["custom"] = want.pop("other")
        assert_eq(got, want)
        assert_eq(oracle_errors(path, doc, user), [])
    bad = os.path.join(d, "bad.tsv")
    with open(bad, "w") as f:
        f.write("nvjet_* matmul\n")
    r = gt("report", "--categories", bad, path)
    assert_eq(r.returncode, 2, r.stderr)
    assert "bad.tsv:1: not a category rule" in r.stderr, r.stderr
    r = gt("report", "--categories", os.path.join(d, "missing.tsv"), path)
    assert_eq(r.returncode, 2, r.stderr)


def test_old_traces_get_the_default_rules():
    """Traces of versions 1 to 8 (tests/data/gputrace-v*.sql) have no rules
    of their own: the report reads them with the defaults, as a version 9
    trace of the same calls reads its own."""
    names = [k[0] for k in KINDS if "::" not in k[0]] + ["void at::native::reduce_kernel<512, 1>(int)"]
    calls = [mt.launch(n) for n in names]
    d = gtlib.tmpdir()
    docs = {}
    for v in range(1, 10):
        schema = os.path.join(gtlib.ROOT, "tests", "data", "gputrace-v%d.sql" % v) if v < 9 else mt.SCHEMA
        path = mt.make_trace(os.path.join(d, "v%d.db" % v), calls=calls, schema=schema)
        db = sqlite3.connect(path)
        for i, (cid,) in enumerate(db.execute("SELECT call_id FROM launch_args ORDER BY call_id").fetchall()):
            end = mt.START_NS + mt.STEP_NS * cid + mt.CALL_NS
            mt.add_gpu_op(db, "kernel", cid, end + 100, end + 100 + 1000 * (i + 1))
        db.execute("INSERT OR REPLACE INTO meta VALUES ('gpu_timing', 'cupti')")
        db.commit()
        db.close()
        doc = report(path)
        assert_eq(oracle_errors(path, doc), [], "v%d" % v)
        docs[v] = [{k: r[k] for k in ("category", "count", "gpu_ns")} for r in doc["categories"]]
    for v in range(1, 9):
        assert_eq(docs[v], docs[9], "v%d" % v)
    assert_eq({r["category"] for r in docs[9]},
              {"matmul", "attention", "convolution", "elementwise", "reduction", "collective", "other"})
    # the version 9 trace's own SQL view says the same
    got = dict(gtlib.query(os.path.join(d, "v9.db"), "SELECT category, count(*) FROM kernel_categories "
                                                      "GROUP BY category"))
    assert_eq(got, {r["category"]: r["count"] for r in docs[9]})


def test_diff_sees_a_change_of_mix():
    """attn runs the attention kernel three times as long and no
    convolution: diff says attention's GPU time rose and convolution
    vanished; matmul stays the same."""
    base, new = trace("base"), trace("attn")
    r = gt("diff", "--format", "json", base, "--vs", new)
    assert_eq(r.returncode, 0, r.stderr)
    rows = {(x["name"], x["measure"]): x for x in json.loads(r.stdout)["rows"] if x["kind"] == "category"}
    att = rows[("attention", "total")]
    assert_eq(att["status"], "changed", att)
    want_b, want_n = want_from_program()["attention"][1], want_from_program("attn")["attention"][1]
    assert_eq((att["base_raw"], att["new_raw"]), (want_b, want_n), att)
    assert_eq(rows[("convolution", "total")]["status"], "vanished", rows[("convolution", "total")])
    assert_eq(rows[("matmul", "total")]["status"], "same", rows[("matmul", "total")])
    r = gt("diff", base, new)
    assert "category    attention: GPU time" in r.stdout, r.stdout


def test_schema_rules_are_the_shipped_file():
    """schema/gputrace.sql's kernel_category_rules rows are
    analyzer/trace/kernel_categories.tsv's, in order
    (scripts/gen_category_rules.py copies them)."""
    r = subprocess.run([sys.executable, os.path.join(gtlib.ROOT, "scripts", "gen_category_rules.py"), "--check"])
    assert_eq(r.returncode, 0, "run scripts/gen_category_rules.py")
    db = sqlite3.connect(":memory:")
    db.executescript(open(mt.SCHEMA).read())
    got = db.execute("SELECT pattern, category FROM kernel_category_rules ORDER BY priority").fetchall()
    assert_eq(got, oracle_categories.read_rules(oracle_categories.TSV))
    cats = {c for _, c in got}
    assert cats <= set(oracle_categories.STANDARD), cats


if __name__ == "__main__":
    gtlib.main(globals())

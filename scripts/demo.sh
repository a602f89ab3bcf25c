#!/usr/bin/env bash
# make demo: a training-like workload (demo/train.cu) traced and reported,
# on the GPU when this machine has one, else on the simulated GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${DEMO_DIR:-build/demo}"
mkdir -p "$out"
rm -f "$out"/train-*.db
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
    # the toolkit's runtime first: the program's own search path names the simulated one
    export LD_LIBRARY_PATH="${CUDA:-/usr/local/cuda}/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    echo "demo: on this machine's GPU ($(nvidia-smi -L | head -1))"
else
    # the simulated GPU: 200 us for the matmul, 2 us for each tiny kernel,
    # launches that take 5 us of host time (a real GPU's are about that)
    export FAKECUDA_KERNEL_NS="2000,matmul_like=200000" FAKECUDA_LAUNCH_NS=5000
    echo "demo: on the simulated GPU (tests/fakecuda; no GPU found on this machine)"
fi
echo "demo: build/gputrace record -o $out/train-%p.db -- build/demo/train"
echo
build/gputrace record -o "$out/train-%p.db" -- build/demo/train
trace=$(ls -t "$out"/train-*.db | head -1)
echo
build/gputrace report --top 5 "$trace"
build/gputrace report --format html -o "$out/report.html" "$trace"
echo
echo "demo: the trace is $trace"
echo "demo: the same report as a page: $out/report.html"
echo "demo: try SQL on it, for example the kernels by GPU time:"
echo "  sqlite3 $trace \"SELECT name, count(*), sum(end_ns - start_ns) / 1e6 AS gpu_ms FROM kernels GROUP BY name ORDER BY gpu_ms DESC\""

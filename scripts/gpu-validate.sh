#!/usr/bin/env bash
# gpu-validate.sh: proof on a real GPU, in one command (under 10 minutes).
#
#   scripts/gpu-validate.sh [--simulated] [--out DIR]
#
# Builds gputrace (unless build/ is already there, as when it was built on
# another machine and carried over) and runs real programs under it:
# CUDA C++ built with shared and with static cudart; a PyTorch training
# loop with DataLoader workers, pageable and pinned H2D copies, a .item()
# sync per step and a planted host stall; a torch.compile step (Triton
# kernels); a CUDA Graph replay. For each it checks that every GPU record
# CUPTI delivered is linked to the call that caused it and that the counts
# agree, that Python sites name the right lines, and that the report finds
# the stall, the pageable copies and the launch-bound kernels; then it
# times the loop untraced, under gputrace and under the PyTorch profiler.
# A standby job with GPUTRACE_TRIGGER=idle>50% checks the real NVML's
# utilization opens a window during a planted 3 s stall.
# Results: DIR/validation.json and DIR/validation.md (for docs/validation.md).
#
# Libraries the shim needs that the machine lacks (libunwind, libsqlite3)
# can be carried in build/carry/: they are put on LD_LIBRARY_PATH.
# --simulated runs what it can on the simulated GPU (tests/fakecuda), to
# check the script itself on a machine without one.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=build/validate
SIM=()
while [ $# -gt 0 ]; do
    case "$1" in
    --simulated) SIM=(--simulated); shift ;;
    --out) OUT="$2"; shift 2 ;;
    -h|--help) sed -n '2,23p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "gpu-validate: unknown argument $1" >&2; exit 2 ;;
    esac
done
if [ ! -x build/gputrace ] || [ ! -f build/libgputrace.so ]; then
    make -j"$(nproc)" all
fi
if [ ${#SIM[@]} -gt 0 ]; then
    make -j"$(nproc)" tests-build >/dev/null
    export LD_LIBRARY_PATH="$PWD/build/fakecuda${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
if [ -d build/carry ]; then
    export LD_LIBRARY_PATH="$PWD/build/carry${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
mkdir -p "$OUT"
exec python3 scripts/validate/run.py --out "$OUT" "${SIM[@]}"

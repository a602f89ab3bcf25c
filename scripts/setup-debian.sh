#!/usr/bin/env bash
# Installs what a fresh Debian machine lacks to build and test gputrace.
# CUDA 13 (headers, nvcc) is expected at /usr/local/cuda (or CUDA=...).
set -euo pipefail
need=()
for pkg in gcc make libunwind-dev libdw-dev libsqlite3-dev sqlite3 xxd python3 libjemalloc2 libtcmalloc-minimal4 chromium chromium-driver \
           libprotobuf-c-dev protobuf-c-compiler protobuf-compiler zlib1g-dev; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}"
fi
# The Python tests build a small C extension against the python3 that runs them.
if ! python3 -c 'import os, sys, sysconfig; sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))'; then
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq python3-dev
fi
cuda="${CUDA:-/usr/local/cuda}"
if [ ! -f "$cuda/include/cuda.h" ] || [ ! -x "$cuda/bin/nvcc" ]; then
    echo "setup: CUDA toolkit not found at $cuda (set CUDA=/path/to/cuda)" >&2
    exit 1
fi
echo "setup: ready"

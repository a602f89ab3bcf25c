#!/usr/bin/env bash
# Installs the tests' Python packages from PyPI, pinned to exact versions in
# scripts/python-requirements.txt (PyTorch, CuPy and the nvtx package, the
# real clients the suite traces on the simulated GPU; Selenium, which drives
# Debian's chromium for the browser tests; dask.distributed, on which
# docs/ranks.md's Dask recipe runs), into the virtual environment
# build/pyenv. A venv that already holds exactly this list is reused as it is.
#
# GPUTRACE_PYENV=DIR uses DIR instead (a second checkout can share one
# environment rather than unpack PyTorch again).
set -euo pipefail
cd "$(dirname "$0")/.."
venv="${GPUTRACE_PYENV:-build/pyenv}"
lock=scripts/python-requirements.txt
stamp="$venv/.gputrace-requirements"
python="${PYTHON:-python3}"
if [ -x "$venv/bin/python" ] && cmp -s "$stamp" "$lock"; then
    echo "setup-python: ready ($venv)"
    exit 0
fi
if [ ! -x "$venv/bin/python" ]; then
    # Debian's own python3 keeps venv's ensurepip in a package of its own.
    if ! "$python" -m venv "$venv" 2>/dev/null; then
        SUDO=""
        [ "$(id -u)" -eq 0 ] || SUDO="sudo"
        $SUDO apt-get update -qq
        DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq python3-venv
        rm -rf "$venv"
        "$python" -m venv "$venv"
    fi
fi
echo "setup-python: installing the pinned test clients into $venv (PyTorch is a few GB the first time)"
for attempt in 1 2; do
    if "$venv/bin/pip" install --disable-pip-version-check --quiet --no-input -r "$lock"; then
        cp "$lock" "$stamp"
        echo "setup-python: ready ($venv)"
        exit 0
    fi
    echo "setup-python: pip install failed (attempt $attempt of 2)" >&2
    sleep 5
done
echo "setup-python: could not install $lock from PyPI" >&2
exit 1

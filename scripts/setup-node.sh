#!/usr/bin/env bash
# Installs the tests' Node dependencies (tests/package.json: puppeteer-core,
# which drives the system's chromium in tests/test_html_timeline.py) into
# tests/node_modules, from tests/package-lock.json. Does nothing when they
# are there already; node and npm come from Debian when missing.
#
# A machine that cannot reach a package registry still builds and tests:
# the failure is written to tests/node_modules/.gputrace-install-failed,
# one warning line says so, and the HTML timeline tests are skipped with
# that reason (never counted as passed).
set -uo pipefail
cd "$(dirname "$0")/.."
marker=tests/node_modules/.gputrace-install-failed
give_up() {
    mkdir -p tests/node_modules
    echo "$1" > "$marker"
    echo "setup: WARNING: $1; the HTML timeline tests will be skipped" >&2
    exit 0
}
if [ -f tests/node_modules/puppeteer-core/package.json ] && command -v node >/dev/null 2>&1; then
    rm -f "$marker"
    echo "setup: test dependencies ready"
    exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq nodejs npm; } ||
        give_up "node and npm could not be installed from Debian"
fi
for attempt in 1 2; do
    if npm ci --prefix tests --no-audit --no-fund --loglevel=error --fetch-retries=1 --fetch-retry-mintimeout=2000 \
        --fetch-retry-maxtimeout=5000 --fetch-timeout=120000; then
        rm -f "$marker"
        echo "setup: test dependencies ready"
        exit 0
    fi
    echo "setup: npm ci failed (attempt $attempt of 2)" >&2
    sleep 5
done
give_up "npm could not install puppeteer-core from tests/package-lock.json (is a package registry reachable?)"

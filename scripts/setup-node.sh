#!/usr/bin/env bash
# Installs the tests' Node dependencies (tests/package.json: puppeteer-core,
# which drives the system's chromium in tests/test_html_timeline.py) into
# tests/node_modules, from tests/package-lock.json. Does nothing when they
# are there already; node and npm come from Debian when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v npm >/dev/null 2>&1; then
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq nodejs npm
fi
if [ ! -f tests/node_modules/puppeteer-core/package.json ]; then
    npm ci --prefix tests --no-audit --no-fund --loglevel=error
fi
echo "setup: test dependencies ready"

#!/usr/bin/env bash
# Install, build, and run every test (doctest cases and end-to-end runs, through ctest).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh build >/dev/null
ctest --test-dir build --output-on-failure -j "$(nproc)"

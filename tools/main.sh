#!/usr/bin/env bash
# Install, build, and run the main job on its embedded default.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh build >/dev/null
./build/slubsim "$@"

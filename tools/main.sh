#!/usr/bin/env bash
# Install what is missing, build the simulator (only it: tools/test.sh builds the tests), and run
# the main job on its embedded default. On a terminal the build shows one progress line.
set -euo pipefail
cd "$(dirname "$0")/.."
echo "main.sh: installing what is missing and building build/slubsim (a few minutes on 2 cores the first time)" >&2
if [ -t 2 ]; then
  SLUBSIM_TARGET=slubsim bash tools/setup.sh build 2>&1 | while IFS= read -r line; do
    case "$line" in
      \[*%\]*) printf '\r\033[K%s' "${line:0:100}" >&2 ;;
      *) printf '\r\033[K%s\n' "$line" >&2 ;;
    esac
  done
  printf '\r\033[K' >&2
else
  SLUBSIM_TARGET=slubsim bash tools/setup.sh build >&2
fi
[ -x build/slubsim ] || { echo "main.sh: the build failed" >&2; exit 1; }
./build/slubsim "$@"

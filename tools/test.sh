#!/usr/bin/env bash
# Install, build, and run every test (doctest cases and end-to-end runs, through ctest); then
# the same suite again in an AddressSanitizer + UndefinedBehaviorSanitizer build; then every
# libFuzzer target for SLUBSIM_FUZZ_SECONDS (20) seconds (tools/fuzz.sh, clang++).
# The sanitizer pass leaves out the tests labelled heavy (tests/CMakeLists.txt: long runs whose code
# the other tests take too), so CI stays under 45 minutes.
# SLUBSIM_SKIP_SANITIZE=1 skips the sanitizer pass and the fuzzers (quicker local runs).
# The Slurm test (e2e.slurm) needs Debian's slurm-wlm and munge, installed here; it starts its own
# daemons as root, and skips when not root.
set -euo pipefail
cd "$(dirname "$0")/.."
SLUBSIM_EXTRA_PACKAGES="slurm-wlm munge" bash tools/setup.sh build >/dev/null
ctest --test-dir build --output-on-failure -j "$(nproc)"
if [ "${SLUBSIM_SKIP_SANITIZE:-0}" != 1 ]; then
  echo "== the test suite again under ASan and UBSan, less the heavy runs"
  bash tools/setup.sh build-asan -DSLUBSIM_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --test-dir build-asan --output-on-failure -j "$(nproc)" -LE heavy
  echo "== the fuzz targets, ${SLUBSIM_FUZZ_SECONDS:-20} s each"
  bash tools/fuzz.sh "${SLUBSIM_FUZZ_SECONDS:-20}"
fi

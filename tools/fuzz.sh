#!/usr/bin/env bash
# Build the libFuzzer targets (clang++, ASan + UBSan; fuzz/) and run each for a bounded time on
# a scratch copy of its corpus (tests/fuzz/corpus/<target>, not changed).
#   tools/fuzz.sh [seconds per target] [target...]     e.g. tools/fuzz.sh 20 topology cli
# A crash, hang (over 10 s on one input), leak or sanitizer report fails; the input that did it
# is left in build-fuzz/findings/.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-15}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(topology costs kernel caches workload experiment trace cli sweep)
SLUBSIM_EXTRA_PACKAGES="clang libclang-rt-dev" bash tools/setup.sh build-fuzz -DSLUBSIM_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
mkdir -p build-fuzz/findings
failed=0
for t in "${targets[@]}"; do
  work=$(mktemp -d)
  cp -r "tests/fuzz/corpus/$t/." "$work/"
  if ./build-fuzz/fuzz_"$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
       -artifact_prefix=build-fuzz/findings/"$t"- "$work" >"build-fuzz/fuzz_$t.log" 2>&1; then
    echo "fuzz $t: ok ($(grep -o 'stat::number_of_executed_units: *[0-9]*' "build-fuzz/fuzz_$t.log" | grep -o '[0-9]*$') inputs in ${seconds} s)"
  else
    echo "fuzz $t: FAILED"; tail -n 30 "build-fuzz/fuzz_$t.log"; failed=$((failed + 1))
  fi
  rm -rf "$work"
done
echo "$(( ${#targets[@]} - failed )) passed, $failed failed"
[ $failed -eq 0 ]

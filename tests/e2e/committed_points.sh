#!/usr/bin/env bash
# End-to-end: the cheapest committed experiments, rerun, give the committed results byte for
# byte (stats.json and matrix.json; host.json holds wall time). A speed change that alters one
# of these is a model change. $1 = slubsim binary, $2 = the source tree.
set -uo pipefail
source "$(dirname "$0")/lib.sh"
bin=$(realpath "$1")
src=$(realpath "$2")

# The network experiments (t15, t16) cost half a minute a point since 2026-12-03; their
# determinism is a unit test (test_network_workloads.cpp).
ids=t06-lkp-mmap2-srf192
"$bin" validate --home "$src" --only "$ids" --out "$tmp/out" --jobs 2 --quiet --validate >/dev/null || { fail "validate --only $ids"; exit 1; }
n=0
for id in ${ids//,/ }; do
  for dir in "$src/results/$id"/*/*/; do
    rel=${dir#"$src/results/"}
    for f in stats.json matrix.json; do
      n=$((n + 1))
      if [ ! -f "$tmp/out/$rel$f" ]; then fail "$rel$f: not written"; continue; fi
      cmp -s "$dir$f" "$tmp/out/$rel$f" ||
        fail "$rel$f differs from the committed one: $(diff <("$py" -m json.tool "$dir$f") <("$py" -m json.tool "$tmp/out/$rel$f") | head -5)"
    done
  done
done
[ $n -ge 4 ] || fail "only $n committed files compared"
[ $failures -eq 0 ] && ok "$n committed result files reproduced byte for byte"
[ $failures -eq 0 ]

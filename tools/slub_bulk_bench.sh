#!/usr/bin/env bash
# slub_bulk_bench in native mode: host ns/object of the model's kmem_cache_alloc_bulk and
# kmem_cache_free_bulk over the seed's (object size, batch) grid, before and after the
# skip-freelist patch (v7.0 without / with it). Arguments go to the binary, e.g.
#   tools/slub_bulk_bench.sh                       # 20 rounds of 256 MB, FREELIST_RANDOM on (~1 min)
#   tools/slub_bulk_bench.sh --total-mb 32 --rounds 5 --freelist-random off
#   tools/slub_bulk_bench.sh --grid 64:64,192:42 --json
# SLUBSIM_BUILD_DIR picks the build directory (default build).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${SLUBSIM_BUILD_DIR:-build}
bash tools/setup.sh "$build" >/dev/null
"./$build/slub_bulk_bench" "$@"

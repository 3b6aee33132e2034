#!/usr/bin/env bash
# Regenerate every committed plot from the committed results:
#   tools/plots.sh [RESULTS_DIR [EXPERIMENTS_DIR]]     (defaults: results, configs/experiments)
# For each RESULTS/<id>/<topology>/ (variant dirs inside), into RESULTS/plots/:
#   <id>--<topology>.png           throughput against nr_task per variant, with the published
#                                  values of EXPERIMENTS/<id>.json when it exists
#   <id>--<topology>-capacity.png  when the variants sweep the sheaf capacity
#   <id>--<topology>-locks.png     lock wait per class and node, and
#   <id>--<topology>-why.png       why.<category>.percent, for the T01 experiments (t01*)
#   scoreboard.png                 from RESULTS/scoreboard.json
# An experiment defined in EXPERIMENTS without results is skipped with a message.
# Needs Debian's python3-matplotlib (tools/setup.sh installs it); runs /usr/bin/python3.
set -uo pipefail
cd "$(dirname "$0")/.."
results=${1:-results}
experiments=${2:-configs/experiments}
py=${PYTHON:-/usr/bin/python3}
plot() { "$py" tools/plot.py "$@"; }
# run KIND ARGS... -o OUT: count the plots written and the failures; pass on what plot.py says
# other than "wrote" (a plot it skipped, an error)
run() {
  local said rc out=${*: -1}
  said=$(plot "$@" 2>&1)
  rc=$?
  grep -v '^plot: wrote' <<<"$said" || true
  if [ $rc -ne 0 ]; then failed=$((failed + 1)); elif [ -f "$out" ]; then made=$((made + 1)); fi
}

if ! "$py" -c "import matplotlib" 2>/dev/null; then
  echo "plots: error: $py has no matplotlib: apt-get install python3-matplotlib (tools/setup.sh does)" >&2
  exit 2
fi
out="$results/plots"
[ -d "$results" ] || echo "plots: no $results/ directory: no results committed yet"
failed=0
made=0

if [ -d "$experiments" ]; then
  for f in "$experiments"/*.json; do
    [ -e "$f" ] || continue
    id=$(basename "$f" .json)
    [ -d "$results/$id" ] || echo "plots: $id: no results under $results/$id, skipped"
  done
fi

shopt -s nullglob
for expdir in "$results"/*/; do
  id=$(basename "$expdir")
  [ "$id" = plots ] && continue
  tops=()
  for t in "$expdir"*/; do tops+=("${t%/}"); done
  if [ ${#tops[@]} -eq 0 ]; then
    echo "plots: $id: no <topology>/ result dirs under $expdir, skipped"
    continue
  fi
  published=()
  [ -f "$experiments/$id.json" ] && published=(--published "$experiments/$id.json")
  # T12's single-thread microbenchmark: one task count, and its published figures are times in
  # units not stated, which a throughput-against-task-count plot would draw as rates; its cells
  # are in the scoreboard and its plot.
  if [ -f "$experiments/$id.json" ] &&
     "$py" -c 'import json,sys; sys.exit(0 if json.load(open(sys.argv[1]))["workload"] == "slub-kunit-bench" else 1)' "$experiments/$id.json"; then
    echo "plots: $id: a microbenchmark in unstated time units, no throughput plot (its cells are in the scoreboard plot)"
    continue
  fi
  for top in "${tops[@]}"; do
    name="$id--$(basename "$top")"
    if [ -z "$(find "$top" -name stats.json)" ]; then
      echo "plots: $id/$(basename "$top"): no stats.json, skipped"
      continue
    fi
    mkdir -p "$out"
    run experiment "$top" -o "$out/$name.png" "${published[@]}"
    caps=$(find "$top" -name stats.json -path '*_sheaf_capacity=*' | sed 's|.*_sheaf_capacity=||; s|/stats.json||' | sort -u | wc -l)
    [ "$caps" -ge 2 ] && run capacity "$top" -o "$out/$name-capacity.png"
    case "$id" in
      [tT]01*)
        run locks "$top" -o "$out/$name-locks.png"
        if [ -n "$(find "$top" -name stats.json -exec grep -l '"why\.' {} +)" ]; then
          run why "$top" -o "$out/$name-why.png"
        else
          echo "plots: $id/$(basename "$top"): no why.<category>.percent keys yet, why plot skipped"
        fi
        ;;
    esac
  done
done

if [ -f "$results/scoreboard.json" ]; then
  mkdir -p "$out"
  run scoreboard "$results/scoreboard.json" -o "$out/scoreboard.png"
else
  echo "plots: no $results/scoreboard.json, scoreboard plot skipped"
fi
echo "plots: $made plots in $out, $failed failed"
[ $failed -eq 0 ]

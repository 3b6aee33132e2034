#!/usr/bin/env bash
# Submit a slubsim sweep to Slurm: a job array of shards (one CPU each) and a merge job that runs
# when the array has ended. The results land in OUT exactly as `slubsim sweep ... --out OUT` would
# write them on one host; OUT/shards/K holds shard K's points and OUT/logs the jobs' output.
#
#   tools/slurm/submit.sh [--tasks N] [--bin SLUBSIM] [--parsable] [SBATCH_OPTION...] --out OUT \
#       SWEEP_FILE [sweep options...]
#
#   --tasks N      array tasks (default: one per 8 points, at most 256; never more than the points)
#   --bin PATH     the slubsim binary (default: build/slubsim beside this script's tree); it and the
#                  source tree (configs/, workloads/) must be on a file system every node sees
#   --parsable     print only "ARRAY_JOB_ID MERGE_JOB_ID"
#   other --options before --out go to both sbatch calls (e.g. --partition=short --time=30)
#
# Example (three commands, from the source tree on the cluster's shared file system):
#   bash tools/setup.sh build
#   tools/slurm/submit.sh --tasks 64 --out $SCRATCH/capsweep configs/sweeps/capacity-small.json
#   cat $SCRATCH/capsweep/logs/merge.out        # after the merge job ends; results in $SCRATCH/capsweep
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tree=$(cd "$here/../.." && pwd)
source "$here/args.sh"
submit_args submit.sh 18 "" "$@"
set -- "${rest[@]+"${rest[@]}"}"
[ $# -gt 0 ] || { echo "submit.sh: error: no sweep after --out OUT (a sweep FILE and/or options)" >&2; exit 2; }
sweep=("$@")
# A sweep file given relative to here must still be found from the jobs' working directory.
if [ -f "${sweep[0]}" ]; then sweep[0]=$(cd "$(dirname "${sweep[0]}")" && pwd)/$(basename "${sweep[0]}"); fi

# The plan checks the sweep (bad input stops here, before anything is queued) and counts its points.
mkdir -p "$out/logs"
"$bin" sweep "${sweep[@]}" --plan "$out/plan.json" --quiet
points=$(sed -n 's/^ "points_total": \([0-9]*\),$/\1/p' "$out/plan.json")
[ -n "$points" ] || { echo "submit.sh: error: $out/plan.json: no points_total" >&2; exit 1; }
if [ -z "$tasks" ]; then
  tasks=$(( (points + 7) / 8 ))
  [ "$tasks" -le 256 ] || tasks=256
fi
[ "$tasks" -ge 1 ] 2>/dev/null || { echo "submit.sh: error: --tasks '$tasks' is not a whole number from 1" >&2; exit 2; }
[ "$tasks" -le "$points" ] || tasks=$points

array=$(sbatch --parsable "${sbatch_opts[@]}" --array="1-$tasks" --chdir="$tree" \
          --output="$out/logs/shard-%a.out" "$here/sweep.sbatch" "$bin" "$out" "${sweep[@]}")
array=${array%%;*}
merge=$(sbatch --parsable "${sbatch_opts[@]}" --dependency="afterany:$array" --chdir="$tree" \
          --output="$out/logs/merge.out" "$here/merge.sbatch" "$bin" "$out")
merge=${merge%%;*}
if [ $parsable -eq 1 ]; then
  echo "$array $merge"
else
  echo "submitted: job array $array ($tasks shards of $points points) and merge job $merge"
  echo "results: $out (when job $merge ends; its log: $out/logs/merge.out)"
fi

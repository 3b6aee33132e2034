#!/usr/bin/env bash
# Submit a slubsim advise search to Slurm: a job array with one task count's search per task
# (each runs in rounds, so a task count is the unit of work) and a report job that runs when the
# array has ended: it merges the shards and writes OUT/advice.md and OUT/advice.json exactly as
# `slubsim advise ... --out OUT` would on one host. OUT/shards/K holds shard K, OUT/logs the output.
#
#   tools/slurm/advise.sh [--tasks N] [--cpus C] [--bin SLUBSIM] [--parsable] [SBATCH_OPTION...] \
#       --out OUT ADVISE_OPTIONS...
#
#   --tasks N      array tasks (default: one per task count; more leave some idle)
#   --cpus C       CPUs per array task (default 2: a round's settings run side by side)
#   --bin PATH     the slubsim binary (default: build/slubsim beside this script's tree); it and the
#                  source tree (configs/, workloads/) must be on a file system every node sees
#   --parsable     print only "ARRAY_JOB_ID REPORT_JOB_ID"
#   other --options before --out go to both sbatch calls (e.g. --partition=short --time=60)
#
# Example (from the source tree on the cluster's shared file system):
#   tools/slurm/advise.sh --out $SCRATCH/turin --topology amd-turin-2s-512t --workload mmap1 \
#       --nr-task 128,256,384 --caches maple_node,vm_area_struct
#   cat $SCRATCH/turin/advice.md          # after the report job ends
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tree=$(cd "$here/../.." && pwd)
source "$here/args.sh"
submit_args advise.sh 20 cpus "$@"
set -- "${rest[@]+"${rest[@]}"}"
[ -n "$cpus" ] || cpus=2
[ $# -gt 0 ] || { echo "advise.sh: error: no advise options after --out OUT" >&2; exit 2; }
[ "$cpus" -ge 1 ] 2>/dev/null || { echo "advise.sh: error: --cpus '$cpus' is not a whole number from 1" >&2; exit 2; }

# The plan checks the request (bad input stops here, before anything is queued) and counts the
# task counts.
mkdir -p "$out/logs"
"$bin" advise "$@" --out "$out" --plan "$out/plan.json" --quiet
counts=$(sed -n 's/^ "task_counts": \([0-9]*\),$/\1/p' "$out/plan.json")
[ -n "$counts" ] || { echo "advise.sh: error: $out/plan.json: no task_counts" >&2; exit 1; }
[ -n "$tasks" ] || tasks=$counts
[ "$tasks" -ge 1 ] 2>/dev/null || { echo "advise.sh: error: --tasks '$tasks' is not a whole number from 1" >&2; exit 2; }

submit_array_then "$here/advise.sbatch" "$here/advise-report.sbatch" report.out "$@"
report_submitted "report job" "$tasks shards over $counts task counts" "advice: $out/advice.md" report.out

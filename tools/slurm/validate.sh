#!/usr/bin/env bash
# Submit a slubsim validate to Slurm: a job array whose task K runs shard K of N of the plan's
# points (--shard auto) into OUT/shards/K, and a score job that runs when the array has ended: it
# reads every shard's points and writes OUT/results (results and scoreboard) exactly as
# `slubsim validate --out OUT/results` would on one host, host.json files aside. The scoreboard
# then takes about the time of the slowest point. OUT/logs holds the output.
#
#   tools/slurm/validate.sh [--tasks N] [--cpus C] [--bin SLUBSIM] [--parsable] [SBATCH_OPTION...] \
#       --out OUT [VALIDATE_OPTIONS...]
#
#   --tasks N      array tasks (default 8)
#   --cpus C       CPUs per array task (default 1: each shard runs its points one at a time)
#   --bin PATH     the slubsim binary (default: build/slubsim beside this script's tree); it and the
#                  source tree (configs/, workloads/) must be on a file system every node sees
#   --parsable     print only "ARRAY_JOB_ID SCORE_JOB_ID"
#   other --options before --out go to both sbatch calls (e.g. --partition=short --time=60)
#   VALIDATE_OPTIONS: --only, --experiments, --fits, --set ... as `slubsim validate` takes them
#
# Example (from the source tree on the cluster's shared file system), then the committed tree:
#   tools/slurm/validate.sh --tasks 16 --out $SCRATCH/scoreboard
#   cp -r $SCRATCH/scoreboard/results/. results/       # after the score job ends
set -euo pipefail
source "$(dirname "$0")/args.sh"
submit_args validate.sh 20 cpus "$@"
set -- "${rest[@]+"${rest[@]}"}"
tasks=${tasks:-8} cpus=${cpus:-1}
[ "$tasks" -ge 1 ] 2>/dev/null || { echo "validate.sh: error: --tasks '$tasks' is not a whole number from 1" >&2; exit 2; }
[ "$cpus" -ge 1 ] 2>/dev/null || { echo "validate.sh: error: --cpus '$cpus' is not a whole number from 1" >&2; exit 2; }
for a in "$@"; do
  case $a in --out|--out=*|--shard|--shard=*|--points|--points=*|--calibrate)
    echo "validate.sh: error: $a is the script's to set (calibrate on one host)" >&2; exit 2 ;; esac
done

# Bad input stops here, before anything is queued: the plan is resolved and nothing is run.
mkdir -p "$out/logs"
"$bin" validate "$@" --plan "$out/plan.json" --quiet || exit 2

here=$(cd "$(dirname "$0")" && pwd)
submit_array_then "$here/validate.sbatch" "$here/validate-score.sbatch" score.out "$@"
report_submitted "score job" "$tasks shards" "scoreboard: $out/results/scoreboard.md" score.out

# What every Slurm end-to-end test does first. Sourced, not run, after `bin=$1 src=$2`:
# skips (exit 77) without root, fails without the Slurm and munge commands, sources cluster.sh,
# makes $tmp (short: slurmd's socket paths under it must fit in 107 bytes) with an EXIT trap
# that stops the cluster in $tmp/c and removes it, and defines fail/ok and $failures.
if [ "$(id -u)" -ne 0 ]; then
  echo "skip: a private Slurm cluster needs root (slurmd runs jobs as their user); run as root to test"
  exit 77
fi
for cmd in munged slurmctld slurmd sbatch squeue scontrol; do
  command -v "$cmd" >/dev/null || { echo "FAIL: $cmd not found: apt-get install slurm-wlm munge (tools/setup.sh does)"; exit 1; }
done
source "$src/tests/slurm/cluster.sh"
tmp=$(mktemp -d /tmp/slurm.XXXXXX)
trap 'slurm_cluster_stop "$tmp/c"; rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
ok() { echo "ok: $*"; }

# Start the private cluster (2 CPUs) in $tmp/c, submit with SCRIPT (a tools/slurm/*.sh taking
# --parsable and printing "ARRAY_JOB_ID SECOND_JOB_ID") and its ARGS, wait up to 600 s for both
# jobs, and check both COMPLETED 0:0; the second job's log is OUT_LOG. Sets t0, array and second.
#   slurm_submit_pair NAME OUT_LOG SCRIPT ARGS...
slurm_submit_pair() {
  local name=$1 log=$2 script=$3
  shift 3
  mkdir -p "$tmp/c"
  t0=$(date +%s)
  slurm_cluster_start "$tmp/c" 2 || { echo "FAIL: the cluster did not start"; exit 1; }
  ok "cluster up in $(( $(date +%s) - t0 )) s: $(sinfo -h -o '%N %c CPUs %t')"
  local ids
  ids=$(bash "$script" --parsable "$@") || { echo "FAIL: $script"; exit 1; }
  read -r array second <<<"$ids"
  ok "submitted array $array and $name $second"
  slurm_wait_jobs 600 "$array" "$second" || fail "jobs did not end in 600 s"
  slurm_job_ok "$array" && ok "array: all tasks COMPLETED 0:0" || { fail "array:"; slurm_job_state "$array"; }
  slurm_job_ok "$second" && ok "$name: COMPLETED 0:0" || { fail "$name:"; slurm_job_state "$second"; cat "$log"; }
}

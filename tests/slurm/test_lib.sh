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

# The options tools/slurm/submit.sh and advise.sh share, before --out OUT. Sourced, then:
#   submit_args NAME HELP_LAST_LINE EXTRA "$@"
# NAME names the script in errors; --help prints the script's comment lines 2..HELP_LAST_LINE;
# EXTRA "cpus" also accepts --cpus C. Sets bin, tasks, parsable, out (absolute), sbatch_opts,
# cpus, and rest (the arguments after --out OUT). Bad input exits 2 with a message.
submit_args() {
  local name=$1 help_last=$2 extra=$3
  shift 3
  local here tree
  here=$(cd "$(dirname "$0")" && pwd)
  tree=$(cd "$here/../.." && pwd)
  bin=$tree/build/slubsim
  tasks=""
  cpus=""
  parsable=0
  out=""
  sbatch_opts=()
  while [ $# -gt 0 ]; do
    case $1 in
      --tasks) tasks=$2; shift 2 ;;
      --tasks=*) tasks=${1#--tasks=}; shift ;;
      --cpus|--cpus=*)
        [ "$extra" = cpus ] || { sbatch_opts+=("$1"); shift; continue; }
        if [ "$1" = --cpus ]; then cpus=$2; shift 2; else cpus=${1#--cpus=}; shift; fi ;;
      --bin) bin=$2; shift 2 ;;
      --bin=*) bin=${1#--bin=}; shift ;;
      --parsable) parsable=1; shift ;;
      --out) out=$2; shift 2; break ;;
      --out=*) out=${1#--out=}; shift; break ;;
      -h|--help) sed -n "2,${help_last}p" "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
      -*) sbatch_opts+=("$1"); shift ;;
      *) echo "$name: error: '$1' before --out OUT (see --help)" >&2; exit 2 ;;
    esac
  done
  [ -n "$out" ] || { echo "$name: error: --out OUT is required (see --help)" >&2; exit 2; }
  [ -x "$bin" ] || { echo "$name: error: $bin: not an executable (bash tools/setup.sh build, or --bin)" >&2; exit 2; }
  case $out in /*) ;; *) out=$(pwd)/$out ;; esac
  case $bin in /*) ;; *) bin=$(pwd)/$bin ;; esac
  rest=("$@")
}

# After submit_args: submit ARRAY_SBATCH as a job array of $tasks tasks ($cpus CPUs each) and
# AFTER_SBATCH once it has ended (afterany, so it also runs, and says what is missing, when a
# task failed), both from the tree, both with "$bin" "$out" ARGS...; the array's logs go to
# OUT/logs/shard-K.out, the other's to OUT/logs/AFTER_LOG. Sets array and after (job ids).
#   submit_array_then ARRAY_SBATCH AFTER_SBATCH AFTER_LOG ARGS...
submit_array_then() {
  local first=$1 second=$2 log=$3 dir
  shift 3
  dir=$(cd "$(dirname "$first")" && pwd)
  array=$(sbatch --parsable "${sbatch_opts[@]}" --array="1-$tasks" --cpus-per-task="$cpus" --chdir="$dir/../.." \
            --output="$out/logs/shard-%a.out" "$first" "$bin" "$out" "$@")
  array=${array%%;*}
  after=$(sbatch --parsable "${sbatch_opts[@]}" --dependency="afterany:$array" --cpus-per-task="$cpus" \
            --chdir="$dir/../.." --output="$out/logs/$log" "$second" "$bin" "$out" "$@")
  after=${after%%;*}
}

# After submit_array_then: "ARRAY AFTER" with --parsable, else what was submitted and where the
# result will be.
#   report_submitted AFTER_NAME ARRAY_TEXT RESULT AFTER_LOG
report_submitted() {
  if [ "$parsable" -eq 1 ]; then
    echo "$array $after"
  else
    echo "submitted: job array $array ($2) and $1 $after"
    echo "$3 (when job $after ends; its log: $out/logs/$4)"
  fi
}

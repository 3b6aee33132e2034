# A private single-node Slurm cluster on localhost, for tests that submit real jobs. Sourced, not
# run. Everything lives in a directory the test owns (munge key and socket, slurm.conf, state,
# spool, pid and log files); the daemons are our own munged, slurmctld and slurmd on private
# ports, and only the processes recorded in that directory are ever signalled, so a system Slurm
# or munge on the same machine is left alone.
#
#   slurm_cluster_start DIR NCPUS       start munged, slurmctld and slurmd, export SLURM_CONF,
#                                       wait until the node is idle
#   slurm_cluster_stop DIR              cancel our jobs, stop our daemons (idempotent; safe from
#                                       an EXIT trap, also after a start that failed halfway)
#   slurm_wait_jobs TIMEOUT_S JOBID...  wait until the jobs (every array task) left the queue
#   slurm_job_state JOBID               print "JOBID STATE EXITCODE" per job or array task
#                                       (tasks as ARRAYJOBID_TASKID)
#   slurm_job_ok JOBID                  true if every task ended COMPLETED with exit code 0:0
#
# Needs root (SlurmUser=root, SlurmdUser=root) and the Debian packages slurm-wlm and munge.
# slurm_cluster_start unsets the caller's SLURM_*, SBATCH_*, SQUEUE_*, ... variables (see there).
# Use:
#   . tests/slurm/cluster.sh
#   dir=$(mktemp -d); trap 'slurm_cluster_stop "$dir"; rm -rf "$dir"' EXIT
#   slurm_cluster_start "$dir" 2 || exit 1
#   id=$(sbatch --parsable --array=1-4 --wrap true) && slurm_wait_jobs 60 "$id" && slurm_job_ok "$id"

# Seconds slurm_cluster_start waits for the node to become idle, and slurm_cluster_stop for each
# daemon to exit after SIGTERM before it sends SIGKILL. (Not SLURM_*: those are unset at start.)
SLURMCI_START_TIMEOUT=${SLURMCI_START_TIMEOUT:-60}
SLURMCI_STOP_TIMEOUT=${SLURMCI_STOP_TIMEOUT:-15}

# The node's name: fixed, given to slurmd with -N and addressed as 127.0.0.1, so nothing depends
# on this machine's hostname or on how it resolves. Jobs see it as SLURMD_NODENAME and HOSTNAME.
SLURMCI_NODE=${SLURMCI_NODE:-localhost}

# _slurm_log DIR: the tails of the daemons' logs, on stderr, for a failure message.
_slurm_log() {
    local f
    for f in "$1"/munged.log "$1"/slurmctld.log "$1"/slurmd.log "$1"/*.stderr; do
        [ -s "$f" ] || continue
        echo "----- $f (last 40 lines)" >&2
        tail -n 40 "$f" >&2 || :
    done
}

# _slurm_pid DIR NAME: print the pid in DIR/NAME.pid if that process is alive and ours, that is
# its command line names DIR (each daemon is started with a path into DIR). A missing or stale
# pid file, a reused pid or a zombie (empty command line) prints nothing and returns 1.
_slurm_pid() {
    local pid='' cmd
    [ -s "$1/$2.pid" ] || return 1
    read -r pid <"$1/$2.pid" || [ -n "$pid" ] || return 1
    case $pid in '' | *[!0-9]*) return 1 ;; esac
    cmd=$(tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline") || return 1
    case $cmd in *"$1/"*) echo "$pid" ;; *) return 1 ;; esac
}

# _slurm_started DIR NAME: wait (up to 10 s) until daemon NAME has written its pid file and runs.
# The daemons fork into the background; the parent's exit does not mean the child is ready.
_slurm_started() {
    local i
    for i in $(seq 100); do
        _slurm_pid "$1" "$2" >/dev/null && return 0
        sleep 0.1
    done
    echo "slurm_cluster_start: $2 did not start" >&2
    return 1
}

# _slurm_kill DIR NAME: stop our daemon NAME: SIGTERM, wait, then SIGKILL.
_slurm_kill() {
    local pid i
    if pid=$(_slurm_pid "$1" "$2"); then
        kill -TERM "$pid" 2>/dev/null || :
        for i in $(seq $((SLURMCI_STOP_TIMEOUT * 10))); do
            _slurm_pid "$1" "$2" >/dev/null || break
            sleep 0.1
        done
        if _slurm_pid "$1" "$2" >/dev/null; then
            echo "slurm_cluster_stop: $2 (pid $pid) still running; sending SIGKILL" >&2
            kill -KILL "$pid" 2>/dev/null || :
            sleep 0.2
        fi
    fi
    rm -f "$1/$2.pid"
}

# _slurm_stepds DIR: pids of live slurmstepd processes of our slurmd. slurmd runs each job under
# a slurmstepd that outlives slurmd and writes no pid file; ours are told apart by the
# environment they inherit from our slurmd (SLURM_CONF, exported before slurmd starts).
_slurm_stepds() {
    local p env nl='
'
    for p in /proc/[0-9]*; do
        [ "$(cat "$p/comm" 2>/dev/null)" = slurmstepd ] || continue
        env=$(tr '\0' '\n' 2>/dev/null <"$p/environ") || continue
        case "$nl$env$nl" in *"${nl}SLURM_CONF=$1/slurm.conf$nl"*) echo "${p#/proc/}" ;; esac
    done
}

# _slurm_kill_tree PID...: SIGKILL the processes and all their descendants.
_slurm_kill_tree() {
    local pids="$*" more pid ppid
    while :; do
        more=$(ps -eo pid=,ppid= | while read -r pid ppid; do
            case " $pids " in *" $ppid "*) case " $pids " in *" $pid "*) ;; *) echo "$pid" ;; esac ;; esac
        done)
        [ -n "$more" ] || break
        pids="$pids ${more//$'\n'/ }"
    done
    # shellcheck disable=SC2086  # a pid a word
    kill -KILL $pids 2>/dev/null || :
}

# _slurm_free_port PORT: true if nothing accepts connections on 127.0.0.1:PORT.
_slurm_free_port() {
    ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

slurm_cluster_start() {
    if [ $# -ne 2 ] || [ ! -d "$1" ]; then
        echo "usage: slurm_cluster_start DIR NCPUS (DIR an existing directory)" >&2
        return 2
    fi
    local dir ncpus=$2 port i v state=
    case $ncpus in '' | *[!0-9]* | 0*)
        echo "slurm_cluster_start: NCPUS must be a positive integer, not '$ncpus'" >&2
        return 2 ;;
    esac
    dir=$(cd "$1" && pwd -P) || return 1
    # A Unix socket path has at most 107 bytes; slurmd makes DIR/spool/NODE_JOBID.STEPID sockets
    # (the batch step's id is 4294967291), so DIR must be short, as mktemp -d in /tmp is.
    if [ ${#dir} -gt 60 ]; then
        echo "slurm_cluster_start: $dir is too long for Unix socket paths (over 60 bytes)" >&2
        return 1
    fi
    for v in munged slurmctld slurmd; do
        if _slurm_pid "$dir" "$v" >/dev/null; then
            echo "slurm_cluster_start: a cluster already runs in $dir ($v)" >&2
            return 1
        fi
    done

    # An outer Slurm's variables (a CI runner that is itself a Slurm job: SLURM_JOB_ID, ...) or
    # a user's defaults (SBATCH_PARTITION, SQUEUE_FORMAT, SLURM_CLUSTERS, ...) would change or
    # redirect our commands, and sbatch exports the submitter's environment into the jobs: drop
    # them, then point every command (and, through slurmd, every job) at our configuration.
    for v in $(compgen -e); do
        case $v in
        SLURM_* | SBATCH_* | SALLOC_* | SRUN_* | SQUEUE_* | SINFO_* | SCANCEL_* | SACCT_* | SCONTROL_*)
            unset "$v" ;;
        esac
    done
    export SLURM_CONF="$dir/slurm.conf"

    # Two private TCP ports (slurmctld, slurmd), from the caller's pid so that tests running at
    # the same time pick different ones; skip ports that something already listens on.
    port=$((20000 + ($$ * 2) % 10000))
    for i in $(seq 50); do
        _slurm_free_port "$port" && _slurm_free_port $((port + 1)) && break
        port=$((20000 + (port - 20000 + 2) % 10000))
    done

    # munged with its own key, socket, pid, log and seed files. --force: munged refuses a socket
    # whose directories are not searchable by everyone (so that any user's jobs can reach it);
    # DIR from mktemp -d is 0700 and every client here is root, so let that be a warning rather
    # than change DIR's mode.
    mkdir -p "$dir/state" "$dir/spool" || return 1
    if [ ! -s "$dir/munge.key" ]; then
        dd if=/dev/urandom of="$dir/munge.key" bs=1024 count=1 status=none &&
            chown root:root "$dir/munge.key" && chmod 0400 "$dir/munge.key" || return 1
    fi
    if ! munged --force --key-file="$dir/munge.key" --socket="$dir/munge.socket" \
        --pid-file="$dir/munged.pid" --log-file="$dir/munged.log" \
        --seed-file="$dir/munged.seed" 2>"$dir/munged.stderr" ||
        ! _slurm_started "$dir" munged; then
        _slurm_log "$dir"
        return 1
    fi

    cat >"$SLURM_CONF" <<EOF || return 1
# Written by tests/slurm/cluster.sh: a private single-node cluster, all of it in $dir.
ClusterName=citest
# slurmctld accepts "localhost" as its own name; the address spares a name lookup.
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
# Our munged, not the system's at /run/munge; the commands read this too (through SLURM_CONF).
AuthType=auth/munge
AuthInfo=socket=$dir/munge.socket
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
# No mail is sent (the default /usr/bin/mail is usually absent and slurmctld logs an error).
MailProg=/bin/true
# No cgroups (containers rarely offer a usable hierarchy): processes tracked by parent pid, no
# binding or confinement, no accounting daemon or job completion log. Without a cgroup plugin
# here, slurmd reads no cgroup.conf; spank plugins would come from a plugstack.conf next to this
# file, and there is none, so the system's /etc/slurm/plugstack.conf is not used either.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
# Allocate single CPUs, so NCPUS one-CPU jobs or array tasks run at once.
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
# Schedule at once on submission, completion and satisfied dependencies, rather than every
# 30-60 s (the default intervals) or after a 3 s batch delay.
SchedulerType=sched/backfill
SchedulerParameters=batch_sched_delay=0,sched_interval=1,sched_min_interval=0,bf_interval=1
# A job whose dependency can never be satisfied (afterok on a failed job) is cancelled rather
# than left pending forever, so a test waiting for it ends.
DependencyParameters=kill_invalid_depend
# Finished jobs stay known to scontrol for 10 minutes: without accounting that is the only
# record of their final state and exit code (slurm_job_state reads it).
MinJobAge=600
# Seconds between SIGTERM and SIGKILL when a job is cancelled or times out (default 30).
KillWait=2
# A node that registers is usable at once, even after being down (a restarted slurmd).
ReturnToService=2
# Take CPUs and RealMemory below as given even where they exceed the hardware (NCPUS may exceed
# nproc), instead of draining the node. CR_CPU does not allocate memory, but --mem above
# RealMemory is refused.
SlurmdParameters=config_overrides
NodeName=$SLURMCI_NODE NodeAddr=127.0.0.1 CPUs=$ncpus RealMemory=1024 State=UNKNOWN
PartitionName=ci Nodes=$SLURMCI_NODE Default=YES MaxTime=INFINITE State=UP
EOF

    # The daemons fork into the background and write their pid files; errors from before their
    # logs are open (a bad slurm.conf) go to DIR/NAME.stderr. -N names the node for slurmd.
    if ! slurmctld -f "$SLURM_CONF" 2>"$dir/slurmctld.stderr" ||
        ! _slurm_started "$dir" slurmctld ||
        ! slurmd -f "$SLURM_CONF" -N "$SLURMCI_NODE" 2>"$dir/slurmd.stderr" ||
        ! _slurm_started "$dir" slurmd; then
        _slurm_log "$dir"
        return 1
    fi

    # Up once the node is idle: slurmd registered and slurmctld will give it jobs.
    for i in $(seq $((SLURMCI_START_TIMEOUT * 10))); do
        state=$(sinfo -h -N -n "$SLURMCI_NODE" -o %T 2>/dev/null) || state=
        [ "$state" = idle ] && return 0
        if ! _slurm_pid "$dir" slurmctld >/dev/null || ! _slurm_pid "$dir" slurmd >/dev/null; then
            break
        fi
        sleep 0.1
    done
    echo "slurm_cluster_start: node $SLURMCI_NODE not idle (state '$state')" >&2
    _slurm_log "$dir"
    return 1
}

slurm_cluster_stop() {
    if [ $# -ne 1 ]; then
        echo "usage: slurm_cluster_stop DIR" >&2
        return 2
    fi
    [ -d "$1" ] || return 0
    local dir jobs i
    dir=$(cd "$1" && pwd -P) || return 0
    # Cancel what is still queued or running and let slurmd end it, so that no slurmstepd or job
    # process is left behind; timeout bounds each command should slurmctld not answer.
    if _slurm_pid "$dir" slurmctld >/dev/null && _slurm_pid "$dir" slurmd >/dev/null; then
        jobs=$(SLURM_CONF="$dir/slurm.conf" timeout 15 squeue -h -o %F 2>/dev/null | sort -u) || :
        if [ -n "$jobs" ]; then
            # shellcheck disable=SC2086  # a job id a word
            SLURM_CONF="$dir/slurm.conf" timeout 15 scancel $jobs 2>/dev/null || :
            i=0
            while [ -n "$(_slurm_stepds "$dir")" ] && [ $i -lt 100 ]; do
                sleep 0.1
                i=$((i + 1))
            done
        fi
    fi
    _slurm_kill "$dir" slurmd
    _slurm_kill "$dir" slurmctld
    _slurm_kill "$dir" munged
    # Steps that outlived all that (slurmctld was already gone, or the cancel timed out).
    local stepds
    stepds=$(_slurm_stepds "$dir")
    if [ -n "$stepds" ]; then
        echo "slurm_cluster_stop: killing leftover slurmstepd ${stepds//$'\n'/ } and children" >&2
        # shellcheck disable=SC2086
        _slurm_kill_tree $stepds
    fi
    return 0
}

slurm_wait_jobs() {
    if [ $# -lt 2 ]; then
        echo "usage: slurm_wait_jobs TIMEOUT_S JOBID..." >&2
        return 2
    fi
    local timeout=$1 ids out end
    shift
    ids=$(IFS=,; echo "$*")
    end=$((SECONDS + timeout))
    while :; do
        # By default squeue lists only jobs pending, running, suspended or completing, also when
        # given job ids; an array job's id covers all its tasks. A failing squeue (slurmctld busy,
        # or an id it does not know) counts as "not yet".
        if out=$(squeue -h -j "$ids" -o %i 2>/dev/null) && [ -z "$out" ]; then
            return 0
        fi
        if [ $SECONDS -ge $end ]; then
            echo "slurm_wait_jobs: after ${timeout} s, still queued:" >&2
            squeue -j "$ids" >&2 || :
            return 1
        fi
        sleep 0.2
    done
}

slurm_job_state() {
    if [ $# -ne 1 ]; then
        echo "usage: slurm_job_state JOBID" >&2
        return 2
    fi
    local out line rest word id array task state code
    local -a words
    # Without accounting (no sacct) scontrol is the record, for MinJobAge after the end. One
    # line per job or array task (a still pending rest of an array is one line, its ArrayTaskId
    # a range); fails for an unknown id.
    out=$(scontrol -o show job "$1" 2>/dev/null) && [ -n "$out" ] || return 1
    while IFS= read -r line; do
        # JobName, free text, comes before JobState and runs up to UserId: cut it out. Later
        # free text (WorkDir, Command, ...) follows the fields wanted; the first of each counts.
        case $line in *" JobName="*)
            rest=${line#* JobName=}
            line="${line%% JobName=*} UserId=${rest#* UserId=}" ;;
        esac
        read -r -a words <<<"$line"
        id='' array='' task='' state='' code=''
        for word in "${words[@]}"; do
            case $word in
            JobId=*) [ -n "$id" ] || id=${word#JobId=} ;;
            ArrayJobId=*) [ -n "$array" ] || array=${word#ArrayJobId=} ;;
            ArrayTaskId=*) [ -n "$task" ] || task=${word#ArrayTaskId=} ;;
            JobState=*) [ -n "$state" ] || state=${word#JobState=} ;;
            ExitCode=*) [ -n "$code" ] || code=${word#ExitCode=} ;;
            esac
        done
        if [ -n "$array" ] && [ -n "$task" ]; then id=${array}_$task; fi
        echo "$id $state $code"
    done <<<"$out"
}

slurm_job_ok() {
    if [ $# -ne 1 ]; then
        echo "usage: slurm_job_ok JOBID" >&2
        return 2
    fi
    local states
    # Unknown (never submitted, or forgotten after MinJobAge) is not ok, nor is any task that is
    # not COMPLETED with exit code 0 (and no signal): FAILED 3:0, CANCELLED, TIMEOUT, PENDING...
    states=$(slurm_job_state "$1") || return 1
    ! grep -qv ' COMPLETED 0:0$' <<<"$states"
}

#!/usr/bin/env bash
# grade.sh --slurm and --collect on a real Slurm (issue 25; run by scripts/test.sh): a one-node
# cluster from Debian's packages (munge, slurmctld, slurmd), configured in a temporary folder, on
# localhost, with one GRES "gpu" whose device file is /dev/null (CI has no GPU). A stand-in lab
# answers --check from each submission's first line. The array's CSV must equal a local run's; a
# task whose row is lost must come back as a row with Slurm's state and the command that re-runs it.
# Every daemon started here is stopped by its pid. Where the packages cannot be installed (not root,
# no apt), the test says so and is counted as skipped, never as passed.
set -euo pipefail
cd "$(dirname "$0")/.."
repository=$PWD
skip() { echo "test-slurm.sh: SKIPPED: $1"; exit 0; }
if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null || ! command -v sbatch >/dev/null || ! command -v munged >/dev/null; then
    [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null || skip "Slurm is not installed, and installing it needs root and apt-get"
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends slurmctld slurmd slurm-client munge; } >/dev/null 2>&1 ||
        skip "apt-get could not install slurmctld, slurmd, slurm-client and munge"
fi
[[ $(id -u) == 0 ]] || skip "slurmd runs jobs as their owner only when started as root"

work=$(mktemp -d)
pids=()
# Whether process $1 still runs (a daemon's zombie, which nobody may reap here, does not).
running() { [[ -n $(ps -o stat= -p "$1" 2>/dev/null | grep -v Z) ]]; }
any_running() {
    local pid
    for pid in "${pids[@]}"; do running "$pid" && return 0; done
    return 1
}
stop() {
    local pid
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    for _ in $(seq 50); do
        any_running || break
        sleep 0.2
    done
    for pid in "${pids[@]}"; do running "$pid" && kill -9 "$pid" 2>/dev/null; done
    rm -rf "$work"
}
trap stop EXIT
failures=0 checks=0
expect() {  # expect WHAT GOT WANTED
    checks=$((checks + 1))
    if [[ $2 != "$3" ]]; then echo "FAIL: $1: got '$2', wanted '$3'"; failures=$((failures + 1)); fi
}

# munge, with a key of its own, on a socket in $work.
mkdir -p "$work/munge" "$work/state" "$work/spool" "$work/log"
mungekey -c -k "$work/munge/key" >/dev/null 2>&1 || dd if=/dev/urandom of="$work/munge/key" bs=1024 count=1 2>/dev/null
chmod 600 "$work/munge/key"
munged --force --key-file="$work/munge/key" --socket="$work/munge/socket" --pid-file="$work/munge/pid" \
    --log-file="$work/munge/log" --seed-file="$work/munge/seed"
pids+=("$(cat "$work/munge/pid")")

# The cluster: this machine, one partition, ports of its own (a machine's own Slurm keeps its).
node=$(hostname -s)
export SLURM_CONF=$work/slurm.conf
cat >"$SLURM_CONF" <<CONF
ClusterName=gradetest
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=16917
SlurmdPort=16918
AuthType=auth/munge
AuthInfo=socket=$work/munge/socket
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/log/slurmctld.log
SlurmdLogFile=$work/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SchedulerType=sched/backfill
MpiDefault=none
ReturnToService=2
GresTypes=gpu
NodeName=$node NodeAddr=127.0.0.1 CPUs=$(nproc) RealMemory=500 Gres=gpu:1 State=UNKNOWN
PartitionName=grading Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
echo "NodeName=$node Name=gpu File=/dev/null" >"$work/gres.conf"
slurmctld -D -f "$SLURM_CONF" >"$work/log/slurmctld.out" 2>&1 &
pids+=("$!")
slurmd -D -f "$SLURM_CONF" >"$work/log/slurmd.out" 2>&1 &
pids+=("$!")
# Up within 30 s, or the test fails with the daemons' last words (a dead controller makes every
# client command wait for its own time-out, so both daemons are watched too).
up=
while (( SECONDS < 30 )) && running "${pids[1]}" && running "${pids[2]}"; do
    [[ $(sinfo -h -o %t 2>/dev/null) == idle ]] && { up=yes; break; }
    sleep 0.5
done
[[ -n $up ]] || { echo "FAIL: the test cluster did not come up: $(tail -q -n 2 "$work/log/slurmctld.log" "$work/log/slurmd.log" 2>&1 | tr '\n' ' ')"; exit 1; }

# The stand-in lab: two cases; a submission's first line says how it fares.
mkdir -p "$work/bin" "$work/gpus" "$work/subs"
cat >"$work/bin/lab-mmm" <<'STUB'
#!/usr/bin/env bash
file= list=0 csv=0
while [[ $# -gt 0 ]]; do
    case $1 in
        --kernel-source) file=$2; shift 2 ;;
        --list-cases) list=1; shift ;;
        --csv) csv=1; shift ;;
        *) shift ;;
    esac
done
header='file,"case one","case two",passed,time ratio,case set'
if [[ $list == 1 ]]; then
    [[ $csv == 1 ]] && echo "$header" || echo "2 cases (case set 0123456789abcdef):"
    exit 0
fi
name=${file//\"/\"\"}
case $(head -n 1 "$file") in
    "// pass") printf '%s\n"%s",PASS,PASS,2/2,1.000,0123456789abcdef\n' "$header" "$name" ;;
    "// half") printf '%s\n"%s",PASS,FAIL,1/2,1.100,0123456789abcdef\n' "$header" "$name" ;;
    *) echo "lab-mmm: error: the kernel crashed on GPU ${CUDA_VISIBLE_DEVICES:-none}" >&2; exit 1 ;;
esac
STUB
printf '#!/usr/bin/env bash\necho "GPU 0: Stand-in (UUID: GPU-0)"\n' >"$work/gpus/nvidia-smi"
chmod +x "$work/bin/lab-mmm" "$work/gpus/nvidia-smi"
echo "// pass" >"$work/subs/alice.cu"
echo "// half" >"$work/subs/Doe, Jane.cu"
echo "// crashes" >"$work/subs/carol.cu"
export LAB_BIN_DIR=$work/bin

# The array, and a local run of the same.
submitted=$(bash assignments/grade.sh --slurm --time 5 03-mmm-tiled "$work/subs" "$work/out")
job=$(cat "$work/out/job")
expect "the job id is printed" "$(head -n 1 <<<"$submitted")" "grade.sh: submitted job array $job: 3 tasks, one GPU each (week 03-mmm-tiled)"
started=$SECONDS
while (( SECONDS - started < 60 )) && [[ -n $(squeue -h -j "$job" 2>/dev/null) ]]; do
    sleep 0.2
done
echo "the array, as Slurm saw it:"
scontrol -o show job "$job" | grep -o -E 'JobId=[0-9]+ ArrayJobId=[0-9]+ ArrayTaskId=[0-9]+|JobState=[A-Z]+|ExitCode=[0-9:]+|TRES=[^ ]+' | paste -d ' ' - - - - | sed 's/^/    /'
bash assignments/grade.sh --collect "$work/out" >"$work/slurm.csv" 2>"$work/collect.err"
PATH="$work/gpus:$PATH" bash assignments/grade.sh 03-mmm-tiled "$work/subs" >"$work/local.csv" 2>/dev/null
expect "the array's CSV is the local run's" "$(diff "$work/local.csv" "$work/slurm.csv" && echo same)" same
expect "rows" "$(wc -l <"$work/slurm.csv")" 4
expect "every task got a GPU" "$(grep -c 'GPU 0' "$work/out/rows/2.err")" 1
expect "nothing missing, nothing said" "$(cat "$work/collect.err")" ""
echo "the merged CSV:"
sed 's/^/    /' "$work/slurm.csv"

# A lost row: collect still gives every row, says which task, and how to run it again.
rm "$work/out/rows/1.row"
bash assignments/grade.sh --collect "$work/out" >"$work/lost.csv" 2>"$work/lost.err"
expect "a lost row is a row" "$(grep -c 'no result from array task 1: COMPLETED, exit 0:0' "$work/lost.csv")" 1
expect "and the command to run it again" "$(grep -c -- "--array=1 $work/out/task.sh" "$work/lost.err")" 1
expect "--slurm does not write into a folder with files" "$(bash assignments/grade.sh --slurm 03-mmm-tiled "$work/subs" "$work/out" 2>&1 >/dev/null)" \
    "grade.sh: $work/out is not empty; --slurm writes a new folder (nothing is overwritten)"
expect "--collect of a folder --slurm did not write" "$(bash assignments/grade.sh --collect "$work/subs" 2>&1 >/dev/null)" "grade.sh: $work/subs was not written by grade.sh --slurm"
echo "test-slurm.sh: $checks checks, $failures failed"
(( failures == 0 ))

#!/usr/bin/env bash
# grade.sh --slurm and --collect on a real Slurm (issue 25; run by scripts/test.sh): a one-node
# cluster from Debian's packages (munge, slurmctld, slurmd), configured in a temporary folder, on
# localhost, with one GRES "gpu" whose device file is /dev/null (CI has no GPU). A stand-in lab
# answers --check from each submission's first line. The array's CSV must equal a local run's; a
# task whose row is lost must come back as a row with Slurm's state and the command that re-runs it.
# The task script must ask for a GPU (--gres=gpu:1), CPUs and memory and name its logs after the array
# job; a task that Slurm gives no GPU must fail with one line and a row that says so; the settings are
# read as data; --collect-job's job must write the CSV when the array is done; a row graded on another
# case set must be named (issue 39); --ids reaches the collect job (OUT/ids) and every --check's
# output is kept in OUT/checks; tasks still pending (held) are told from failed ones (collect again
# later, exit code 4); a task the machine fails (MACHINE, exit code 3) fails with 3 and --collect names
# the student and exits with 3 (issue 45); the array waits for our solution's check of the cases, and a
# case it fails cancels the array and --collect refuses in one line (issue 66). Every daemon started here is stopped by its pid. Where the packages
# cannot be installed (not root, no apt), the test says so and is counted as skipped, never as passed:
# it prints a cargo-style "test result:" line with 1 ignored, which scripts/test.sh's total counts.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/test-lib.sh
repository=$PWD
if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null || ! command -v sbatch >/dev/null || ! command -v munged >/dev/null; then
    [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null || skipped "Slurm is not installed, and installing it needs root and apt-get"
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends slurmctld slurmd slurm-client munge; } >/dev/null 2>&1 ||
        skipped "apt-get could not install slurmctld, slurmd, slurm-client and munge"
fi
[[ $(id -u) == 0 ]] || skipped "slurmd runs jobs as their owner only when started as root"
target=${CARGO_TARGET_DIR:-target}
[[ $target == /* ]] || target=$repository/$target
[[ -x $target/debug/lab-mmm ]] || { echo "test-slurm.sh: build the workspace first ($target/debug/lab-mmm is missing)"; exit 1; }

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
# The node as configured here, whatever this machine has: the tasks ask for 2 CPUs and 8G each.
SlurmdParameters=config_overrides
GresTypes=gpu
NodeName=$node NodeAddr=127.0.0.1 CPUs=8 RealMemory=65536 Gres=gpu:1 State=UNKNOWN
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

# The stand-in lab: two cases; a submission's first line says how it fares ("// other case set":
# passes on a case set other than the one the listing gave).
mkdir -p "$work/bin" "$work/gpus" "$work/subs"
cat >"$work/lab-mmm-body" <<'STUB'
#!/usr/bin/env bash
file= list=0 csv=0 cases=/dev/null
while [[ $# -gt 0 ]]; do
    case $1 in
        --kernel-source) file=$2; shift 2 ;;
        --cases) cases=$2; shift 2 ;;
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
# Our own solution, which checks the cases before any submission (issue 66), passes, unless the
# cases file says it does not.
first=$(head -n 1 "$file")
[[ $file == */kernels/cuda/* ]] && { grep -q 'ours fails' "$cases" && first="// fails a case" || first="// pass"; }
case $first in
    "// pass") printf '%s\n"%s",PASS,PASS,2/2,1.000,0123456789abcdef\n' "$header" "$name" ;;
    "// slow") sleep 30 ;;
    "// half") printf '%s\n"%s",PASS,FAIL,1/2,1.100,0123456789abcdef\n' "$header" "$name" ;;
    "// fails a case") printf '%s\n"%s",PASS,FAIL,1/2,1.100,0123456789abcdef\n' "$header" "$name"; exit 1 ;;
    "// other case set") printf '%s\n"%s",PASS,PASS,2/2,1.000,fedcba9876543210\n' "$header" "$name" ;;
    "// machine") printf '%s\n"%s",MACHINE,MACHINE,0/2,,0123456789abcdef\n' "$header" "$name"; echo "lab-mmm: error: machine: out of GPU memory" >&2; exit 3 ;;
    *) echo "lab-mmm: error: the kernel crashed on GPU ${CUDA_VISIBLE_DEVICES:-none}" >&2; exit 1 ;;
esac
STUB
printf '#!/usr/bin/env bash\necho "GPU 0: Stand-in (UUID: GPU-0)"\n' >"$work/gpus/nvidia-smi"
chmod +x "$work/lab-mmm-body" "$work/gpus/nvidia-smi"
# Its output marked as a lab marks it (issue 60); the real lab checks the marks.
marking_stub "$work/lab-mmm-body" "$work/bin/lab-mmm" "$target/debug/lab-mmm"
echo "// pass" >"$work/subs/alice.cu"
echo "// half" >"$work/subs/Doe, Jane.cu"
echo "// crashes" >"$work/subs/carol.cu"
echo "// other case set" >"$work/subs/dave.cu"
printf '%s\n' "alice.cu,a1" '"Doe, Jane.cu",d2' "carol,c3" "dave.cu,d4" >"$work/ids.txt"
export LAB_BIN_DIR=$work/bin GRADER=$target/debug/grader
# Waits (60 s at most) until the jobs $1 (a comma-separated list) have left the queue.
wait_for() {
    local started=$SECONDS
    while (( SECONDS - started < 60 )) && [[ -n $(squeue -h -j "$1" 2>/dev/null) ]]; do
        sleep 0.2
    done
}

# The array with its collect job, and a local run of the same. sbatch is Slurm's, through a stand-in
# that notes its arguments.
mkdir -p "$work/sbatch"
printf '#!/usr/bin/env bash\necho "sbatch $*" >>%q\nexec %q "$@"\n' "$work/sbatch.log" "$(command -v sbatch)" >"$work/sbatch/sbatch"
chmod +x "$work/sbatch/sbatch"
submitted=$(PATH="$work/sbatch:$PATH" bash assignments/grade.sh --slurm --collect-job --time 5 --sbatch=--comment=course42 --ids "$work/ids.txt" 03-mmm-tiled "$work/subs" "$work/out")
job=$(cat "$work/out/job") collector=$(cat "$work/out/collect-job")
expect "the job id is printed" "$(head -n 1 <<<"$submitted")" "grade.sh: submitted job array $job: 4 tasks, one GPU, 2 CPUs and 8G each, at most 8 at once (week 03-mmm-tiled)"
expect "the collect job is printed" "$(tail -n 1 <<<"$submitted")" "then the collect job $collector writes $work/out/grades.csv (its log: $work/out/logs/collect-$collector.log)"
# What a cluster's admin reads in the task script: a GPU, CPUs and memory asked for, logs named after
# the array job and the task. Without --gres=gpu:1 a task gets no GPU (below), so its line must be there.
for line in "#SBATCH --gres=gpu:1" "#SBATCH --cpus-per-task=2" "#SBATCH --mem=8G" "#SBATCH --time=5" "#SBATCH --output=$work/out/logs/%A_%a.log" "#SBATCH --comment=course42"; do
    expect "task.sh has '$line'" "$(grep -c -x -F -- "$line" "$work/out/task.sh")" 1
done
expect "week 3 under --sanitize asks for more" "$(bash assignments/grade.sh --help | grep -c 'week 03 with --sanitize 4 and 16G')" 1
echo "the task script:"
sed 's/^/    /' "$work/out/task.sh"
canary=$(cat "$work/out/canary-job")
expect "the array waits for our solution, the collect job for the array" "$(cat "$work/sbatch.log")" \
    "$(printf 'sbatch --parsable %s\nsbatch --parsable --array=0-3%%8 --dependency=afterok:%s --kill-on-invalid-dep=yes %s\nsbatch --parsable --dependency=afterany:%s %s' "$work/out/canary.sh" "$canary" "$work/out/task.sh" "$job" "$work/out/collect.sh")"
expect "our solution's job asks for a GPU too" "$(grep -c -x -F -- "#SBATCH --gres=gpu:1" "$work/out/canary.sh")" 1
wait_for "$canary,$job,$collector"
echo "the array, as Slurm saw it:"
scontrol -o show job "$job" | grep -o -E 'JobId=[0-9]+ ArrayJobId=[0-9]+ ArrayTaskId=[0-9]+|JobState=[A-Z]+|ExitCode=[0-9:]+|TRES=[^ ]+' | paste -d ' ' - - - - | sed 's/^/    /'
expect "the collect exits 1 (a row of another case set)" "$(bash assignments/grade.sh --collect "$work/out" >"$work/slurm.csv" 2>"$work/collect.err" && echo 0 || echo $?)" 1
expect "the local run exits 1 too" "$(PATH="$work/gpus:$PATH" bash assignments/grade.sh --ids "$work/ids.txt" 03-mmm-tiled "$work/subs" >"$work/local.csv" 2>/dev/null && echo 0 || echo $?)" 1
expect "the array's CSV is the local run's" "$(diff "$work/local.csv" "$work/slurm.csv" && echo same)" same
expect "rows" "$(wc -l <"$work/slurm.csv")" 5
expect "every task got a GPU" "$(grep -c '^lab-mmm: error: the kernel crashed on GPU 0$' "$work/out/checks/carol.cu.txt")" 1
expect "another case set: the row says so, no score" "$(grep -c '^"dave",.*,"0 of 2",,fedcba9876543210,"case set changed during grading: fedcba9876543210, expected 0123456789abcdef",,"d4"$' "$work/slurm.csv")" 1
expect "the score and the ids (OUT/ids)" "$(cut -d , -f 1 "$work/slurm.csv" | paste -s -d ' ') | $(grep -o ',[0-9.]*,"[a-z0-9]*"$' "$work/slurm.csv" | paste -s -d ' ')" \
    'student "Doe "alice" "carol" "dave" | ,50.0,"d2" ,100.0,"a1" ,0.0,"c3" ,,"d4"'
expect "each --check kept in OUT/checks" "$(find "$work/out/checks" -mindepth 1 -printf "%f\n" | LC_ALL=C sort | paste -s -d "|")" "Doe, Jane.cu.txt|alice.cu.txt|carol.cu.txt|dave.cu.txt"
expect "another case set: one line names the student" "$(cat "$work/collect.err")" \
    "grade.sh: the case set changed during grading (expected 0123456789abcdef) for 1 of 4 students, not graded: dave"
expect "the collect job wrote the CSV" "$(diff "$work/slurm.csv" "$work/out/grades.csv" && echo same)" same
expect "the logs carry the array job's id" "$(cd "$work/out/logs" && ls | tr '\n' ' ')" "${job}_0.log ${job}_1.log ${job}_2.log ${job}_3.log canary-$canary.log collect-$collector.log "
expect "our solution's job passed" "$(cat "$work/out/canary.state") $(wc -c <"$work/out/logs/canary-$canary.log")" "passed 0"
echo "the merged CSV:"
sed 's/^/    /' "$work/slurm.csv"

# A lost row: collect still gives every row, says which task, and how to run it again.
rm "$work/out/rows/1.row"
bash assignments/grade.sh --collect "$work/out" >"$work/lost.csv" 2>"$work/lost.err" || true
expect "a lost row is a row" "$(grep -c 'no result from array task 1: COMPLETED, exit 0:0' "$work/lost.csv")" 1
expect "and the command to run it again" "$(grep -c -- "--array=1 $work/out/task.sh" "$work/lost.err")" 1

# A task without a GPU (task.sh without its --gres line): one line in its log, a row that says so,
# the task failed, and collect lists it with the tasks to run again; run again with the GPU, both
# rows are back.
sed '/^#SBATCH --gres=gpu:1$/d' "$work/out/task.sh" >"$work/out/task-no-gpu.sh"
expect "a task without a GPU fails" "$(sbatch --wait --array=0 "$work/out/task-no-gpu.sh" >"$work/no-gpu.job" 2>&1 && echo 0 || echo $?)" 1
no_gpu=$(grep -o '[0-9]*$' "$work/no-gpu.job")
expect "with one line" "$(cat "$work/out/logs/${no_gpu}_0.log")" "grade.sh: no GPU was given to this task (check --gres=gpu:1 and the partition)"
bash assignments/grade.sh --collect "$work/out" >"$work/no-gpu.csv" 2>"$work/no-gpu.err" || true
expect "and a row that says so" "$(grep -c '^"Doe, Jane",.*,-,-,"0 of 2",,0123456789abcdef,"no GPU was given to this task (check --gres=gpu:1 and the partition)",,"d2"$' "$work/no-gpu.csv")" 1
expect "collect names it with the lost row" "$(head -n 1 "$work/no-gpu.err")" \
    "grade.sh: 2 of 4 tasks have no grades (no row: 1; no GPU: 0; their logs: $work/out/logs/${job}_N.log); to run only those again: sbatch --array=0,1 $work/out/task.sh"
expect "and names the student the machine failed" "$(grep 'machine (not' "$work/no-gpu.err")" \
    "grade.sh: the machine (not the students) failed, no grades for 1 of 4 submissions: Doe, Jane; their notes begin 'machine: ' and say why: grade them again where the GPU works"
expect "run again, they pass" "$(sbatch --wait --array=0,1 "$work/out/task.sh" >/dev/null 2>&1 && echo 0 || echo $?)" 0
bash assignments/grade.sh --collect "$work/out" >"$work/again.csv" 2>/dev/null || true
expect "and the CSV is whole again" "$(diff "$work/local.csv" "$work/again.csv" && echo same)" same

# Issue 62: a task run again that dies (here killed) leaves no row, and --collect says so: the old
# row is never scored for it.
cp "$work/subs/alice.cu" "$work/alice.cu.kept"
echo "// slow" >"$work/subs/alice.cu"
SLURM_ARRAY_TASK_ID=1 CUDA_VISIBLE_DEVICES=0 bash assignments/grade.sh --task "$work/out" >/dev/null 2>&1 &
task=$!
sleep 2
kill -KILL "$task" 2>/dev/null || true; wait "$task" 2>/dev/null || true
pkill -KILL -f "$work/subs/alice.cu" 2>/dev/null || true
cp "$work/alice.cu.kept" "$work/subs/alice.cu"
expect "a re-run that dies: collect exits 1" "$(bash assignments/grade.sh --collect "$work/out" >"$work/died.csv" 2>/dev/null && echo 0 || echo $?)" 1
expect "a re-run that dies: no old row scored" "$(grep -c '^"alice",.*,"no result from array task 1: [^"]*",,"a1"$' "$work/died.csv")" 1
sbatch --wait --array=1 "$work/out/task.sh" >/dev/null 2>&1

# The settings are data: a line that is not one of its keys with a value of its kind stops --collect
# and --task with one line, and nothing in it runs.
cp -r "$work/out" "$work/edited"
sed -i "s|^limit=.*|limit=5; touch $work/ran|" "$work/edited/settings"
expect "a bad value in the settings" "$(bash assignments/grade.sh --collect "$work/edited" 2>&1 >/dev/null)" \
    "grade.sh: $work/edited/settings, line 6: '5; touch $work/ran' is no value for limit"
sed -i "s|^limit=.*|limit=5|; \$a PATH=\$(touch $work/ran)" "$work/edited/settings"
expect "an unknown key in the settings" "$(SLURM_ARRAY_TASK_ID=0 CUDA_VISIBLE_DEVICES=0 bash assignments/grade.sh --task "$work/edited" 2>&1 >/dev/null)" \
    "grade.sh: $work/edited/settings, line 10: unknown key 'PATH' (week, lab_bin, cases_file, sanitize, limit, header, cases, hash)"
expect "nothing in the settings ran" "$([[ -e $work/ran ]] && echo ran || echo no)" no

# Tasks still pending (held here) are not failed ones: --collect says to collect again later, with
# exit code 4; released, they are graded.
mkdir -p "$work/holding"
printf '#!/usr/bin/env bash\nexec %q --hold "$@"\n' "$(command -v sbatch)" >"$work/holding/sbatch"
chmod +x "$work/holding/sbatch"
PATH="$work/holding:$PATH" bash assignments/grade.sh --slurm 03-mmm-tiled "$work/subs" "$work/held" >/dev/null
held=$(cat "$work/held/job")
expect "pending tasks: collect exits 4" "$(bash assignments/grade.sh --collect "$work/held" >"$work/held.csv" 2>"$work/held.err" && echo 0 || echo $?)" 4
held_canary=$(cat "$work/held/canary-job")
expect "pending tasks: collect again later" "$(cat "$work/held.err")" \
    "grade.sh: the check of our solution on the cases (job $held_canary) is still pending or running; the tasks wait for it: collect again later
grade.sh: 4 of 4 tasks are still pending or running (0,1,2,3), not failed: collect again later (squeue -j $held)"
expect "pending tasks: their rows say so" "$(grep -c 'no result yet from array task [0-3]: PENDING (collect again later)",$' "$work/held.csv")" 4
scontrol release "$held_canary,$held"
wait_for "$held_canary,$held"
expect "released, they are graded (the case set's exit code)" "$(bash assignments/grade.sh --collect "$work/held" 2>/dev/null | cut -d , -f 1 | paste -s -d ' '; echo "${PIPESTATUS[0]}")" 'student "Doe "alice" "carol" "dave"
1'

# A task the machine fails (the lab's MACHINE verdicts, exit code 3): the task fails, its row's note
# begins "machine: " without a score, and --collect names the student and exits with 3.
mkdir -p "$work/subs2"
echo "// pass" >"$work/subs2/ok.cu"
echo "// machine" >"$work/subs2/oom.cu"
bash assignments/grade.sh --slurm 03-mmm-tiled "$work/subs2" "$work/machine" >/dev/null
machine_job=$(cat "$work/machine/job")
wait_for "$machine_job"
expect "the machine's task failed with 3" "$(scontrol -o show job "${machine_job}_1" | grep -o 'ExitCode=[0-9:]*')" "ExitCode=3:0"
expect "the machine: collect exits 3" "$(bash assignments/grade.sh --collect "$work/machine" >"$work/machine.csv" 2>"$work/machine.err" && echo 0 || echo $?)" 3
expect "the machine: the row" "$(grep -c '^"oom",.*,MACHINE,MACHINE,"0 of 2",,0123456789abcdef,"machine: out of GPU memory (2 of 2 cases could not run on this machine: not graded, grade again where it works)",$' "$work/machine.csv")" 1
expect "the machine: stderr" "$(cat "$work/machine.err")" \
    "grade.sh: 1 of 2 tasks have no grades (the machine failed: 1; their logs: $work/machine/logs/${machine_job}_N.log); to run only those again: sbatch --array=1 $work/machine/task.sh
grade.sh: the machine (not the students) failed, no grades for 1 of 2 submissions: oom; their notes begin 'machine: ' and say why: grade them again where the GPU works"

# A case our own solution fails (issue 66): its job fails with 2, Slurm cancels the array before any
# task runs, and --collect refuses in one line with exit code 2, as a local run does.
mkdir -p "$work/subs3"
echo "// pass" >"$work/subs3/erin.cu"
echo "3 3 3 f64 1 # ours fails" >"$work/ours-fails.txt"
bash assignments/grade.sh --slurm --cases "$work/ours-fails.txt" 03-mmm-tiled "$work/subs3" "$work/refused" >/dev/null
refused_job=$(cat "$work/refused/job") refused_canary=$(cat "$work/refused/canary-job")
wait_for "$refused_canary,$refused_job"
expect "a refused case: our solution's job failed with 2" "$(scontrol -o show job "$refused_canary" | grep -o 'ExitCode=[0-9:]*')" "ExitCode=2:0"
expect "a refused case: no task ran" "$(find "$work/refused/rows" "$work/refused/checks" -type f | wc -l) $(find "$work/refused/logs" -name "${refused_job}_*" | wc -l)" "0 0"
expect "a refused case: collect exits 2" "$(bash assignments/grade.sh --collect "$work/refused" >"$work/refused.csv" 2>"$work/refused.err" && echo 0 || echo $?)" 2
expect "a refused case: one line names the rule" "$(wc -l <"$work/refused.err") $(grep -c "^grade.sh: nothing graded: --cases $work/ours-fails.txt: our own solution gets FAIL for 'case two' there: a case the week cannot grade; drop it from the file" "$work/refused.err")" "1 1"

expect "--slurm does not write into a folder with files" "$(bash assignments/grade.sh --slurm 03-mmm-tiled "$work/subs" "$work/out" 2>&1 >/dev/null)" \
    "grade.sh: $work/out is not empty; --slurm writes a new folder (nothing is overwritten)"
expect "--collect of a folder --slurm did not write" "$(bash assignments/grade.sh --collect "$work/subs" 2>&1 >/dev/null)" "grade.sh: $work/subs was not written by grade.sh --slurm"
echo "test-slurm.sh: $checks checks, $failures failed"
(( failures == 0 ))

#!/usr/bin/env bash
# Issue 65, run 8 (one H200): item 4's gradings in a row, after the checks were made cheaper (ours
# runs between the program's runs, so k pairs take 2k + 1 runs; week 5's CPU values and every week's
# timing of ours in-process are computed once per case, not at every judging). Rounds FIRST, FIRST+1,
# ... up to LAST, none started that the slowest round so far (ROUND_S seconds, 200, until one has
# run) would carry past DEADLINE seconds (default 520). A round checks the programs below all at
# once; each lab --check holds the GPU's lock while it uses the GPU, and writes its phases
# (LAB_PHASES) into phases-ROUND.txt. Anything of ours still running 50 s past DEADLINE is killed,
# so the logs are packed before the call's limit. After the rounds, TESTS (GPU tests, "EXECUTABLE
# FILTER..." clauses separated by ";", from .gpu230/tests/) run one after another, each given what
# is left of the deadline. Release labs in .gpu230/ (from .gpu230z/c.tgz). Logs into one
# $OUT/run-8-FIRST.tgz, the times to stdout.
#
#   [TESTS="lab-mapped-gpu week_6_...; ..."] bash results/h200/issue65/run-8.sh FIRST LAST [DEADLINE]
set -u
first=$1 last=$2 deadline=${3:-520}
c=$PWD/.gpu230
logs=$(mktemp -d)/run-8-$first
mkdir -p "$logs"
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; nproc; date -u; } >"$logs/gpu.txt"
export LAB_BIN_DIR=$c/bin
work=$(mktemp -d)
start=$(date +%s)
left() { echo $(( deadline + 40 - $(date +%s) + start )); }
( sleep $(( deadline + 50 )); pkill -KILL -f "$c/" ) &
watchdog=$!
# Each program: WEEK NAME LAB FILE [LAB ARGUMENTS...]: our solutions, the broken programs whose rows
# depend on timing or on a race, and the programs built to sit near a limit.
programs=(
  "05-streams ours lab-streams reference/weeks/pipeline.cu"
  "05-streams synchronous-copies lab-streams assignments/05-streams/broken/synchronous-copies.cu"
  "05-streams one-stream lab-streams assignments/05-streams/broken/one-stream.cu"
  "05-streams no-wait lab-streams assignments/05-streams/broken/no-wait.cu"
  "05-streams near-the-time-limit lab-streams assignments/05-streams/near-limit/near-the-time-limit.cu"
  "06-pinned-mapped ours lab-mapped reference/weeks/zero_copy.cu"
  "06-pinned-mapped copies-anyway lab-mapped assignments/06-pinned-mapped/broken/copies-anyway.cu"
  "06-pinned-mapped near-the-time-limit lab-mapped assignments/06-pinned-mapped/near-limit/near-the-time-limit.cu"
  "06-pinned-mapped mmm-no-wait lab-mapped assignments/06-pinned-mapped/broken/mmm-no-wait.cu --program mmm-streamed-and-pinned"
)
round() {  # ROUND
  local n=$1 pids=() line week name lab file rest
  for line in "${programs[@]}"; do
    read -r week name lab file rest <<<"$line"
    mkdir -p "$work/$n-$week"
    cp "$file" "$work/$n-$week/$name.cu"
    (
      s=$(date +%s%N)
      # shellcheck disable=SC2086
      LAB_PHASES=$logs/phases-$n.txt LAB_GPU_LOCK=$work/gpu.lock timeout -k 10 "$(left)" "$c/bin/$lab" $rest \
        --program-source "$work/$n-$week/$name.cu" --check >"$logs/$week-$name-$n.log" 2>&1
      echo "round $n $week $name: rc=$? $(( ($(date +%s%N) - s) / 1000000 )) ms" >>"$logs/times.txt"
    ) &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p"; done
}
n=$first slowest=${ROUND_S:-200}
while (( n <= last )) && (( $(date +%s) - start + slowest <= deadline )); do
  s=$(date +%s)
  round "$n"
  took=$(( $(date +%s) - s )); (( took > slowest )) && slowest=$took
  echo "round $n: $took s" >>"$logs/rounds.txt"
  n=$(( n + 1 ))
done
IFS=';' read -ra tests <<<"${TESTS:-}"
for t in "${tests[@]}"; do
  read -r exe filters <<<"$t"
  [[ -z ${exe:-} ]] && continue
  # shellcheck disable=SC2086
  LAB_GPU_LOCK=$work/gpu.lock timeout -k 10 "$(left)" "$c/tests/$exe" --ignored --test-threads 1 $filters \
    >"$logs/$exe.log" 2>&1
  echo "$exe $filters: rc=$? at $(( $(date +%s) - start )) s" >>"$logs/rounds.txt"
done
kill "$watchdog" 2>/dev/null
tar czf "$OUT/run-8-$first.tgz" -C "$(dirname "$logs")" "run-8-$first"
cat "$logs/rounds.txt"; sort "$logs/times.txt"; cat "$logs"/phases-*.txt
grep -h "test result\|FAILED\|panicked" "$logs"/*-gpu.log 2>/dev/null

#!/usr/bin/env bash
# Issue 65, run 6 (two H200s of one host): item 4's ten gradings in a row with the final code (ours
# runs just before and just after the program, a time rule failed by less than twice its limit is
# measured again, and the waits rule asks for a call that waited for the GPU). Each GPU grades rounds
# in turn: GPU 0 rounds FIRST, FIRST+2, ..., GPU 1 FIRST+1, FIRST+3, ..., up to LAST, and starts no
# round that its slowest round so far (ROUND_S seconds, 280, until one has run) would carry past
# DEADLINE seconds (default 540). A round checks the programs below all at once, each lab --check
# holding its GPU's lock while it uses the GPU; each check's timeout is the call's deadline plus 40 s,
# so lock waits never cut a check short. With TESTS=1, GPU 1 first runs the GPU tests below.
# Release labs and GPU tests in .gpu220/ (from .gpu220z/c.tgz). Logs into one $OUT/run-6-FIRST.tgz
# (the device tool brings back 8 files at most), the times to stdout. The first call (TESTS=1, 1 10
# 530) brought back nothing: a check asked to stop at its timeout did not, and the call ran out.
#
#   bash results/h200/issue65/run-6.sh FIRST LAST [DEADLINE]
set -u
first=$1 last=$2 deadline=${3:-540}
c=$PWD/.gpu220
logs=$(mktemp -d)/run-6-$first
mkdir -p "$logs"
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; nproc; date -u; } >"$logs/gpu.txt"
export LAB_BIN_DIR=$c/bin
work=$(mktemp -d)
start=$(date +%s)
left() { echo $(( deadline + 40 - $(date +%s) + start )); }
# A check that outlives its timeout is killed 10 s after it was asked to stop (timeout -k); anything
# of ours still running 50 s past DEADLINE is killed, so the logs are packed before the call's limit.
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
# GPU tests: EXECUTABLE FILTERS...
tests=(
  "lab-simpson-gpu week_1_a_check_appends_its_phases_where_lab_phases_says"
  "lab-streams-gpu week_5_programs_are_judged week_5_the_honest_corpus week_5_a_program_without_our_trace"
  "lab-mapped-gpu week_6_programs_are_judged week_6_mmm_streamed_and_pinned week_6_the_honest_corpus"
)
round() {  # GPU ROUND
  local gpu=$1 n=$2 pids=() line week name lab file rest
  for line in "${programs[@]}"; do
    read -r week name lab file rest <<<"$line"
    mkdir -p "$work/$gpu-$n-$week"
    cp "$file" "$work/$gpu-$n-$week/$name.cu"
    (
      s=$(date +%s%N)
      # shellcheck disable=SC2086
      CUDA_VISIBLE_DEVICES=$gpu LAB_GPU_LOCK=$work/gpu-$gpu.lock timeout -k 10 "$(left)" "$c/bin/$lab" $rest \
        --program-source "$work/$gpu-$n-$week/$name.cu" --check >"$logs/$week-$name-$n.log" 2>&1
      echo "round $n GPU $gpu $week $name: rc=$? $(( ($(date +%s%N) - s) / 1000000 )) ms" >>"$logs/times.txt"
    ) &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p"; done
}
gpu_rounds() {  # GPU
  local gpu=$1 n=$(( first + $1 )) slowest=${ROUND_S:-280} s took
  while (( n <= last )) && (( $(date +%s) - start + slowest <= deadline )); do
    s=$(date +%s)
    round "$gpu" "$n"
    took=$(( $(date +%s) - s )); (( took > slowest )) && slowest=$took
    echo "round $n on GPU $gpu: $took s" >>"$logs/rounds.txt"
    n=$(( n + 2 ))
  done
}
gpu_tests() {  # the GPU tests, one after another on GPU 1, from the repository root
  local line exe filters
  for line in "${tests[@]}"; do
    read -r exe filters <<<"$line"
    # shellcheck disable=SC2086
    CUDA_VISIBLE_DEVICES=1 LAB_GPU_LOCK=$work/gpu-1.lock timeout -k 10 "$(left)" "$c/tests/$exe" --ignored --test-threads 1 $filters \
      >"$logs/$exe.log" 2>&1
    echo "$exe $filters: rc=$? at $(( $(date +%s) - start )) s" >>"$logs/rounds.txt"
  done
}
gpu_rounds 0 &
gpu0=$!
( [[ ${TESTS:-0} == 1 ]] && gpu_tests; gpu_rounds 1 ) &
wait "$gpu0" $!
kill "$watchdog" 2>/dev/null
tar czf "$OUT/run-6-$first.tgz" -C "$(dirname "$logs")" "run-6-$first"
cat "$logs/rounds.txt"; sort "$logs/times.txt"; grep -h "test result\|FAILED\|panicked" "$logs"/*-gpu.log 2>/dev/null

#!/usr/bin/env bash
# Issue 65, run 5 (two H200s of one host): item 4's gradings in a row, after week 5's STEPS went to a
# kernel as long as its copy and case 4 to 5 streams. Each GPU grades rounds in turn: GPU 0 rounds
# FIRST, FIRST+2, ..., GPU 1 FIRST+1, FIRST+3, ..., up to LAST, and starts no round that its slowest
# round so far would carry past DEADLINE seconds (default 540). A round checks weeks 5 and 6's test
# programs all at once, each lab --check holding its GPU's lock while it uses the GPU (so a check's
# wall time counts its waits: each may run until 40 s past DEADLINE; a round is taken to last ROUND_S
# seconds, 240 by default, until one has run).
# Release labs in .gpu210/bin (from .gpu210z/c.tgz); with TESTS=1, GPU 1 first runs lab-streams'
# GPU tests of week 5's honest corpus and legal cases (.gpu210/tests) under the new STEPS. SKIP (a
# regular expression) leaves out the programs whose "WEEK NAME" it matches. Into $OUT/run-5-FIRST/ (the
# first three calls wrote the same files as one .tgz),
# file by file, so that a run cut short still brings back what it wrote.
#
#   bash results/h200/issue65/run-5.sh FIRST LAST [DEADLINE]
set -u
first=$1 last=$2 deadline=${3:-540}
c=$PWD/.gpu210
logs=$OUT/run-5-$first
mkdir -p "$logs"
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; nproc; date -u; } >"$logs/gpu.txt"
export LAB_BIN_DIR=$c/bin
work=$(mktemp -d)
start=$(date +%s)
# Each program: WEEK NAME LAB FILE [LAB ARGUMENTS...]
programs=(
  "05-streams ours lab-streams reference/weeks/pipeline.cu"
  "05-streams starter lab-streams assignments/05-streams/pipeline.cu"
  "05-streams synchronous-copies lab-streams assignments/05-streams/broken/synchronous-copies.cu"
  "05-streams one-stream lab-streams assignments/05-streams/broken/one-stream.cu"
  "05-streams near-the-time-limit lab-streams assignments/05-streams/near-limit/near-the-time-limit.cu"
  "06-pinned-mapped ours lab-mapped reference/weeks/zero_copy.cu"
  "06-pinned-mapped starter lab-mapped assignments/06-pinned-mapped/zero_copy.cu"
  "06-pinned-mapped copies-anyway lab-mapped assignments/06-pinned-mapped/broken/copies-anyway.cu"
  "06-pinned-mapped near-the-time-limit lab-mapped assignments/06-pinned-mapped/near-limit/near-the-time-limit.cu"
  "06-pinned-mapped mmm-no-wait lab-mapped assignments/06-pinned-mapped/broken/mmm-no-wait.cu --program mmm-streamed-and-pinned"
)
round() {  # GPU ROUND
  local gpu=$1 n=$2 pids=() line week name lab file rest
  for line in "${programs[@]}"; do
    read -r week name lab file rest <<<"$line"
    [[ -n ${SKIP:-} && "$week $name" =~ $SKIP ]] && continue
    mkdir -p "$work/$gpu-$n-$week"
    cp "$file" "$work/$gpu-$n-$week/$name.cu"
    (
      s=$(date +%s%N)
      # shellcheck disable=SC2086
      CUDA_VISIBLE_DEVICES=$gpu LAB_GPU_LOCK=$work/gpu-$gpu.lock timeout $(( deadline + 40 - $(date +%s) + start )) "$c/bin/$lab" $rest \
        --program-source "$work/$gpu-$n-$week/$name.cu" --check >"$logs/$week-$name-$n.log" 2>&1
      echo "round $n GPU $gpu $week $name: rc=$? $(( ($(date +%s%N) - s) / 1000000 )) ms" >>"$logs/times.txt"
    ) &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p"; done
}
gpu_rounds() {  # GPU
  local gpu=$1 n=$(( first + $1 )) slowest=${ROUND_S:-240} s took
  while (( n <= last )) && (( $(date +%s) - start + slowest <= deadline )); do
    s=$(date +%s)
    round "$gpu" "$n"
    took=$(( $(date +%s) - s )); (( took > slowest )) && slowest=$took
    echo "round $n on GPU $gpu: $took s" >>"$logs/rounds.txt"
    n=$(( n + 2 ))
  done
}
gpu_tests() {  # lab-streams' GPU tests of week 5's programs, on GPU 1, from the repository root
  CUDA_VISIBLE_DEVICES=1 timeout 300 "$c/tests/lab-streams-gpu" --ignored --test-threads 1 week_5_the_honest_corpus week_5_our_solutions \
    >"$logs/lab-streams-gpu-week5.log" 2>&1
  echo "lab-streams GPU tests (week 5's honest corpus, legal cases): rc=$? at $(( $(date +%s) - start )) s" >>"$logs/rounds.txt"
}
gpu_rounds 0 &
( [[ ${TESTS:-0} == 1 ]] && gpu_tests; gpu_rounds 1 ) &
wait
cat "$logs/rounds.txt"; sort "$logs/times.txt"

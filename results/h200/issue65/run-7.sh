#!/usr/bin/env bash
# Issue 65, run 7 (two H200s of one host): the waits rule's new form (a call that waited for the GPU
# between its last work and the read) against the honest corpora, whose programs wait in every way
# the course teaches, polling included (query-loop.cu, event-query.cu). Run 6's GPU test of week 5's
# honest corpus ran past its 540 s, so here each honest program is checked on its own (the week's
# cases, not the test's small ones): week 5's on GPU 0, week 6's on GPU 1 and then week 6's GPU tests
# of the broken and German programs. Checks on one GPU share its lock; each is given until DEADLINE
# seconds (default 480) plus 40, and anything of ours still running 50 s past DEADLINE is killed.
# Logs into $OUT/run-7.tgz, the exit codes to stdout.
#
#   bash results/h200/issue65/run-7.sh [DEADLINE]
set -u
deadline=${1:-480}
c=$PWD/.gpu220
logs=$(mktemp -d)/run-7
mkdir -p "$logs"
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; nproc; date -u; } >"$logs/gpu.txt"
export LAB_BIN_DIR=$c/bin
work=$(mktemp -d)
start=$(date +%s)
left() { echo $(( deadline + 40 - $(date +%s) + start )); }
( sleep $(( deadline + 50 )); pkill -KILL -f "$c/" ) &
watchdog=$!
check_all() {  # GPU LAB FILE...: every file checked at once, in turn on the GPU's lock
  local gpu=$1 lab=$2 pids=() file name
  shift 2
  for file in "$@"; do
    name=$(basename "$file" .cu)
    mkdir -p "$work/$gpu-$name"
    cp "$file" "$work/$gpu-$name/$name.cu"
    local extra=()
    [[ $name == mmm-* ]] && extra=(--program "$([[ $lab == lab-streams ]] && echo mmm-streamed || echo mmm-streamed-and-pinned)")
    (
      s=$(date +%s%N)
      CUDA_VISIBLE_DEVICES=$gpu LAB_GPU_LOCK=$work/gpu-$gpu.lock timeout -k 10 "$(left)" "$c/bin/$lab" "${extra[@]}" \
        --program-source "$work/$gpu-$name/$name.cu" --check >"$logs/$lab-$name.log" 2>&1
      echo "GPU $gpu $lab $name: rc=$? $(( ($(date +%s%N) - s) / 1000000 )) ms" >>"$logs/times.txt"
    ) &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p"; done
}
check_all 0 lab-streams assignments/05-streams/honest/*.cu &
gpu0=$!
(
  check_all 1 lab-mapped assignments/06-pinned-mapped/honest/*.cu
  CUDA_VISIBLE_DEVICES=1 LAB_GPU_LOCK=$work/gpu-1.lock timeout -k 10 "$(left)" "$c/tests/lab-mapped-gpu" --ignored --test-threads 1 \
    week_6_programs_are_judged week_6_mmm_streamed_and_pinned >"$logs/lab-mapped-gpu.log" 2>&1
  echo "lab-mapped-gpu week_6_programs_are_judged week_6_mmm_streamed_and_pinned: rc=$? at $(( $(date +%s) - start )) s" >>"$logs/times.txt"
) &
wait "$gpu0" $!
kill "$watchdog" 2>/dev/null
tar czf "$OUT/run-7.tgz" -C "$(dirname "$logs")" run-7
sort "$logs/times.txt"; grep -h "test result\|FAILED\|panicked" "$logs"/*-gpu.log 2>/dev/null

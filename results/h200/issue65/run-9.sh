#!/usr/bin/env bash
# Issue 65, run 9 (one H200): the honest corpora with run 8's cheaper checks (ours between the
# program's runs; CPU values and ours's in-process times once per case): each honest program of
# weeks 5 and 6 checked on its own on the week's cases, all at once, in turn on the GPU's lock; then
# week 5's GPU tests of the broken programs and of a program without our trace. Each check is given
# until DEADLINE seconds (default 330) plus 20; anything of ours still running 30 s past DEADLINE is
# killed, so the logs are packed before the call's limit. Release labs and GPU tests in .gpu230/
# (from .gpu230z/c.tgz). Logs into $OUT/run-9.tgz, the exit codes to stdout.
#
#   bash results/h200/issue65/run-9.sh [DEADLINE]
set -u
deadline=${1:-330}
c=$PWD/.gpu230
logs=$(mktemp -d)/run-9
mkdir -p "$logs"
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; nproc; date -u; } >"$logs/gpu.txt"
export LAB_BIN_DIR=$c/bin
work=$(mktemp -d)
start=$(date +%s)
left() { echo $(( deadline + 20 - $(date +%s) + start )); }
( sleep $(( deadline + 30 )); pkill -KILL -f "$c/" ) &
watchdog=$!
check() {  # LAB FILE: one honest program, its own folder, the GPU's lock shared
  local lab=$1 file=$2 name extra=()
  name=$(basename "$file" .cu)
  mkdir -p "$work/$lab-$name"
  cp "$file" "$work/$lab-$name/$name.cu"
  [[ $name == mmm-* ]] && extra=(--program "$([[ $lab == lab-streams ]] && echo mmm-streamed || echo mmm-streamed-and-pinned)")
  s=$(date +%s%N)
  LAB_PHASES=$logs/phases.txt LAB_GPU_LOCK=$work/gpu.lock timeout -k 10 "$(left)" "$c/bin/$lab" "${extra[@]}" \
    --program-source "$work/$lab-$name/$name.cu" --check >"$logs/$lab-$name.log" 2>&1
  echo "$lab $name: rc=$? $(( ($(date +%s%N) - s) / 1000000 )) ms" >>"$logs/times.txt"
}
pids=()
for file in assignments/05-streams/honest/*.cu; do check lab-streams "$file" & pids+=($!); done
for file in assignments/06-pinned-mapped/honest/*.cu; do check lab-mapped "$file" & pids+=($!); done
for p in "${pids[@]}"; do wait "$p"; done
LAB_GPU_LOCK=$work/gpu.lock timeout -k 10 "$(left)" "$c/tests/lab-streams-gpu" --ignored --test-threads 1 \
  week_5_programs_are_judged week_5_a_program_without_our_trace >"$logs/lab-streams-gpu.log" 2>&1
echo "lab-streams-gpu week_5_programs_are_judged week_5_a_program_without_our_trace: rc=$? at $(( $(date +%s) - start )) s" >>"$logs/times.txt"
kill "$watchdog" 2>/dev/null
tar czf "$OUT/run-9.tgz" -C "$(dirname "$logs")" run-9
sort "$logs/times.txt"; grep -h "test result\|FAILED\|panicked" "$logs"/*-gpu.log 2>/dev/null

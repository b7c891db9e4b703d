#!/usr/bin/env bash
# Issue 60, item 2 on the GPU: the guardian around case children; checks and the week tests still pass.
set -u
export LAB_BIN_DIR=$PWD/.gpu60/bin
B=.gpu60/bin
t() { local s=$(date +%s%N); "$@"; local rc=$?; echo "rc=$rc wall_ms=$(( ($(date +%s%N) - s) / 1000000 )): $*"; }
living() { for p in /proc/[0-9]*; do s=$(cat $p/stat 2>/dev/null) || continue; rest=${s##*) }; set -- $rest; [[ $1 != Z && $(tr '\0' ' ' < $p/cmdline 2>/dev/null) == *"$2"* ]] && echo x; done | wc -l; }
{
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t $B/lab-mmm --kernel-source kernels/cuda/mmm.cu --kernel tiled --check
t $B/lab-simpson --kernel-source kernels/cuda/simpson.cu --check
t $B/lab-streams --program-source reference/weeks/pipeline.cu --check
for run in "lab-mmm|--check-case|--kernel-source kernels/cuda/mmm.cu --kernel tiled --check --sanitize" "lab-streams|lab-program-|--program-source reference/weeks/pipeline.cu --check"; do
  IFS='|' read -r name child args <<<"$run"
  $B/$name $args > /dev/null 2>&1 & pid=$!
  for i in $(seq 1 150); do [[ $(pgrep -f -- "$child" | wc -l) -gt 0 ]] && break; sleep 0.1; done
  echo "$name: before kill -9: $(pgrep -f -- "$child" | wc -l) processes naming $child, $(pgrep -f compute-sanitizer | wc -l) compute-sanitizer"
  kill -9 $pid; wait $pid 2>/dev/null; sleep 2
  left=$(ps -eo stat,cmd | grep -v grep | grep -E -- "$child|compute-sanitizer" | grep -v "^Z" | wc -l)
  echo "$name: 2 s after: $left living processes naming $child or compute-sanitizer"
  nvidia-smi --query-compute-apps=pid,process_name --format=csv,noheader | sed 's/^/  still on the GPU: /'
done
.gpu60/tests/mmm week_3 --ignored --test-threads 1 2>&1 | grep -E "^test |test result"
.gpu60/tests/simpson week --ignored --test-threads 1 2>&1 | grep -E "^test |test result"
} 2>&1 | tee $OUT/item2.log | grep -vE "^\| |^$"

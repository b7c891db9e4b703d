#!/usr/bin/env bash
# Issue 65, item 4, run 1 (one H200; no code changed): program-week submissions graded ten times
# in a row with the labs of d03755a: week 6's zero-copy solution and an honest submission, week 5's
# pipeline solution. Each grading's table kept, and how long it took. Release labs in
# .gpu111/bin. Into $OUT/issue65-verdicts-1.tgz.
set -u
c=.gpu111
logs=$(mktemp -d)
trap 'tar -C "$logs" -czf "$OUT/issue65-verdicts-1.tgz" .' EXIT
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; date -u; } >"$logs/gpu.txt"
grade() {  # NAME LAB ARGS...
  local name=$1 lab=$2; shift 2
  for i in 1 2 3 4 5 6 7 8 9 10; do
    s=$(date +%s%N)
    timeout 60 $c/bin/$lab "$@" --check >"$logs/$name-$i.log" 2>&1
    rc=$?; e=$(date +%s%N)
    echo "$name $i rc=$rc $(( (e - s) / 1000000 )) ms" >>"$logs/times.txt"
  done
}
grade w6-zero-copy lab-mapped --program-source assignments/06-pinned-mapped/zero_copy.cu
grade w6-honest-event-wait lab-mapped --program-source assignments/06-pinned-mapped/honest/event-wait.cu
grade w5-pipeline lab-streams --program-source assignments/05-streams/pipeline.cu

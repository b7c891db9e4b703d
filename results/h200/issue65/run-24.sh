#!/usr/bin/env bash
# Issue 65, run 24 (one H200): where a week-3 check's time alone on the GPU goes. Four submissions
# checked one at a time with a lock file named (so the lab holds the GPU per timed loop and for the
# measured launches, and LAB_PHASES says how long): each once with ncu timed (run-24/ncu-timed.sh:
# its wall time, passes per kernel, and the same run profiling no kernel), and once with an "ncu"
# that fails at once, so the held time is the cases' alone. Release lab in .gpu242/bin.
# Into $OUT/issue65-run-24.tgz.
set -u
c=$PWD/.gpu242
logs=$(mktemp -d)
trap 'tar -C "$logs" -czf "$OUT/issue65-run-24.tgz" .' EXIT
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; nproc; date -u; } >"$logs/gpu.txt"
here=$PWD/results/h200/issue65/run-24
fails=$(mktemp -d)/ncu; printf '#!/bin/sh\nexit 1\n' >"$fails"; chmod +x "$fails"
check() { # name, source, ncu
  local lock; lock=$(mktemp -d)/gpu.lock
  mkdir -p "$logs/ncu-$1"
  local s; s=$(date +%s%N)
  LAB_GPU_LOCK=$lock LAB_PHASES=$logs/phases.txt NCU=$3 NCU_LOG_DIR=$logs/ncu-$1 \
    timeout 300 "$c/bin/lab-mmm" --kernel-source "$2" --kernel tiled --check --csv >"$logs/$1.csv" 2>"$logs/$1.err"
  echo "$1: rc=$? $(( ($(date +%s%N) - s) / 1000000 )) ms" >>"$logs/times.txt"
}
a=assignments/03-mmm-tiled
for s in kernels/cuda/mmm.cu $a/broken/printf-every-thread.cu $a/adversarial/bulk-copy-naive.cu $a/honest/while-and-branches.cu; do
  n=$(basename "$s" .cu)
  check "$n" "$s" "$here/ncu-timed.sh"
  check "$n-no-ncu" "$s" "$fails"
done
cat "$logs/times.txt" "$logs/phases.txt"; cat "$logs"/ncu-*/ncu-*.txt | grep -v '^--csv'

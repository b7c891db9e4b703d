#!/usr/bin/env bash
# Issue 65, run 25 (one H200): what a week-3 check's measured run costs under ncu, and what of it
# depends on the metrics. Two submissions checked one at a time with a lock file named, ncu wrapped
# by run-25/ncu-variants.sh, which runs the measured child again under variants of the metrics (its
# wall time each, and ncu's passes per kernel). Release lab in .gpu242/bin. Into
# $OUT/issue65-run-25.tgz.
set -u
c=$PWD/.gpu242
logs=$(mktemp -d)
trap 'tar -C "$logs" -czf "$OUT/issue65-run-25.tgz" .' EXIT
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; nproc; date -u; } >"$logs/gpu.txt"
here=$PWD/results/h200/issue65/run-25
check() { # name, source, variants
  local lock; lock=$(mktemp -d)/gpu.lock
  mkdir -p "$logs/ncu-$1"
  local s; s=$(date +%s%N)
  LAB_GPU_LOCK=$lock LAB_PHASES=$logs/phases.txt NCU=$here/ncu-variants.sh NCU_LOG_DIR=$logs/ncu-$1 NCU_VARIANTS=$3 \
    timeout 400 "$c/bin/lab-mmm" --kernel-source "$2" --kernel tiled --check --csv >"$logs/$1.csv" 2>"$logs/$1.err"
  echo "$1: rc=$? $(( ($(date +%s%N) - s) / 1000000 )) ms" >>"$logs/times.txt"
}
check mmm kernels/cuda/mmm.cu "again shared smsp l1tex first passes"
check printf-every-thread assignments/03-mmm-tiled/broken/printf-every-thread.cu "shared passes"
cd "$logs" && for f in times.txt phases.txt ncu-*/variants.txt ncu-*/passes.out; do echo "== $f"; cat "$f"; done

#!/usr/bin/env bash
# Issue 65, run 4 (one H200): the code as committed, through grade.sh with its defaults (one job per
# GPU; the lab gets the GPU lock, so ncu starts only once the cases are done and runs alone): three
# week-3 submissions, and week 5's solution and near-limit program. Release labs and grader in
# .gpu203/bin (from .gpu203z/c.tgz). Into $OUT/issue65-run-4.tgz.
set -u
c=$PWD/.gpu203
logs=$(mktemp -d)
trap 'tar -C "$logs" -czf "$OUT/issue65-run-4.tgz" .' EXIT
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; nproc; date -u; } >"$logs/gpu.txt"
export LAB_BIN_DIR=$c/bin
work=$(mktemp -d)
elapsed() { local s=$1; echo $(( ($(date +%s%N) - s) / 1000000 )); }
mkdir -p "$work/w3" "$work/w5"
cp assignments/03-mmm-tiled/honest/padded-tiles.cu assignments/03-mmm-tiled/broken/missing-syncthreads.cu \
  assignments/03-mmm-tiled/adversarial/tiles-only-where-measured.cu "$work/w3/"
cp reference/weeks/pipeline.cu "$work/w5/ours.cu"
cp assignments/05-streams/honest/near-the-time-limit.cu "$work/w5/"
for week in 03-mmm-tiled:w3 05-streams:w5; do
  s=$(date +%s%N)
  timeout 110 bash assignments/grade.sh "${week%%:*}" "$work/${week#*:}" --out "$logs/${week#*:}.csv" \
    --keep "$logs/${week#*:}-checks" >"$logs/${week#*:}.log" 2>&1
  echo "${week%%:*}: rc=$? $(elapsed "$s") ms" >>"$logs/times.txt"
done
cat "$logs/times.txt" "$logs/w3.csv" "$logs/w5.csv" | cut -c1-400

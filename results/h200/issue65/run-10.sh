#!/usr/bin/env bash
# Issue 65, run 10 (one H200): where a week-3 class spends its time, with LAB_PHASES, before item 3's
# work. A class of 300 (scripts/make-class.sh); its first 24 graded with --jobs 1, the next 64 with
# --jobs 16 (the machine's 16 cores), GPU use sampled by nvidia-smi every 500 ms meanwhile. Release
# labs and grader in .gpu231/bin (from .gpu231z/c.tgz). Into $OUT/issue65-run-10.tgz.
set -u
c=$PWD/.gpu231
logs=$(mktemp -d)
trap 'tar -C "$logs" -czf "$OUT/issue65-run-10.tgz" .' EXIT
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; nproc; date -u; } >"$logs/gpu.txt"
export LAB_BIN_DIR=$c/bin
work=$(mktemp -d)
elapsed() { local s=$1; echo $(( ($(date +%s%N) - s) / 1000000 )); }
bash scripts/make-class.sh 03-mmm-tiled 300 "$work/class" >"$logs/make-class.log" 2>&1
cp "$work/class/originals.txt" "$logs/class-originals.txt"
part() {  # NAME FIRST COUNT
  mkdir -p "$work/$1"
  ls "$work/class" | grep '^s[0-9]' | sed -n "$2,$(($2 + $3 - 1))p" | while read -r f; do cp "$work/class/$f" "$work/$1/"; done
}
part j1 1 24
part j16 25 64
grade() {  # NAME JOBS LIMIT
  local s=$(date +%s%N)
  nvidia-smi --query-gpu=timestamp,utilization.gpu,memory.used --format=csv,noheader -lms 500 >"$logs/smi-$1.csv" 2>&1 &
  local smi=$!
  LAB_PHASES=$logs/phases-$1.txt timeout "$3" bash assignments/grade.sh --jobs "$2" 03-mmm-tiled "$work/$1" \
    --out "$logs/$1.csv" --keep "$logs/$1-checks" >"$logs/$1.log" 2>&1
  echo "$1: --jobs $2, rc=$? $(elapsed "$s") ms" >>"$logs/times.txt"
  kill "$smi"
}
grade j1 1 230
grade j16 16 230
cat "$logs/times.txt"

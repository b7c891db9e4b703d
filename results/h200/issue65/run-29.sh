#!/usr/bin/env bash
# Issue 65, run 29 (one H200): run 26's class again, for 220 s (this session's device time), after
# two changes: a lease on the GPU's lock given back by the thread that drops it (not by its keeper
# thread, woken first), and each lab of a run of several jobs given its share of the cores
# (RAYON_NUM_THREADS: 1 with 16 jobs on 16 cores). What a check holds the GPU alone (LAB_PHASES)
# against run 26's. Release grader and lab-mmm in .gpu245/bin. Into $OUT/issue65-run-29.tgz.
set -u
c=$PWD/.gpu245
logs=$(mktemp -d)
trap 'tar -C "$logs" -czf "$OUT/issue65-run-29.tgz" .' EXIT
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; nproc; date -u; } >"$logs/gpu.txt"
export LAB_BIN_DIR=$c/bin
work=$(mktemp -d)
elapsed() { local s=$1; echo $(( ($(date +%s%N) - s) / 1000000 )); }
bash scripts/make-class.sh 03-mmm-tiled 300 "$work/class" >"$logs/make-class.log" 2>&1
cp "$work/class/originals.txt" "$logs/class-originals.txt"
s=$(date +%s%N)
nvidia-smi --query-gpu=timestamp,utilization.gpu,memory.used --format=csv,noheader -lms 500 >"$logs/smi.csv" 2>&1 &
smi=$!
LAB_PHASES=$logs/phases.txt timeout 220 bash assignments/grade.sh --jobs 16 03-mmm-tiled "$work/class" \
  --out "$logs/class-300.csv" --keep "$logs/class-300-checks" >"$logs/class-300.log" 2>&1
echo "class of 300: --jobs 16, rc=$? $(elapsed "$s") ms" >>"$logs/times.txt"
kill "$smi"
python3 results/h200/issue65/held-summary.py "$logs/phases.txt" 220 >"$logs/held-summary.log"
cat "$logs/times.txt" "$logs/held-summary.log"

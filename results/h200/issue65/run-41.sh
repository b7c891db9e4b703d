#!/usr/bin/env bash
# Issue 65, run 41 (one H200): run 26's class of 300 week-3 submissions with --jobs 16 again, for 520
# s, with the grading code of 0115897 (after run 29's 220 s: a lease given back by the thread that
# drops it, each job's labs their share of the cores, the review's fixes), to measure the rate of a
# whole run. What each check holds the GPU alone (LAB_PHASES) and the verdicts against run 10's
# --jobs 1. Release grader and lab-mmm in .gpu249/bin. Into $OUT/issue65-run-41.tgz.
set -u
c=$PWD/.gpu249
logs=$(mktemp -d)
trap 'tar -C "$logs" -czf "$OUT/issue65-run-41.tgz" .' EXIT
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; nproc; date -u; } >"$logs/gpu.txt"
export LAB_BIN_DIR=$c/bin
work=$(mktemp -d)
elapsed() { local s=$1; echo $(( ($(date +%s%N) - s) / 1000000 )); }
bash scripts/make-class.sh 03-mmm-tiled 300 "$work/class" >"$logs/make-class.log" 2>&1
cp "$work/class/originals.txt" "$logs/class-originals.txt"
s=$(date +%s%N)
nvidia-smi --query-gpu=timestamp,utilization.gpu,memory.used --format=csv,noheader -lms 500 >"$logs/smi.csv" 2>&1 &
smi=$!
LAB_PHASES=$logs/phases.txt timeout 520 bash assignments/grade.sh --jobs 16 03-mmm-tiled "$work/class" \
  --out "$logs/class-300.csv" --keep "$logs/class-300-checks" >"$logs/class-300.log" 2>&1
echo "class of 300: --jobs 16, rc=$? $(elapsed "$s") ms" >>"$logs/times.txt"
kill "$smi"
python3 results/h200/issue65/held-summary.py "$logs/phases.txt" 520 >"$logs/held-summary.log"
python3 results/h200/issue65/same-verdicts.py kept-runs "$logs/class-originals.txt" results/h200/issue65/run-10/j1-checks \
  "$logs/class-300-checks" >"$logs/same-verdicts.log" 2>&1
echo "same-verdicts rc=$?" >>"$logs/times.txt"
cat "$logs/times.txt" "$logs/held-summary.log" | head -30; tail -5 "$logs/same-verdicts.log"

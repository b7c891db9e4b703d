#!/usr/bin/env bash
# Issue 65, run 44 (one H200): run 41's class of 300 week-3 submissions with --jobs 16, for at most
# 540 s (the device's limit per call is 600), after runs 42 and 43: ncu reads the texture pipe's requests and TMA's bytes only where the
# student's PTX has such instructions (120 ms a kernel with them, 10 ms without), and a measured
# child launches an empty kernel of ours first, outside the GPU's lock, for ncu's 0.6 s of
# preparation. What each check holds the GPU alone (LAB_PHASES) and the verdicts against run 10's
# --jobs 1. Release grader and lab-mmm in .gpu250/bin. Into $OUT/issue65-run-44.tgz.
# The code: branch issue65-metric-sets without its metric_set lock, with a warm-up launch
# (kernels/cuda/warm_up.cu, measure::warm_up) that this run showed wrong and that was dropped.
set -u
c=$PWD/.gpu250
logs=$(mktemp -d)
trap 'tar -C "$logs" -czf "$OUT/issue65-run-44.tgz" .' EXIT
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; nproc; date -u; } >"$logs/gpu.txt"
export LAB_BIN_DIR=$c/bin
work=$(mktemp -d)
elapsed() { local s=$1; echo $(( ($(date +%s%N) - s) / 1000000 )); }
bash scripts/make-class.sh 03-mmm-tiled 300 "$work/class" >"$logs/make-class.log" 2>&1
cp "$work/class/originals.txt" "$logs/class-originals.txt"
s=$(date +%s%N)
nvidia-smi --query-gpu=timestamp,utilization.gpu,memory.used --format=csv,noheader -lms 500 >"$logs/smi.csv" 2>&1 &
smi=$!
vmstat 2 >"$logs/vmstat.txt" 2>&1 &
vm=$!
LAB_PHASES=$logs/phases.txt timeout 540 bash assignments/grade.sh --jobs 16 03-mmm-tiled "$work/class" \
  --out "$logs/class-300.csv" --keep "$logs/class-300-checks" >"$logs/class-300.log" 2>&1
echo "class of 300: --jobs 16, rc=$? $(elapsed "$s") ms" >>"$logs/times.txt"
kill "$smi" "$vm"
python3 results/h200/issue65/held-summary.py "$logs/phases.txt" "$(( ($(date +%s%N) - s) / 1000000000 ))" >"$logs/held-summary.log"
python3 results/h200/issue65/same-verdicts.py kept-runs "$logs/class-originals.txt" results/h200/issue65/run-10/j1-checks \
  "$logs/class-300-checks" >"$logs/same-verdicts.log" 2>&1
echo "same-verdicts rc=$?" >>"$logs/times.txt"
cat "$logs/times.txt" "$logs/held-summary.log" | head -30; tail -5 "$logs/same-verdicts.log"

#!/usr/bin/env bash
# Issue 65, run 26 (one H200): run 14's class again (300 week-3 submissions from scripts/make-class.sh,
# --jobs 16 on the machine's 16 cores, LAB_PHASES and nvidia-smi's GPU use every 500 ms) after three
# changes: ours measured once per grading run and GPU (each check's ncu child launches the student's
# kernels alone), the measured child holding the GPU per kernel launch (not from its modules' load
# on), and a student's timed runs budgeted by their wall-clock time (not their timed launches' alone).
# At most 560 s. Release labs and grader in .gpu243/bin. Into $OUT/issue65-run-26.tgz.
set -u
c=$PWD/.gpu243
logs=$(mktemp -d)
trap 'tar -C "$logs" -czf "$OUT/issue65-run-26.tgz" .' EXIT
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; nproc; date -u; } >"$logs/gpu.txt"
export LAB_BIN_DIR=$c/bin
work=$(mktemp -d)
elapsed() { local s=$1; echo $(( ($(date +%s%N) - s) / 1000000 )); }
bash scripts/make-class.sh 03-mmm-tiled 300 "$work/class" >"$logs/make-class.log" 2>&1
cp "$work/class/originals.txt" "$logs/class-originals.txt"
s=$(date +%s%N)
nvidia-smi --query-gpu=timestamp,utilization.gpu,memory.used --format=csv,noheader -lms 500 >"$logs/smi.csv" 2>&1 &
smi=$!
LAB_PHASES=$logs/phases.txt timeout 560 bash assignments/grade.sh --jobs 16 03-mmm-tiled "$work/class" \
  --out "$logs/class-300.csv" --keep "$logs/class-300-checks" >"$logs/class-300.log" 2>&1
echo "class of 300: --jobs 16, rc=$? $(elapsed "$s") ms" >>"$logs/times.txt"
kill "$smi"
cat "$logs/times.txt"; tail -3 "$logs/class-300.log"; wc -l "$logs/phases.txt"

#!/usr/bin/env bash
# Issue 65, run 27 (one H200): the measured rules after ours came to be measured once per grading run
# (where a lock file is named: the student's kernels in one ncu child, ours in another, once) and
# the measured child to hold the GPU per launch. Weeks 4 and 7 (the other two measured weeks):
# every honest, broken and adversarial submission through grade.sh with --jobs 1 and --jobs 4, CSVs
# compared (grade.sh names a lock per GPU in both: ours measured once, by our solution's check; this
# comment corrected after the run, which said --jobs 1 named none). Week 3's solution checked alone
# without a lock and with one (LAB_PHASES). Release labs and grader in .gpu243/bin. Into
# $OUT/issue65-run-27.tgz.
set -u
c=$PWD/.gpu243
logs=$(mktemp -d)
trap 'tar -C "$logs" -czf "$OUT/issue65-run-27.tgz" .' EXIT
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; nproc; date -u; } >"$logs/gpu.txt"
export LAB_BIN_DIR=$c/bin
elapsed() { local s=$1; echo $(( ($(date +%s%N) - s) / 1000000 )); }
for week in 04-constant-tracer 07-dynamic-parallelism; do
  subs=$(mktemp -d)
  for kind in honest broken adversarial; do
    for f in assignments/$week/$kind/*.cu; do cp "$f" "$subs/$kind-$(basename "$f")"; done
  done
  for jobs in 1 4; do
    s=$(date +%s%N)
    timeout 200 bash assignments/grade.sh --jobs $jobs "$week" "$subs" --out "$logs/$week-j$jobs.csv" \
      --keep "$logs/$week-j$jobs-checks" >"$logs/$week-j$jobs.log" 2>&1
    echo "$week --jobs $jobs: rc=$? $(elapsed "$s") ms" >>"$logs/times.txt"
  done
  python3 results/h200/issue65/same-verdicts.py rounds "$logs/$week-j1.csv" "$logs/$week-j4.csv" \
    >"$logs/$week-same.txt" 2>&1
  echo "$week same verdicts: rc=$?" >>"$logs/times.txt"
done
for lock in none named; do
  dir=$(mktemp -d)
  s=$(date +%s%N)
  if [ $lock = named ]; then export LAB_GPU_LOCK=$dir/gpu.lock; else unset LAB_GPU_LOCK; fi
  LAB_PHASES=$logs/phases.txt timeout 120 "$c/bin/lab-mmm" --kernel-source kernels/cuda/mmm.cu --kernel tiled \
    --check --csv >"$logs/mmm-lock-$lock.csv" 2>"$logs/mmm-lock-$lock.err"
  echo "mmm.cu, lock $lock: rc=$? $(elapsed "$s") ms" >>"$logs/times.txt"
done
unset LAB_GPU_LOCK
cat "$logs/times.txt" "$logs/phases.txt" "$logs"/*-same.txt; cut -d, -f1,2 --complement "$logs/mmm-lock-none.csv" | tail -1

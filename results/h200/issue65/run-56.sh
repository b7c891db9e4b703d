#!/usr/bin/env bash
# Issue 65, run 56 (one H200): measured children take their turn with ncu one at a time
# (grading::gpu_lock::ncu_turn), after run 55's /proc/locks showed each child holding ncu's own lock
# twice, 1 to 3 s more each time, where others waited for it. (1) weeks 4 and 7 (the other measured
# weeks) with --jobs 4 against run 27's --jobs 1, as run 53; (2) lab-mmm's GPU test of the measured
# phases and of week 3's broken kernels; (3) the class of 300 with --jobs 16 for 300 s, /proc/locks
# every 20 ms; (4) lab-mmm's GPU tests under compute-sanitizer and of the legal cases, for what is
# left. The bundle: .gpu261/bin and .gpu261/tests/lab-mmm-gpu (.gpu261z/c.tgz carried).
set -u
tar xzf .gpu261z/c.tgz
c=$PWD/.gpu261
logs=$OUT/weeks
mkdir -p "$logs"
export LAB_BIN_DIR=$c/bin
for week in 04-constant-tracer 07-dynamic-parallelism; do
  subs=$(mktemp -d)
  for kind in honest broken adversarial; do
    for f in assignments/$week/$kind/*.cu; do cp "$f" "$subs/$kind-$(basename "$f")"; done
  done
  start=$(date +%s%N)
  LAB_PHASES=$logs/$week-phases.txt timeout 100 bash assignments/grade.sh --jobs 4 "$week" "$subs" \
    --out "$logs/$week-j4.csv" >"$logs/$week-j4.log" 2>&1
  echo "$week --jobs 4: rc=$? $(( ($(date +%s%N) - start) / 1000000 )) ms" >>"$logs/times.txt"
  python3 results/h200/issue65/same-verdicts.py rounds results/h200/issue65/run-27/$week-j1.csv "$logs/$week-j4.csv" \
    >"$logs/$week-same.txt" 2>&1
  echo "$week same verdicts as run 27's --jobs 1: rc=$?" >>"$logs/times.txt"
done
cat "$logs/times.txt" "$logs"/*-same.txt
timeout -k 10 60 "$c/tests/lab-mmm-gpu" --include-ignored --test-threads=1 week_3_each week_3_broken \
  >"$OUT/lab-mmm-gpu-1.log" 2>&1
echo "lab-mmm GPU tests (1) rc=$?"
grep -E "^test |test result|panicked" "$OUT/lab-mmm-gpu-1.log"
python3 results/h200/issue65/locks.py watch "$OUT/locks.tsv" 20 &
watcher=$!
bash results/h200/issue65/class-run.sh .gpu261 16 300 run-56
kill "$watcher"
gzip "$OUT/locks.tsv"
python3 results/h200/issue65/locks.py use "$OUT/locks.tsv.gz" gpu-0.lock
python3 results/h200/issue65/locks.py spans "$OUT/locks.tsv.gz" | grep "^# "
timeout -k 10 90 "$c/tests/lab-mmm-gpu" --include-ignored --test-threads=1 under_sanitize passes_under_compute_sanitizer \
  corners_of_the_legal >"$OUT/lab-mmm-gpu-2.log" 2>&1
echo "lab-mmm GPU tests (2) rc=$?"
grep -E "^test |test result|panicked" "$OUT/lab-mmm-gpu-2.log"

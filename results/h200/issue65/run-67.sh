#!/usr/bin/env bash
# Issue 65, run 67 (one H200): main's code (d57a80f's grader and labs, .gpu270/bin, run 65's bundle
# A) with main's lab-mmm GPU tests (.gpu270/tests/lab-mmm-gpu, the time-limit test now also with a
# lock named): batch, phases, time limit, the race case with and without a lock; then the class of
# 300 with --jobs 16 for 360 s, for a steadier rate than runs 65 and 66's 150 s.
# (.gpu270z/c.tgz carried.)
set -u
tar xzf .gpu270z/c.tgz
c=$PWD/.gpu270
export LAB_BIN_DIR=$c/bin
timeout -k 10 200 "$c/tests/lab-mmm-gpu" --include-ignored --test-threads=1 --nocapture one_batch week_3_each \
  a_time_limit a_plain_check_finds >"$OUT/lab-mmm-gpu.log" 2>&1
echo "lab-mmm GPU tests rc=$?"
grep -E "^test |test result|panicked|^batch of" "$OUT/lab-mmm-gpu.log"
python3 results/h200/issue65/locks.py watch "$OUT/locks-run-67.tsv" 20 &
watcher=$!
bash results/h200/issue65/class-run.sh .gpu270 16 360 run-67
kill "$watcher"
gzip "$OUT/locks-run-67.tsv"
python3 results/h200/issue65/locks.py use "$OUT/locks-run-67.tsv.gz" gpu-0.lock

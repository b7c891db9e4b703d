#!/usr/bin/env bash
# Issue 65, run 64 (one H200): a race case under compute-sanitizer that holds the GPU shared only
# around its launches (grading::gpu_lock::launches_beside, lab-mmm), with and without run 62's
# measured children started beside the cases. Bundle A (.gpu266/a): both; bundle B (.gpu266/b): the
# race case's holds alone, on 52414d8 (grader, lab-mmm). (1) lab-mmm's GPU tests of A: batch, phases,
# time limit, the race case with and without a lock; (2) the class of 300 with --jobs 16 for 150 s
# with A, then with B. (.gpu266z/c.tgz carried.)
set -u
tar xzf .gpu266z/c.tgz
c=$PWD/.gpu266
export LAB_BIN_DIR=$c/a/bin
timeout -k 10 200 "$c/tests/lab-mmm-gpu" --include-ignored --test-threads=1 --nocapture one_batch week_3_each \
  a_time_limit a_plain_check_finds >"$OUT/lab-mmm-gpu.log" 2>&1
echo "lab-mmm GPU tests rc=$?"
grep -E "^test |test result|panicked|^batch of" "$OUT/lab-mmm-gpu.log"
bash results/h200/issue65/class-run.sh .gpu266/a 16 150 run-64-a
bash results/h200/issue65/class-run.sh .gpu266/b 16 150 run-64-b

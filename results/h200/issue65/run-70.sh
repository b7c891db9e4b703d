#!/usr/bin/env bash
# Issue 65, run 70 (one H200): ncu's batch with two leaders (grading::ncu_batch::LEADERS), where
# run 69 found the bus held about 97% of the time and each batch holding it about 4 s longer than
# its lab held the turn with ncu: one batch's ncu starts and writes its report while the other's lab
# measures. (1) lab-mmm's GPU tests of the batch, the phases, the time limit (with and without a
# lock) and the race case (with and without a lock); (2) the class of 300 with --jobs 16 for 360 s,
# as runs 67 and 69. (.gpu272z/c.tgz carried: run-70/two-leaders.patch on 2de97cc.)
set -u
tar xzf .gpu272z/c.tgz
c=$PWD/.gpu272
export LAB_BIN_DIR=$c/bin
timeout -k 10 200 "$c/tests/lab-mmm-gpu" --include-ignored --test-threads=1 --nocapture one_batch week_3_each \
  a_time_limit a_plain_check_finds >"$OUT/lab-mmm-gpu.log" 2>&1
echo "lab-mmm GPU tests rc=$?"
grep -E "^test |test result|panicked|^batch of" "$OUT/lab-mmm-gpu.log"
bash results/h200/issue65/class-run.sh .gpu272 16 360 run-70

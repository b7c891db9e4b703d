#!/usr/bin/env bash
# Issue 65, run 55 (one H200): the measured child makes ncu's first launch on a kernel of ours
# (kernels/cuda/first_launch.cu, grading::measure::first_launch) before it takes the GPU, after run
# 54 showed that such a launch bears ncu's 0.6 to 1.0 s of preparation (ncu-first-launch.sh).
# (1) lab-mmm's GPU tests of week 3 that run 54 did not reach (its limit), fast ones first, for at
#     most 150 s; (2) the class of 300 with --jobs 16 for 270 s (class-run.sh), /proc/locks every
#     20 ms. The bundle: .gpu260/bin (grader and the three measured labs), .gpu260/tests/lab-mmm-gpu
#     (.gpu260z/c.tgz carried).
set -u
tar xzf .gpu260z/c.tgz
c=$PWD/.gpu260
export LAB_BIN_DIR=$c/bin
timeout -k 10 150 "$c/tests/lab-mmm-gpu" --include-ignored --test-threads=1 week_3_each week_3_csv week_3_ncu_failing \
  week_3_the_naive week_3_writes_outside week_3_hidden week_3_broken weeks_2_and_3_the_solution_passes_and_the_templates_fail \
  >"$OUT/lab-mmm-gpu.log" 2>&1
echo "lab-mmm GPU tests rc=$?"
grep -E "^test |test result|panicked" "$OUT/lab-mmm-gpu.log" | head -20
python3 results/h200/issue65/locks.py watch "$OUT/locks.tsv" 20 &
watcher=$!
bash results/h200/issue65/class-run.sh .gpu260 16 270 run-55
kill "$watcher"
gzip "$OUT/locks.tsv"
python3 results/h200/issue65/locks.py use "$OUT/locks.tsv.gz" gpu-0.lock

#!/usr/bin/env bash
# Issue 65, run 80 (one H200): CUDA contexts kept apart from ncu's batch's requests
# (gpu_lock::quiet: a case child's context made and destroyed holding it shared, a request of the
# batch holding it alone from before its context to after ncu's first launch there). (1) lab-mmm's
# GPU test that a batch's rows are those each check gets alone; (2) the class of 300 with --jobs 16
# for 330 s (what the device time left allows). Release grader, lab-mmm and its GPU tests in
# .gpu280z/c.tgz. Not kept (run 82): the change is run-80/contexts-apart.patch, on be18b20.
set -u
mkdir -p .gpu280 && tar -C .gpu280 -xzf .gpu280z/c.tgz
c=$PWD/.gpu280
export LAB_BIN_DIR=$c/bin
timeout -k 10 80 "$c/tests/lab-mmm-gpu" --include-ignored --test-threads=1 --nocapture one_batch >"$OUT/lab-mmm-gpu.log" 2>&1
echo "lab-mmm GPU tests rc=$?"
grep -E "^test |test result|panicked|^batch of" "$OUT/lab-mmm-gpu.log"
bash results/h200/issue65/class-run.sh .gpu280 16 330 run-80

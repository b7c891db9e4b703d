#!/usr/bin/env bash
# Issue 65, run 75 (one H200): a check's children give their context 256 MiB of printf FIFO only
# where the student's PTX names vprintf (`may_print`: run-75/printf-room-where-printed.patch, not
# kept), after run 74 timed what that room costs a context's life and the others beside it.
# (1) lab-mmm's GPU test that a batch's rows are those each check gets alone; (2) the class of 300
# with --jobs 16 for 300 s (what the device time left allows). (.gpu275z/c.tgz carried.)
set -u
tar xzf .gpu275z/c.tgz
c=$PWD/.gpu275
export LAB_BIN_DIR=$c/bin
timeout -k 10 80 "$c/tests/lab-mmm-gpu" --include-ignored --test-threads=1 --nocapture one_batch >"$OUT/lab-mmm-gpu.log" 2>&1
echo "lab-mmm GPU tests rc=$?"
grep -E "^test |test result|panicked|^batch of" "$OUT/lab-mmm-gpu.log"
bash results/h200/issue65/class-run.sh .gpu275 16 300 run-75

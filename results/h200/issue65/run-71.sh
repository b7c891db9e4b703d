#!/usr/bin/env bash
# Issue 65, run 71 (one H200): ncu's batch with one CUDA context for all its requests (the batch
# keeps a reference to the primary context, so each request's own finds it made; split() no longer
# asks for a context per request: run-71/one-context.patch, on 2de97cc), where runs 67, 69 and 70
# all graded 23.2 a minute past the first minute while ncu's turn was held about 90% of the time and
# a request spent 0.33 to 0.39 s on its context and 0.47 to 0.89 s on ncu's first launch in it.
# (1) lab-mmm's GPU test that a batch's rows are those each check gets alone; (2) the class of 300
# with --jobs 16 for 360 s. (.gpu273z/c.tgz carried.)
set -u
tar xzf .gpu273z/c.tgz
c=$PWD/.gpu273
export LAB_BIN_DIR=$c/bin
timeout -k 10 100 "$c/tests/lab-mmm-gpu" --include-ignored --test-threads=1 --nocapture one_batch >"$OUT/lab-mmm-gpu.log" 2>&1
echo "lab-mmm GPU tests rc=$?"
grep -E "^test |test result|panicked|^batch of" "$OUT/lab-mmm-gpu.log"
bash results/h200/issue65/class-run.sh .gpu273 16 360 run-71

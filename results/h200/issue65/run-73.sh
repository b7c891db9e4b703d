#!/usr/bin/env bash
# Issue 65, run 73 (one H200): after run 72 found what slows a request of ncu's batch (0.32 s on a
# quiet GPU; 1.56 s beside other processes' kernels, 2.68 s beside processes making and destroying
# contexts): each request of the batch holds the GPU alone from before its context to after it (as
# run 69), and each case child makes and destroys its context holding the GPU shared, never beside a
# timed loop or a request (`ContextBeside`: run-73/context-beside.patch, not kept). (1) lab-mmm's GPU
# tests of the batch, a plain check's finding and the time limit; (2) the class of 300 with --jobs 16
# for 360 s. (.gpu274z/c.tgz carried.)
set -u
tar xzf .gpu274z/c.tgz
c=$PWD/.gpu274
export LAB_BIN_DIR=$c/bin
timeout -k 10 130 "$c/tests/lab-mmm-gpu" --include-ignored --test-threads=1 --nocapture one_batch a_time_limit \
  a_plain_check_finds >"$OUT/lab-mmm-gpu.log" 2>&1
echo "lab-mmm GPU tests rc=$?"
grep -E "^test |test result|panicked|^batch of" "$OUT/lab-mmm-gpu.log"
bash results/h200/issue65/class-run.sh .gpu274 16 360 run-73

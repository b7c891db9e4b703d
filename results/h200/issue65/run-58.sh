#!/usr/bin/env bash
# Issue 65, run 58 (one H200): lab-mmm's GPU tests that run 57 cut or did not reach: the time limit
# (failed in run 57, where the run's limit cut its message), our solution under compute-sanitizer,
# the corners of the legal cases. The bundle of fa63ec6 (.gpu262z/c.tgz carried, as run 57). A first
# call with everything of run 59 too was taken back by the machine before it ended.
set -u
tar xzf .gpu262z/c.tgz
c=$PWD/.gpu262
export LAB_BIN_DIR=$c/bin
timeout -k 10 120 "$c/tests/lab-mmm-gpu" --include-ignored --test-threads=1 a_time_limit >"$OUT/lab-mmm-gpu-1.log" 2>&1
echo "lab-mmm GPU tests (1) rc=$?"
grep -E "^test |test result|panicked" "$OUT/lab-mmm-gpu-1.log"
timeout -k 10 250 "$c/tests/lab-mmm-gpu" --include-ignored --test-threads=1 passes_under_compute_sanitizer \
  corners_of_the_legal >"$OUT/lab-mmm-gpu-2.log" 2>&1
echo "lab-mmm GPU tests (2) rc=$?"
grep -E "^test |test result|panicked" "$OUT/lab-mmm-gpu-2.log"

#!/usr/bin/env bash
# Issue 65, run 57 (one H200): (1) ncu-batch.sh: one ncu process measuring many week-3 submissions,
# each in a context of its own, against one process each (the design of a batched measurement);
# (2) lab-mmm's GPU tests that did not run to the end in run 56: under compute-sanitizer, the legal
# cases, the time limit, and the measured phases with `ncu's turn`. The bundle of fa63ec6:
# .gpu262/bin and .gpu262/tests/lab-mmm-gpu (.gpu262z/c.tgz carried).
set -u
tar xzf .gpu262z/c.tgz
c=$PWD/.gpu262
export LAB_BIN_DIR=$c/bin
timeout 200 bash results/h200/issue65/ncu-batch.sh "$OUT/ncu-batch" >"$OUT/ncu-batch.log" 2>&1
echo "ncu-batch rc=$?"
cat "$OUT/ncu-batch.log"
tar -C "$OUT" -czf "$OUT/ncu-batch.tgz" ncu-batch && rm -rf "$OUT/ncu-batch"
timeout -k 10 330 "$c/tests/lab-mmm-gpu" --include-ignored --test-threads=1 week_3_each under_sanitize \
  passes_under_compute_sanitizer random_legal_cases corners_of_the_legal a_time_limit >"$OUT/lab-mmm-gpu.log" 2>&1
echo "lab-mmm GPU tests rc=$?"
grep -E "^test |test result|panicked" "$OUT/lab-mmm-gpu.log"

#!/usr/bin/env bash
# Issue 65, run 62 (one H200): a check's measured child started with its cases where checks share the
# GPU, on a clock of its own (grading::measure::Measured, gpu_lock::apart), not after them. (1)
# lab-mmm's GPU tests: five week-3 checks measured together against each alone, the measured phases
# ("ncu beside the cases" with a lock), the time limit with and without a lock (the same measured
# rows); (2) weeks 4 and 7 with --jobs 4 against run 27's --jobs 1, their outputs in one archive.
# The bundle: .gpu265/bin and .gpu265/tests/lab-mmm-gpu (.gpu265z/c.tgz carried).
set -u
tar xzf .gpu265z/c.tgz
c=$PWD/.gpu265
export LAB_BIN_DIR=$c/bin
timeout -k 10 200 "$c/tests/lab-mmm-gpu" --include-ignored --test-threads=1 --nocapture one_batch week_3_each \
  a_time_limit >"$OUT/lab-mmm-gpu.log" 2>&1
echo "lab-mmm GPU tests rc=$?"
grep -E "^test |test result|panicked|^batch of" "$OUT/lab-mmm-gpu.log"
weeks=$(mktemp -d)
bash results/h200/issue65/weeks-run.sh 4 "$weeks"
grep -h "^batch of" "$weeks"/*-phases.txt | cut -c1-60 | sort | uniq -c
grep -c "ncu beside the cases" "$weeks"/*-phases.txt
tar -C "$weeks" -czf "$OUT/weeks.tgz" .

#!/usr/bin/env bash
# Issue 65, run 60 (one H200): the measured children of checks that share the GPU measured by one
# ncu process in turn (grading::ncu_batch). (1) lab-mmm's GPU tests: five week-3 checks measured
# together against each alone, the measured phases (a batch of one with a lock), the time limit
# (its limit now 5 s); (2) weeks 4 and 7 with --jobs 4 against run 27's --jobs 1 (weeks-run.sh);
# (3) the class of 300 with --jobs 16 for 150 s. The bundle: .gpu263/bin and
# .gpu263/tests/lab-mmm-gpu (.gpu263z/c.tgz carried).
set -u
tar xzf .gpu263z/c.tgz
c=$PWD/.gpu263
export LAB_BIN_DIR=$c/bin
timeout -k 10 120 "$c/tests/lab-mmm-gpu" --include-ignored --test-threads=1 --nocapture one_batch week_3_each \
  a_time_limit >"$OUT/lab-mmm-gpu.log" 2>&1
echo "lab-mmm GPU tests rc=$?"
grep -E "^test |test result|panicked|^batch of" "$OUT/lab-mmm-gpu.log"
bash results/h200/issue65/weeks-run.sh 4 "$OUT/weeks"
grep -h "^batch of" "$OUT"/weeks/*-phases.txt | cut -c1-60 | sort | uniq -c
bash results/h200/issue65/class-run.sh .gpu263 16 150 run-60

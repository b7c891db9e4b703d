#!/usr/bin/env bash
# Issue 65, run 61 (one H200): run 60 again on HEAD 52414d8, which no GPU had run: the fixes of
# eadf31e (the batch holds ncu's turn, PLACE blocks in each first launch, a request's own time
# against --time-limit) and e177d3a ("ncu's batch" in a check's phases). (1) lab-mmm's GPU tests:
# five week-3 checks measured together against each alone, the measured phases, the time limit; (2)
# weeks 4 and 7 with --jobs 4 against run 27's --jobs 1; (3) the class of 300 with --jobs 16 for 150 s.
# The bundle: .gpu264/bin and .gpu264/tests/lab-mmm-gpu (.gpu264z/c.tgz carried).
set -u
tar xzf .gpu264z/c.tgz
c=$PWD/.gpu264
export LAB_BIN_DIR=$c/bin
timeout -k 10 120 "$c/tests/lab-mmm-gpu" --include-ignored --test-threads=1 --nocapture one_batch week_3_each \
  a_time_limit >"$OUT/lab-mmm-gpu.log" 2>&1
echo "lab-mmm GPU tests rc=$?"
grep -E "^test |test result|panicked|^batch of" "$OUT/lab-mmm-gpu.log"
bash results/h200/issue65/weeks-run.sh 4 "$OUT/weeks"
grep -h "^batch of" "$OUT"/weeks/*-phases.txt | cut -c1-60 | sort | uniq -c
grep -c "ncu's batch" "$OUT"/weeks/*-phases.txt
bash results/h200/issue65/class-run.sh .gpu264 16 150 run-61

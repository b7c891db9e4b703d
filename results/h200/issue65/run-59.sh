#!/usr/bin/env bash
# Issue 65, run 59 (one H200): (1) lab-mmm's random legal cases, 3 a kernel (LAB_LEGAL_CASES=3),
# which run 57 cut; (2) ncu-batch.sh again, its `all` batch without the kernels that print (run
# 57's ran past the script's limit in printf-every-thread) and with the faulting ones first. The
# bundle of fa63ec6 (.gpu262z/c.tgz carried, as run 57).
set -u
tar xzf .gpu262z/c.tgz
c=$PWD/.gpu262
export LAB_BIN_DIR=$c/bin
LAB_LEGAL_CASES=3 timeout -k 10 220 "$c/tests/lab-mmm-gpu" --include-ignored --test-threads=1 random_legal_cases \
  >"$OUT/lab-mmm-gpu-3.log" 2>&1
echo "lab-mmm GPU tests (3) rc=$?"
grep -E "^test |test result|panicked" "$OUT/lab-mmm-gpu-3.log"
timeout 150 bash results/h200/issue65/ncu-batch.sh "$OUT/ncu-batch" >"$OUT/ncu-batch.log" 2>&1
echo "ncu-batch rc=$?"
cat "$OUT/ncu-batch.log"
tar -C "$OUT" -czf "$OUT/ncu-batch.tgz" ncu-batch && rm -rf "$OUT/ncu-batch"

#!/usr/bin/env bash
# Issue 65, run 54 (one H200), the code of 422ac26 (a case's untimed launches hold the GPU shared):
# (1) where ncu's first measured launch in a process spends its time (ncu-first-launch.sh);
# (2) lab-mmm's GPU tests, all of them (the new week_3_each_measured_child_appends_its_own_phases
#     among them), for at most 270 s;
# (3) the class of 300 with --jobs 16 for 150 s (class-run.sh), /proc/locks every 20 ms.
# The bundle: .gpu259/bin (grader, lab-mmm) and .gpu259/tests/lab-mmm-gpu (.gpu259z/c.tgz carried).
set -u
tar xzf .gpu259z/c.tgz
c=$PWD/.gpu259
bash results/h200/issue65/ncu-first-launch.sh "$OUT/ncu-first-launch" >"$OUT/ncu-first-launch.txt" 2>&1
cat "$OUT/ncu-first-launch.txt"
export LAB_BIN_DIR=$c/bin
timeout -k 10 270 "$c/tests/lab-mmm-gpu" --include-ignored --test-threads=1 >"$OUT/lab-mmm-gpu.log" 2>&1
echo "lab-mmm GPU tests rc=$?"
grep -E "test result|FAILED|panicked" "$OUT/lab-mmm-gpu.log" | head -20
grep -c "^test .* ok$" "$OUT/lab-mmm-gpu.log"
python3 results/h200/issue65/locks.py watch "$OUT/locks.tsv" 20 &
watcher=$!
bash results/h200/issue65/class-run.sh .gpu259 16 150 run-54
kill "$watcher"
gzip "$OUT/locks.tsv"

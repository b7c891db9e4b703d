#!/usr/bin/env bash
# Issue 65, run 66 (one H200): the measured child started once the cases end and run beside the
# race case, each on a clock of its own (grading::gpu_lock::apart, measure::Measuring::run_beside),
# where run 65 found the GPU's lock free 40.7% of the time while checks waited for ncu's batch.
# (1) lab-mmm's GPU tests of bundle B: batch, phases ("ncu beside the races"), the time limit with
# and without a lock, the race case with and without a lock; (2) the class of 300 with --jobs 16 for
# 150 s with bundle A (.gpu269/a: d57a80f, run 65's A) and with bundle B (.gpu269/b: beside,
# run-66/beside-races.patch on d57a80f, not kept: no faster);
# /proc/locks every 20 ms beside each. (.gpu269z/c.tgz carried.)
set -u
tar xzf .gpu269z/c.tgz
c=$PWD/.gpu269
export LAB_BIN_DIR=$c/b/bin
timeout -k 10 200 "$c/tests/lab-mmm-gpu" --include-ignored --test-threads=1 --nocapture one_batch week_3_each \
  a_time_limit a_plain_check_finds >"$OUT/lab-mmm-gpu.log" 2>&1
echo "lab-mmm GPU tests rc=$?"
grep -E "^test |test result|panicked|^batch of" "$OUT/lab-mmm-gpu.log"
class() {
    python3 results/h200/issue65/locks.py watch "$OUT/locks-$4.tsv" 20 &
    local watcher=$!
    bash results/h200/issue65/class-run.sh "$@"
    kill "$watcher"
    gzip "$OUT/locks-$4.tsv"
    python3 results/h200/issue65/locks.py use "$OUT/locks-$4.tsv.gz" gpu-0.lock
}
class .gpu269/a 16 150 run-66-a
class .gpu269/b 16 150 run-66-b

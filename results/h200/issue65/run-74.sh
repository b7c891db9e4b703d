#!/usr/bin/env bash
# Issue 65, run 74 (one H200): is it the 256 MiB of printf FIFO a check's children set that makes
# their contexts so costly to the others? Run 72 found a request of ncu's batch 0.32 s alone and
# 2.68 s beside 8 processes making and destroying contexts; run 73, with each case child's context
# made and destroyed holding the GPU shared, found the lock shared 53% of the time. (1) One process
# of churn.cu for 15 s in each of its context modes, alone: a context's life without a launch, with
# an empty kernel launched, and with 256 MiB of FIFO set before it; (2) ncu-batch.cu's batch (run
# 72's) alone and beside 8 processes of `launched` and of `roomy`.
# (The steps it shares with run 72 were written out here as it ran; now in batch-beside.sh.)
set -u
dir=$OUT/run-74
source results/h200/issue65/batch-beside.sh
build || exit 1
for mode in contexts launched roomy; do "$dir/churn" "$mode" 15 | sed 's/^/alone, one process: /' >>"$dir/time.txt"; done
measure alone
beside launched 8 "$dir/churn" launched 40
beside roomy 8 "$dir/churn" roomy 40
cat "$dir/nvcc.log" "$dir/time.txt"
tar -C "$dir" -czf "$OUT/run-74.tgz" time.txt nvcc.log alone.log launched.log roomy.log
medians alone launched roomy
rm -rf "$dir"

#!/usr/bin/env bash
# Issue 65, run 91 (one H200): do CUDA contexts cost the others less with one hardware queue each
# (CUDA_DEVICE_MAX_CONNECTIONS=1, the driver's default 8)? Run 72 found a request of ncu's batch
# 0.32 s alone and 2.68 s beside 8 processes making and destroying contexts. Here, with
# batch-beside.sh (run 72's steps): one churn.cu process's contexts for 15 s alone, then ncu-batch.cu's
# batch alone and beside 8 processes of `contexts` and of `launched`, first with the variable unset,
# then with it set to 1 for every process (the batch and the load). Into $OUT/run-91.tgz.
set -u
dir=$OUT/run-91
source results/h200/issue65/batch-beside.sh
build || exit 1
for connections in default 1; do
  if [[ $connections == 1 ]]; then export CUDA_DEVICE_MAX_CONNECTIONS=1; else unset CUDA_DEVICE_MAX_CONNECTIONS; fi
  for mode in contexts launched; do
    "$dir/churn" "$mode" 15 | sed "s/^/connections $connections, alone, one process: $mode: /" >>"$dir/time.txt"
  done
  measure "alone-$connections"
  beside "contexts-$connections" 8 "$dir/churn" contexts 40
  beside "launched-$connections" 8 "$dir/churn" launched 40
done
cat "$dir/nvcc.log" "$dir/time.txt"
medians alone-default contexts-default launched-default alone-1 contexts-1 launched-1 | tee "$dir/medians.txt"
# As it ran, tar took these globs in the repository, not in $dir: only the first three files came
# back (run-91/). Fixed since.
(cd "$dir" && tar -czf "$OUT/run-91.tgz" time.txt nvcc.log medians.txt alone-*.log contexts-*.log launched-*.log)
rm -rf "$dir"

#!/usr/bin/env bash
# Issue 65, run 105 (one H200): the machine code of step 16's GEMM and of cuBLAS's at 4096, each
# instruction with ncu's source counters (executions, warp stall samples), from one launch of each
# in run-100/bf16-bench.cu (--ncu-once): where does cuBLAS's kernel spend fewer cycles, and how does
# it store C? Into $OUT/issue65-run-105.tgz.
set -u
logs=$(mktemp -d)
trap 'tar -C "$logs" -czf "$OUT/issue65-run-105.tgz" .' EXIT
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version,power.limit --format=csv,noheader; date -u; } >"$logs/gpu.txt"
bench=$(mktemp -d)/bench
/usr/local/cuda/bin/nvcc -std=c++17 -O3 -arch=sm_90a -I kernels/cuda results/h200/issue65/run-100/bf16-bench.cu \
  -lcublas -lcuda -lnvidia-ml -o "$bench" >"$logs/build.log" 2>&1
echo "build rc=$?" >>"$logs/rc.txt"
for kernel in wgmma_tma_bf16_stored nvjet; do
  timeout 200 /usr/local/cuda/bin/ncu --clock-control none --section SourceCounters --section WarpStateStats \
    --page source --print-source sass --csv -k "regex:$kernel" -c 1 \
    "$bench" 4096x4096x4096 --ncu-once >"$logs/sass-$kernel.csv" 2>"$logs/sass-$kernel.err"
  echo "$kernel rc=$?" >>"$logs/rc.txt"
  timeout 200 /usr/local/cuda/bin/ncu --clock-control none --section WarpStateStats --section InstructionStats \
    --print-details all -k "regex:$kernel" -c 1 "$bench" 4096x4096x4096 --ncu-once >"$logs/stalls-$kernel.log" 2>&1
  echo "$kernel stalls rc=$?" >>"$logs/rc.txt"
done
cat "$logs/rc.txt" "$logs/build.log"
wc -l "$logs"/*.csv
head -c 600 "$logs/sass-nvjet.csv"; echo
tail -c 300 "$logs/sass-nvjet.err"

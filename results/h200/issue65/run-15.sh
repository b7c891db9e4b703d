#!/usr/bin/env bash
# Issue 65, run 15 (one H200): item 1's first measurement. run-15/bf16-bench.cu times step 13's GEMM
# (wgmma_tma_bf16) and its two-block-cluster form (wgmma_tma_bf16_pair, TMA multicast of B^T) on bf16
# operands converted once, against cuBLAS's bf16 GEMM on the same numbers, interleaved (median of
# 20); awkward sizes for correctness; ncu's Speed of Light for one launch of each at 4096. Into
# $OUT/issue65-run-15.tgz.
set -u
logs=$(mktemp -d)
trap 'tar -C "$logs" -czf "$OUT/issue65-run-15.tgz" .' EXIT
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv; date -u; } >"$logs/gpu.txt"
cuda=/usr/local/cuda/bin
bench=$(mktemp -d)/bench
"$cuda/nvcc" -std=c++17 -O3 -arch=sm_90a -DHAVE_PAIR -I kernels/cuda results/h200/issue65/run-15/bf16-bench.cu \
  -lcublas -lcuda -o "$bench" >"$logs/build.log" 2>&1 || { cat "$logs/build.log"; exit 1; }
timeout 90 "$bench" 129x64x257 200x100x50 1000x999x1001 2176x1000x4352 >"$logs/odd-sizes.log" 2>&1
echo "odd sizes rc=$?" >>"$logs/rc.txt"
timeout 180 "$bench" 4096x4096x4096 8192x8192x8192 4000x4000x4000 >"$logs/bench.log" 2>&1
echo "bench rc=$?" >>"$logs/rc.txt"
timeout 100 "$cuda/compute-sanitizer" --tool memcheck "$bench" 200x100x50 1000x999x1001 --ncu-once \
  >"$logs/memcheck.log" 2>&1
echo "memcheck rc=$?" >>"$logs/rc.txt"
timeout 100 "$cuda/ncu" --clock-control none --section SpeedOfLight \
  --metrics sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,lts__t_sector_hit_rate.pct,dram__bytes_read.sum,lts__t_bytes.sum \
  "$bench" 4096x4096x4096 --ncu-once >"$logs/ncu-4096.log" 2>&1
echo "ncu rc=$?" >>"$logs/rc.txt"
cat "$logs/rc.txt"; grep -A12 "== m" "$logs/bench.log" | head -60

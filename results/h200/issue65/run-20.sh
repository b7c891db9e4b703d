#!/usr/bin/env bash
# Issue 65, run 20 (one H200): a trial for item 1's last 4% at 4096, not in the ladder:
# run-20/bf16-bench.cu adds bf16_tma_store, step 14's GEMM storing C through shared memory and TMA
# bulk stores, to run 16's variants: awkward sizes for correctness, 4096, 8192 and 4000 interleaved
# against cuBLAS, memcheck, ncu's Speed of Light at 4096. Into $OUT/issue65-run-20.tgz.
set -u
logs=$(mktemp -d)
trap 'tar -C "$logs" -czf "$OUT/issue65-run-20.tgz" .' EXIT
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv; date -u; } >"$logs/gpu.txt"
cuda=/usr/local/cuda/bin
bench=$(mktemp -d)/bench
"$cuda/nvcc" -std=c++17 -O3 -arch=sm_90a -DHAVE_PAIR -I kernels/cuda results/h200/issue65/run-20/bf16-bench.cu \
  -lcublas -lcuda -o "$bench" >"$logs/build.log" 2>&1 || { cat "$logs/build.log"; exit 1; }
timeout 90 "$bench" 129x64x260 300x100x516 1000x999x1000 2176x1000x4352 >"$logs/odd-sizes.log" 2>&1
echo "odd sizes rc=$?" >>"$logs/rc.txt"
timeout 180 "$bench" 4096x4096x4096 8192x8192x8192 4000x4000x4000 >"$logs/bench.log" 2>&1
echo "bench rc=$?" >>"$logs/rc.txt"
timeout 100 "$cuda/compute-sanitizer" --tool memcheck "$bench" 300x100x516 1000x999x1000 --ncu-once \
  >"$logs/memcheck.log" 2>&1
echo "memcheck rc=$?" >>"$logs/rc.txt"
timeout 100 "$cuda/ncu" --clock-control none --section SpeedOfLight \
  --metrics sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,lts__t_sector_hit_rate.pct,dram__bytes_read.sum,lts__t_bytes.sum \
  "$bench" 4096x4096x4096 --ncu-once >"$logs/ncu-4096.log" 2>&1
echo "ncu rc=$?" >>"$logs/rc.txt"
cat "$logs/rc.txt"; grep -A12 "== m" "$logs/bench.log" | head -60

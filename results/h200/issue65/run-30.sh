#!/usr/bin/env bash
# Issue 65, run 30 (one H200): a first trial of step 17 (wgmma_tma_tf32_wide in mmm_wgmma.cu), TF32
# with no transpose of B, by run-30/tf32-bench.cu: awkward sizes for correctness (every C against
# cuBLAS's), 4096, 8192 and 4000 interleaved against step 12 and cuBLAS, memcheck, ncu's Speed of
# Light at 4096. Into $OUT/issue65-run-30.tgz.
# run-30/tf32-bench.cu is kept as run-30/tf32-bench.cu.diff, from run 36's copy: make it with
#   patch -o results/h200/issue65/run-30/tf32-bench.cu results/h200/issue65/run-36/tf32-bench.cu results/h200/issue65/run-30/tf32-bench.cu.diff
# It built against the mmm_wgmma.cu of its run, not this commit's (lab-mmm's README, step 17).
set -u
logs=$(mktemp -d)
trap 'tar -C "$logs" -czf "$OUT/issue65-run-30.tgz" .' EXIT
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv; date -u; } >"$logs/gpu.txt"
cuda=/usr/local/cuda/bin
bench=$(mktemp -d)/bench
"$cuda/nvcc" -std=c++17 -O3 -arch=sm_90a -Xptxas -v -I kernels/cuda results/h200/issue65/run-30/tf32-bench.cu \
  -lcublas -lcuda -o "$bench" >"$logs/build.log" 2>&1 || { cat "$logs/build.log"; exit 1; }
timeout 90 "$bench" 1x5x3 129x64x260 257x33x130 300x100x516 1000x999x1000 2176x1000x4352 >"$logs/odd-sizes.log" 2>&1
echo "odd sizes rc=$?" >>"$logs/rc.txt"
timeout 150 "$bench" 4096x4096x4096 8192x8192x8192 4000x4000x4000 >"$logs/bench.log" 2>&1
echo "bench rc=$?" >>"$logs/rc.txt"
timeout 100 "$cuda/compute-sanitizer" --tool memcheck "$bench" 257x33x130 1000x999x1000 --ncu-once \
  >"$logs/memcheck.log" 2>&1
echo "memcheck rc=$?" >>"$logs/rc.txt"
timeout 100 "$cuda/ncu" --clock-control none --section SpeedOfLight \
  --metrics sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active \
  "$bench" 4096x4096x4096 --ncu-once >"$logs/ncu-4096.log" 2>&1
echo "ncu rc=$?" >>"$logs/rc.txt"
cat "$logs/rc.txt"; grep -E "^(==|variant|step|cuBLAS)" "$logs/odd-sizes.log" "$logs/bench.log" | cut -c1-170
grep -E "ERROR SUMMARY" "$logs/memcheck.log"

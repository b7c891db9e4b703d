#!/usr/bin/env bash
# Issue 65, run 34 (one H200): run 30 again, run-34/tf32-bench.cu adding two trials of step 17 (two
# k steps a wgmma group; the epilogue skipped), ncu at 4096. Into $OUT/issue65-run-34.tgz.
# run-34/tf32-bench.cu is kept as run-34/tf32-bench.cu.diff, from run 36's copy: make it with
#   patch -o results/h200/issue65/run-34/tf32-bench.cu results/h200/issue65/run-36/tf32-bench.cu results/h200/issue65/run-34/tf32-bench.cu.diff
# It built against the mmm_wgmma.cu of its run, not this commit's (lab-mmm's README, step 17).
set -u
logs=$(mktemp -d)
trap 'tar -C "$logs" -czf "$OUT/issue65-run-34.tgz" .' EXIT
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv; date -u; } >"$logs/gpu.txt"
cuda=/usr/local/cuda/bin
bench=$(mktemp -d)/bench
"$cuda/nvcc" -std=c++17 -O3 -arch=sm_90a -Xptxas -v -I kernels/cuda results/h200/issue65/run-34/tf32-bench.cu \
  -lcublas -lcuda -o "$bench" >"$logs/build.log" 2>&1 || { cat "$logs/build.log"; exit 1; }
timeout 90 "$bench" 1x5x3 129x64x260 257x33x130 1000x999x1000 2176x1000x4352 >"$logs/odd-sizes.log" 2>&1
echo "odd sizes rc=$?" >>"$logs/rc.txt"
timeout 150 "$bench" 4096x4096x4096 8192x8192x8192 4000x4000x4000 >"$logs/bench.log" 2>&1
echo "bench rc=$?" >>"$logs/rc.txt"
timeout 100 "$cuda/compute-sanitizer" --tool memcheck "$bench" 257x33x130 1000x999x1000 --ncu-once \
  >"$logs/memcheck.log" 2>&1
echo "memcheck rc=$?" >>"$logs/rc.txt"
timeout 150 "$cuda/ncu" --clock-control none --section SpeedOfLight \
  --metrics lts__t_bytes.sum,lts__t_sectors_srcunit_tex_op_read.sum -k regex:"wide|sm90" \
  "$bench" 4096x4096x4096 --ncu-once >"$logs/ncu-4096.log" 2>&1
echo "ncu rc=$?" >>"$logs/rc.txt"
cat "$logs/rc.txt"; grep -c " ok" "$logs/odd-sizes.log"; grep -E "FAIL" "$logs/odd-sizes.log" | cut -c1-150
grep -E "^(==|step|cuBLAS|trial)" "$logs/bench.log" | cut -c1-150
grep -E "ERROR SUMMARY" "$logs/memcheck.log"

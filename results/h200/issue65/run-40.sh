#!/usr/bin/env bash
# Issue 65, run 40 (one H200): does the order the persistent blocks walk C's tiles in matter to bf16's
# last 1% and TF32's 8192? GROUP_M (tile rows walked together, mmm_wgmma.cu) set to 4, 8, 16 (the
# committed one) and 32 in copies of mmm_wgmma.cu, each built with run 20's bf16 bench (its TMA-store
# epilogue is step 16's GEMM) and run 36's TF32 bench (step 17), at 4096 and 8192 against cuBLAS.
# Into $OUT/issue65-run-40.tgz.
set -u
logs=$(mktemp -d)
trap 'tar -C "$logs" -czf "$OUT/issue65-run-40.tgz" .' EXIT
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; date -u; } >"$logs/gpu.txt"
cuda=/usr/local/cuda/bin
for g in 4 8 16 32; do
  src=$(mktemp -d)
  sed "s/^constexpr int GROUP_M = 16;/constexpr int GROUP_M = $g;/" kernels/cuda/mmm_wgmma.cu >"$src/mmm_wgmma.cu"
  grep -q "^constexpr int GROUP_M = $g;" "$src/mmm_wgmma.cu" || { echo "GROUP_M $g not set" >>"$logs/rc.txt"; continue; }
  cp kernels/cuda/matrix_view.cuh "$src/"
  for bench in bf16:results/h200/issue65/run-20/bf16-bench.cu tf32:results/h200/issue65/run-36/tf32-bench.cu; do
    name=${bench%%:*} file=${bench#*:}
    "$cuda/nvcc" -std=c++17 -O3 -arch=sm_90a -DHAVE_PAIR -I "$src" "$file" -lcublas -lcuda -o "$src/$name" \
      >"$logs/build-$name-$g.log" 2>&1 || { echo "build $name $g failed" >>"$logs/rc.txt"; continue; }
    timeout 120 "$src/$name" 4096x4096x4096 8192x8192x8192 >"$logs/$name-group-$g.log" 2>&1
    echo "$name GROUP_M $g rc=$?" >>"$logs/rc.txt"
  done
done
cat "$logs/rc.txt"
for g in 4 8 16 32; do
  echo "== GROUP_M $g"
  grep -hE "^(== m|TMA-store epilogue|step 17 TMA store +\| +128|cuBLAS)" "$logs"/*-group-$g.log | cut -c1-120
done

#!/usr/bin/env bash
# Issue 65, run 88 (one H200): bf16 at 4096 and 8192, each GEMM by itself launched 2000 (4096) and
# 300 (8192) times back to back, with NVML's power and SM clock meanwhile (the bench's --sustained),
# in run 85's order and reversed, twice each; then in turn launch by launch once.
# The bench is run 85's with run-88/bf16-bench.diff applied (patch). Into $OUT/issue65-run-88.tgz.
set -u
logs=$(mktemp -d)
trap 'tar -C "$logs" -czf "$OUT/issue65-run-88.tgz" .' EXIT
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version,power.limit --format=csv,noheader; date -u; } >"$logs/gpu.txt"
src=$(mktemp -d)
bench=$src/bench
patch -s -o "$src/bf16-bench.cu" results/h200/issue65/run-85/bf16-bench.cu results/h200/issue65/run-88/bf16-bench.diff \
  || { echo "patch failed" >>"$logs/rc.txt"; cat "$logs/rc.txt"; exit 1; }
/usr/local/cuda/bin/nvcc -std=c++17 -O3 -arch=sm_90a -I kernels/cuda "$src/bf16-bench.cu" \
  -lcublas -lcuda -lnvidia-ml -o "$bench" >"$logs/build.log" 2>&1
echo "build rc=$?" >>"$logs/rc.txt"
for i in 1 2; do
  for order in "" --reverse; do
    timeout 100 "$bench" 4096x4096x4096 --sustained 2000 $order >"$logs/sustained-4096$order-$i.log" 2>&1
    echo "4096 $order $i rc=$?" >>"$logs/rc.txt"
    timeout 100 "$bench" 8192x8192x8192 --sustained 300 $order >"$logs/sustained-8192$order-$i.log" 2>&1
    echo "8192 $order $i rc=$?" >>"$logs/rc.txt"
  done
done
timeout 100 "$bench" 4096x4096x4096 8192x8192x8192 >"$logs/in-turn.log" 2>&1
echo "in turn rc=$?" >>"$logs/rc.txt"
cat "$logs/rc.txt" "$logs/build.log"
for f in "$logs"/sustained-*.log "$logs/in-turn.log"; do
  echo "== ${f##*/}"; grep -hE "^(== m|step 16|pairs|one group|cuBLAS Gemm)" "$f" | cut -c1-150
done

#!/usr/bin/env bash
# Issue 65, run 110 (one H200): step 16 against three trials of a cuBLAS-like mainloop (two sets of
# accumulators a consumer, a wgmma group always in flight; the same in pairs; CUTLASS's ping-pong on
# 128 x 128 tiles), and cuBLAS, bf16, with run-110/bf16-bench.diff (applied to run 100's bench): in
# turn launch by launch at six sizes (partial tiles, one stage a tile, odd counts of tiles a block);
# as ladder rows (--ladder) three times at 4096, cuBLAS last, first, last, and once at 8192; in turn
# again. The SASS's wgmma lines per kernel beside them. Into $OUT/issue65-run-110.tgz. The trials ran
# with run-110/mmm_wgmma-sets.diff applied to the kernels (git apply
# results/h200/issue65/run-110/mmm_wgmma-sets.diff), which were then put back.
set -u
logs=$(mktemp -d)
trap 'tar -C "$logs" -czf "$OUT/issue65-run-110.tgz" .' EXIT
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version,power.limit --format=csv,noheader; date -u; } >"$logs/gpu.txt"
bench=$(mktemp -d)/bench
src=$(mktemp -d)
patch -s -o "$src/bf16-bench.cu" results/h200/issue65/run-100/bf16-bench.cu results/h200/issue65/run-110/bf16-bench.diff \
  || { echo "patch failed" >>"$logs/rc.txt"; cat "$logs/rc.txt"; exit 1; }
/usr/local/cuda/bin/nvcc -std=c++17 -O3 -arch=sm_90a -I kernels/cuda "$src/bf16-bench.cu" \
  -lcublas -lcuda -lnvidia-ml -o "$bench" >"$logs/build.log" 2>&1
echo "build rc=$?" >>"$logs/rc.txt"
/usr/local/cuda/bin/cuobjdump -sass "$bench" 2>&1 | awk '/Function :/ {f=$3} /HGMMA|WARPGROUP|DEPBAR/ {print f": "$0}' \
  | sed 's/ \+/ /g' >"$logs/sass-wgmma.txt"
run() {  # name, then the bench's arguments
  local name=$1
  shift
  timeout 120 "$bench" "$@" >"$logs/$name.log" 2>&1
  echo "$name rc=$?" >>"$logs/rc.txt"
}
run in-turn-1 4096x4096x4096 8192x8192x8192 4000x4000x4000 1000x4096x3000 4096x64x4096 640x200x1920
run ladder-1 4096x4096x4096 --ladder
run ladder-2 4096x4096x4096 --ladder --reverse
run ladder-3 4096x4096x4096 --ladder
run ladder-8192 8192x8192x8192 --ladder
run in-turn-2 4096x4096x4096
cat "$logs/rc.txt" "$logs/build.log"
for f in "$logs"/*.log; do
  [ "${f##*/}" = build.log ] && continue
  echo "== ${f##*/}"; grep -hE "^(== m|each|the GEMMs|step 1|two sets|ping-pong|cuBLAS Gemm)" "$f" | cut -c1-160
done

#!/usr/bin/env bash
# Issue 65, run 113 (one H200): step 16 against a trial of it whose producer asks for the first
# stages before the block's barrier (`early`), and cuBLAS, bf16, with run-113/bf16-bench.diff
# (applied to run 100's bench) built against the kernels with run-113/mmm_wgmma-early.diff applied
# (git apply results/h200/issue65/run-113/mmm_wgmma-early.diff), which were then put back: in turn at
# five sizes (partial tiles, one stage a tile); as ladder rows with --stamps (each block's first
# microseconds and the SM clock while it ran) three times at 4096, cuBLAS last, first, last, and
# once at 8192. Into $OUT/issue65-run-113.tgz.
set -u
logs=$(mktemp -d)
trap 'tar -C "$logs" -czf "$OUT/issue65-run-113.tgz" .' EXIT
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version,power.limit --format=csv,noheader; date -u; } >"$logs/gpu.txt"
bench=$(mktemp -d)/bench
src=$(mktemp -d)
patch -s -o "$src/bf16-bench.cu" results/h200/issue65/run-100/bf16-bench.cu results/h200/issue65/run-113/bf16-bench.diff \
  || { echo "patch failed" >>"$logs/rc.txt"; cat "$logs/rc.txt"; exit 1; }
/usr/local/cuda/bin/nvcc -std=c++17 -O3 -arch=sm_90a -I kernels/cuda "$src/bf16-bench.cu" \
  -lcublas -lcuda -lnvidia-ml -o "$bench" >"$logs/build.log" 2>&1
echo "build rc=$?" >>"$logs/rc.txt"
run() {  # name, then the bench's arguments
  local name=$1
  shift
  timeout 120 "$bench" "$@" >"$logs/$name.log" 2>&1
  echo "$name rc=$?" >>"$logs/rc.txt"
}
run in-turn 4096x4096x4096 4000x4000x4000 1000x4096x3000 4096x64x4096 640x200x1920
run stamps-4096-1 4096x4096x4096 --ladder --stamps
run stamps-4096-2 4096x4096x4096 --ladder --reverse --stamps
run stamps-4096-3 4096x4096x4096 --ladder --stamps
run stamps-8192 8192x8192x8192 --ladder --stamps
cat "$logs/rc.txt" "$logs/build.log"
for f in "$logs"/*.log; do
  [ "${f##*/}" = build.log ] && continue
  echo "== ${f##*/}"; grep -hE "^(== m|each|the GEMMs|step 1|first copies|cuBLAS Gemm|stamps of|  (set up|first copies asked|c0 first stage in|c0 end|SM clock))" "$f" | cut -c1-150
done

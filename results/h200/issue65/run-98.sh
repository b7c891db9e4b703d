#!/usr/bin/env bash
# Issue 65, run 98 (one H200): steps 16, 18 and 19 (serpentine bands of tiles) against cuBLAS, bf16,
# with run-98/bf16-bench.diff (applied to run 100's bench): in turn launch by launch at 4096, 8192
# and 4000 (partial tiles); as ladder rows (--ladder) three times, cuBLAS last, first, last; the
# same two ways with L2 emptied before every launch (--flush); back to back 2000 times. Into
# $OUT/issue65-run-98.tgz. Step 19 was a trial: run 98 ran with run-98/mmm_wgmma-serpentine.diff
# applied to the kernels (git apply results/h200/issue65/run-98/mmm_wgmma-serpentine.diff), which
# were then put back.
set -u
logs=$(mktemp -d)
trap 'tar -C "$logs" -czf "$OUT/issue65-run-98.tgz" .' EXIT
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version,power.limit --format=csv,noheader; date -u; } >"$logs/gpu.txt"
bench=$(mktemp -d)/bench
src=$(mktemp -d)
patch -s -o "$src/bf16-bench.cu" results/h200/issue65/run-100/bf16-bench.cu results/h200/issue65/run-98/bf16-bench.diff \
  || { echo "patch failed" >>"$logs/rc.txt"; cat "$logs/rc.txt"; exit 1; }
/usr/local/cuda/bin/nvcc -std=c++17 -O3 -arch=sm_90a -I kernels/cuda "$src/bf16-bench.cu" \
  -lcublas -lcuda -lnvidia-ml -o "$bench" >"$logs/build.log" 2>&1
echo "build rc=$?" >>"$logs/rc.txt"
run() {  # name, then the bench's arguments
  local name=$1
  shift
  timeout 100 "$bench" "$@" >"$logs/$name.log" 2>&1
  echo "$name rc=$?" >>"$logs/rc.txt"
}
run in-turn-1 4096x4096x4096 8192x8192x8192 4000x4000x4000
run ladder-1 4096x4096x4096 --ladder
run ladder-2 4096x4096x4096 --ladder --reverse
run ladder-3 4096x4096x4096 --ladder
run in-turn-2 4096x4096x4096
run ladder-flush 4096x4096x4096 --ladder --flush
run in-turn-flush 4096x4096x4096 --flush
run sustained-2000 4096x4096x4096 --sustained 2000
cat "$logs/rc.txt" "$logs/build.log"
for f in "$logs"/*.log; do
  [ "${f##*/}" = build.log ] && continue
  echo "== ${f##*/}"; grep -hE "^(== m|each|the GEMMs|step 1|cuBLAS Gemm)" "$f" | cut -c1-160
done

#!/usr/bin/env bash
# Issue 65, run 112 (one H200): where a block of step 16 spends its first microseconds, with
# run-112/bf16-bench.diff (applied to run 100's bench) built against the kernels with
# run-112/mmm_wgmma-prologue.diff applied (git apply results/h200/issue65/run-112/mmm_wgmma-prologue.diff),
# which were then put back: --stamps after ladder rows, twice at 4096 and once at 8192. Beside them
# the SASS of step 16's GEMM as built here (with the stamps), kept in the repository as an excerpt,
# run-112/sass-stored-prologue.txt. Into $OUT/issue65-run-112.tgz.
set -u
logs=$(mktemp -d)
trap 'tar -C "$logs" -czf "$OUT/issue65-run-112.tgz" .' EXIT
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version,power.limit --format=csv,noheader; date -u; } >"$logs/gpu.txt"
bench=$(mktemp -d)/bench
src=$(mktemp -d)
patch -s -o "$src/bf16-bench.cu" results/h200/issue65/run-100/bf16-bench.cu results/h200/issue65/run-112/bf16-bench.diff \
  || { echo "patch failed" >>"$logs/rc.txt"; cat "$logs/rc.txt"; exit 1; }
/usr/local/cuda/bin/nvcc -std=c++17 -O3 -arch=sm_90a -I kernels/cuda "$src/bf16-bench.cu" \
  -lcublas -lcuda -lnvidia-ml -o "$bench" >"$logs/build.log" 2>&1
echo "build rc=$?" >>"$logs/rc.txt"
/usr/local/cuda/bin/cuobjdump -sass -fun wgmma_tma_bf16_stored "$bench" >"$logs/sass-stored.txt" 2>&1
run() {  # name, then the bench's arguments
  local name=$1
  shift
  timeout 120 "$bench" "$@" >"$logs/$name.log" 2>&1
  echo "$name rc=$?" >>"$logs/rc.txt"
}
run stamps-4096-1 4096x4096x4096 --ladder --stamps
run stamps-4096-2 4096x4096x4096 --ladder --stamps
run stamps-8192 8192x8192x8192 --ladder --stamps
cat "$logs/rc.txt" "$logs/build.log"
for f in "$logs"/stamps-*.log; do
  echo "== ${f##*/}"; grep -hE "^(== m|each|step 1|pairs|cuBLAS Gemm|stamps of|  [a-zA-Z0-9_ .]+ \|)" "$f" | cut -c1-160
done
grep -cE "^ +/\*[0-9a-f]{4}\*/" "$logs/sass-stored.txt"
grep -nE "USETMAXREG|UTMALDG|UTMAPF|BAR.SYNC|SYNCS.EXCH|CS2R.*GLOBALTIMER|GLOBALTIMER" "$logs/sass-stored.txt" | head -40

#!/usr/bin/env bash
# Issue 65, run 102 (one H200): step 16's first microseconds, stamped finer, and a trial of it that
# prefetches its tensor maps (the --stamps of run 100's bench with run-102/bf16-bench.diff applied,
# after its ladder-row timings, at 4096 three times), then the two in turn with cuBLAS, twice. The
# stamps ran with run-102/mmm_wgmma-prefetch.diff applied to the kernels (git apply
# results/h200/issue65/run-102/mmm_wgmma-prefetch.diff), which were then put back. Into
# $OUT/issue65-run-102.tgz.
set -u
logs=$(mktemp -d)
trap 'tar -C "$logs" -czf "$OUT/issue65-run-102.tgz" .' EXIT
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version,power.limit --format=csv,noheader; date -u; } >"$logs/gpu.txt"
bench=$(mktemp -d)/bench
src=$(mktemp -d)
patch -s -o "$src/bf16-bench.cu" results/h200/issue65/run-100/bf16-bench.cu results/h200/issue65/run-102/bf16-bench.diff \
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
run stamps-4096-1 4096x4096x4096 --ladder --stamps
run stamps-4096-2 4096x4096x4096 --ladder --stamps --reverse
run stamps-4096-3 4096x4096x4096 --ladder --stamps
run in-turn-1 4096x4096x4096
run in-turn-2 4096x4096x4096
cat "$logs/rc.txt" "$logs/build.log"
for f in "$logs"/stamps-*.log "$logs"/in-turn-*.log; do
  echo "== ${f##*/}"; grep -vE "^  block|^device|^driver|^cuBLAS vs" "$f" | cut -c1-170
done

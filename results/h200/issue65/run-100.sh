#!/usr/bin/env bash
# Issue 65, run 100 (one H200): step 16, run 85's pair_stored (the shape of cuBLAS's kernel) and
# cuBLAS, bf16, with run-100/bf16-bench.cu: in turn at 4096; as ladder rows twice (cuBLAS last,
# first); back to back 5000 times at 4096 (twice, both orders) and 600 times at 8192, with the energy
# of one GEMM from NVML's counter; then ncu's full set of sections on one launch of each at 4096.
# Into $OUT/issue65-run-100.tgz.
set -u
logs=$(mktemp -d)
trap 'tar -C "$logs" -czf "$OUT/issue65-run-100.tgz" .' EXIT
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version,power.limit --format=csv,noheader; date -u; } >"$logs/gpu.txt"
bench=$(mktemp -d)/bench
/usr/local/cuda/bin/nvcc -std=c++17 -O3 -arch=sm_90a -I kernels/cuda results/h200/issue65/run-100/bf16-bench.cu \
  -lcublas -lcuda -lnvidia-ml -o "$bench" >"$logs/build.log" 2>&1
echo "build rc=$?" >>"$logs/rc.txt"
run() {  # name, then the bench's arguments
  local name=$1
  shift
  timeout 100 "$bench" "$@" >"$logs/$name.log" 2>&1
  echo "$name rc=$?" >>"$logs/rc.txt"
}
run in-turn 4096x4096x4096
run ladder-1 4096x4096x4096 --ladder
run ladder-2 4096x4096x4096 --ladder --reverse
run sustained-4096-1 4096x4096x4096 --sustained 5000
run sustained-4096-2 4096x4096x4096 --sustained 5000 --reverse
run sustained-8192 8192x8192x8192 --sustained 600
timeout 200 /usr/local/cuda/bin/ncu --clock-control none --set full -k 'regex:wgmma_tma_bf16_stored|pair_stored|nvjet' \
  "$bench" 4096x4096x4096 --ncu-once >"$logs/ncu-full-4096.log" 2>&1
echo "ncu rc=$?" >>"$logs/rc.txt"
cat "$logs/rc.txt" "$logs/build.log"
for f in "$logs"/*.log; do
  case "${f##*/}" in build.log | ncu-*) continue ;; esac
  echo "== ${f##*/}"; grep -hE "^(== m|each|the GEMMs|step 1|pairs|cuBLAS Gemm)" "$f" | cut -c1-170
done
grep -E "^  [a-z_]+.*Context|SM Frequency|^    Duration|Executed Ipc Active|Issued Warp|No Eligible|L2 Hit Rate |Mem Busy|Max Bandwidth|Registers Per|Warp Cycles Per Issued" \
  "$logs/ncu-full-4096.log" | cut -c1-120

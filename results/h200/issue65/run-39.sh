#!/usr/bin/env bash
# Issue 65, run 39 (one H200): run 38's build (.gpu248/: steps 12 and 17 loading B's fragments and
# storing C's neighbouring columns 8 bytes at a time): the whole sweep and its plot, and ncu's Speed
# of Light on one launch of step 17's GEMM and one of cuBLAS's TF32 GEMM at 4096. Into
# $OUT/issue65-run-39.tgz.
set -u
c=$PWD/.gpu248
logs=$(mktemp -d)
trap 'tar -C "$logs" -czf "$OUT/issue65-run-39.tgz" .' EXIT
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; date -u; } >"$logs/gpu.txt"
timeout 240 "$c/bin/lab-mmm" --ladder --sweep --plot "$logs/sweep.svg" >"$logs/sweep.log" 2>&1
echo "sweep rc=$?" >>"$logs/rc.txt"
for kernel in wgmma_tma_tf32_wide sm90_xmma; do
  timeout 90 /usr/local/cuda/bin/ncu --clock-control none --section SpeedOfLight -k regex:"$kernel" -c 1 \
    "$c/bin/lab-mmm" --ladder --precision tf32 >"$logs/ncu-tf32-4096-$kernel.log" 2>&1
  echo "ncu $kernel rc=$?" >>"$logs/rc.txt"
done
cat "$logs/rc.txt"; grep -E "tf32|bf16" "$logs/sweep.log" | grep "^|"
grep -hE "^  [a-z_0-9]+ \(|Duration|Compute \(SM\) Throughput" "$logs"/ncu-*.log

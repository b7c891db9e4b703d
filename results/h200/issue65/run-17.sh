#!/usr/bin/env bash
# Issue 65, run 17 (one H200): item 1 in the ladder. Steps 14 (step 13's GEMM on bf16 operands
# converted before the timed launches, as cuBLAS's bf16 row gets them; stages freed at once; every
# block as many tiles) and 15 (clusters of two, B^T multicast by TMA): the ladder's GPU tests of the
# wgmma steps, split-K and the sweep's checks; the whole ladder at 4096 (cuBLAS in the same run); bf16
# at 8192, 1024, 256 x 8192 x 256 and 1000 x 777 x 1531; the bf16 sweep and its plot; memcheck on
# steps 13 to 15 at an awkward size. Release lab-mmm and its GPU tests in .gpu236/ (from
# .gpu236z/c.tgz). Into $OUT/issue65-run-17.tgz.
set -u
c=$PWD/.gpu236
logs=$(mktemp -d)
trap 'tar -C "$logs" -czf "$OUT/issue65-run-17.tgz" .' EXIT
t() { timeout "$@"; }
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; date -u; } >"$logs/gpu.txt"
mkdir -p target/release && cp "$c/bin/lab-mmm" target/release/
t 150 "$c/tests/lab-mmm-gpu" --include-ignored --test-threads=1 hopper_steps every_step_of_the_ladder split_k cublas_in_tf32 \
  >"$logs/run-17-test-lab-mmm.log" 2>&1
echo "tests rc=$?" >>"$logs/rc.txt"
t 120 "$c/bin/lab-mmm" --ladder >"$logs/ladder-4096.log" 2>&1
echo "ladder 4096 rc=$?" >>"$logs/rc.txt"
for size in "8192 8192 8192" "1024 1024 1024" "256 8192 256" "1000 777 1531"; do
  t 60 "$c/bin/lab-mmm" --ladder --precision bf16 --size $size >"$logs/ladder-bf16-${size// /x}.log" 2>&1
  echo "bf16 $size rc=$?" >>"$logs/rc.txt"
done
t 120 "$c/bin/lab-mmm" --ladder --sweep --precision bf16 --plot "$logs/sweep-bf16.svg" >"$logs/sweep-bf16.log" 2>&1
echo "sweep rc=$?" >>"$logs/rc.txt"
t 60 /usr/local/cuda/bin/compute-sanitizer --tool memcheck "$c/bin/lab-mmm" --ladder --precision bf16 --size 300 200 500 \
  >"$logs/memcheck-bf16.log" 2>&1
echo "memcheck rc=$?" >>"$logs/rc.txt"
cat "$logs/rc.txt"; grep -E "^\| (1[2-5]\.|cuBLAS)" "$logs/ladder-4096.log" "$logs"/ladder-bf16-*.log

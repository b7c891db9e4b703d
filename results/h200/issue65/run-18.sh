#!/usr/bin/env bash
# Issue 65, run 18 (one H200): after run 17. The whole sweep with its plot (every precision's last step:
# 15 for bf16), the bf16 ladder at 4096 three times more (the spread of steps 14 and 15 against
# cuBLAS), and a CUDA_ARCH=sm_75 build on the same GPU (PTX only): its wgmma steps must say they need
# sm_90a, its other steps run. Release lab-mmm and GPU tests in .gpu237/ (bin, tests, sm75). Into
# $OUT/issue65-run-18.tgz.
set -u
c=$PWD/.gpu237
logs=$(mktemp -d)
trap 'tar -C "$logs" -czf "$OUT/issue65-run-18.tgz" .' EXIT
t() { timeout "$@"; }
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; date -u; } >"$logs/gpu.txt"
# The GPU tests that start a lab find it where cargo built it (CARGO_BIN_EXE_<lab>).
mkdir -p target/release target/arch-sm_75/release
cp "$c/bin/lab-mmm" target/release/ && cp "$c/sm75/bin/lab-mmm" target/arch-sm_75/release/
t 200 "$c/bin/lab-mmm" --ladder --sweep --plot "$logs/sweep.svg" >"$logs/sweep.log" 2>&1
echo "sweep rc=$?" >>"$logs/rc.txt"
for i in 1 2 3; do
  t 60 "$c/bin/lab-mmm" --ladder --precision bf16 >"$logs/ladder-bf16-4096-$i.log" 2>&1
  echo "bf16 4096 $i rc=$?" >>"$logs/rc.txt"
done
t 150 "$c/sm75/tests/lab-mmm-gpu" --include-ignored --test-threads=1 --nocapture hopper_steps every_step_of_the_ladder split_k \
  >"$logs/run-18-sm75-test-lab-mmm.log" 2>&1
echo "sm75 tests rc=$?" >>"$logs/rc.txt"
t 60 "$c/sm75/bin/lab-mmm" --ladder --precision bf16 --size 1000 777 1531 >"$logs/sm75-ladder-bf16.log" 2>&1
echo "sm75 bf16 ladder rc=$?" >>"$logs/rc.txt"
cat "$logs/rc.txt"; grep -E "^\| (1[3-5]\.|cuBLAS GemmEx)" "$logs"/ladder-bf16-4096-*.log; grep -E "^\|" "$logs/sweep.log"
grep -E "not run|test result" "$logs/run-18-sm75-test-lab-mmm.log" "$logs/sm75-ladder-bf16.log"

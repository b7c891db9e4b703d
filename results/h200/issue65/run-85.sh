#!/usr/bin/env bash
# Issue 65, run 85 (one H200): run 84 again, whose log did not come back (lab-mmm's GPU tests of the
# wgmma steps at awkward sizes, step 18's shapes chosen for the GPU's multiprocessors, and of every
# step); then bf16's last 1% at 4096: run-85/bf16-bench.cu (built here) times step 16's GEMM against
# two trials of it and cuBLAS, three times, and the ladder's bf16 at 4096 three times beside it.
# Release lab-mmm and its GPU tests in .gpu285z/c.tgz. Into $OUT/issue65-run-85.tgz.
set -u
c=$(mktemp -d)
tar -C "$c" -xzf .gpu285z/c.tgz
logs=$(mktemp -d)
trap 'tar -C "$logs" -czf "$OUT/issue65-run-85.tgz" .' EXIT
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; date -u; } >"$logs/gpu.txt"
timeout 200 "$c/tests/lab-mmm-gpu" --include-ignored --test-threads=1 --nocapture hopper_steps every_step_of_the_ladder \
  >"$logs/run-85-test-lab-mmm.log" 2>&1
echo "tests rc=$?" >>"$logs/rc.txt"
/usr/local/cuda/bin/nvcc -std=c++17 -O3 -arch=sm_90a -I kernels/cuda results/h200/issue65/run-85/bf16-bench.cu \
  -lcublas -lcuda -o "$c/bench" >"$logs/build.log" 2>&1
echo "build rc=$?" >>"$logs/rc.txt"
for i in 1 2 3; do
  sizes="4096x4096x4096 8192x8192x8192"
  [[ $i == 1 ]] && sizes="$sizes 4000x4000x4000"
  timeout 120 "$c/bench" $sizes >"$logs/bench-$i.log" 2>&1
  echo "bench $i rc=$?" >>"$logs/rc.txt"
  timeout 60 "$c/bin/lab-mmm" --ladder --precision bf16 >"$logs/ladder-bf16-4096-$i.log" 2>&1
  echo "ladder bf16 4096 $i rc=$?" >>"$logs/rc.txt"
done
cat "$logs/rc.txt"
grep -E "test result|^test " "$logs/run-85-test-lab-mmm.log"; grep -E "^18\. .* at" "$logs/run-85-test-lab-mmm.log" | head -4
for i in 1 2 3; do
  grep -hE "^(== m|step 16|pairs|one group|cuBLAS Gemm)" "$logs/bench-$i.log" | cut -c1-130
  grep -E "^\| (1[3-8]\.|cuBLAS)" "$logs/ladder-bf16-4096-$i.log" | cut -d'|' -f2-6
done

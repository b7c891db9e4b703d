#!/usr/bin/env bash
# Issue 65, run 37 (one H200): the committed step 17, after its tiles came to share one base with step
# 12's narrow ones and the ladder to find the wgmma steps by their GEMM (behaviour unchanged): the
# GPU tests of the wgmma steps at awkward sizes, the whole ladder at 4096, and tf32 at 4096 twice.
# Release lab-mmm and GPU tests in .gpu247/ (bin, tests). Into $OUT/issue65-run-37.tgz.
set -u
c=$PWD/.gpu247
logs=$(mktemp -d)
trap 'tar -C "$logs" -czf "$OUT/issue65-run-37.tgz" .' EXIT
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; date -u; } >"$logs/gpu.txt"
mkdir -p target/release && cp "$c/bin/lab-mmm" target/release/
timeout 200 "$c/tests/lab-mmm-gpu" --include-ignored --test-threads=1 --nocapture hopper_steps every_step_of_the_ladder \
  split_k cublas_in_tf32 >"$logs/run-37-test-lab-mmm.log" 2>&1
echo "tests rc=$?" >>"$logs/rc.txt"
timeout 120 "$c/bin/lab-mmm" --ladder >"$logs/ladder-4096.log" 2>&1
echo "ladder 4096 rc=$?" >>"$logs/rc.txt"
for i in 1 2; do
  timeout 60 "$c/bin/lab-mmm" --ladder --precision tf32 >"$logs/ladder-tf32-4096-$i.log" 2>&1
  echo "tf32 4096 $i rc=$?" >>"$logs/rc.txt"
done
cat "$logs/rc.txt"; grep -hE "^\| (12\.|16\.|17\.|cuBLAS (SGEMM, TF32|GemmEx))" "$logs"/ladder-*.log
grep -E "test result|^test " "$logs/run-37-test-lab-mmm.log" | head

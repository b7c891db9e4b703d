#!/usr/bin/env bash
# Issue 65, run 21 (one H200): step 16 in the ladder (step 14 storing C through shared memory by TMA,
# run 20's trial): the GPU tests of the wgmma steps at awkward sizes (C stored by TMA where n % 4 ==
# 0, into split-K's slabs too, from registers elsewhere), split-K and the sweep's checks; the whole
# ladder at 4096, bf16 at 4096 three more times and at 8192, 1024, 256 x 8192 x 256 and 1000 x 777 x
# 1531; the whole sweep and its plot; memcheck of the bf16 steps where TMA stores and where it does
# not; ncu on one launch of step 16 at 4096; a CUDA_ARCH=sm_75 build's wgmma steps on the same GPU.
# Release lab-mmm and GPU tests in .gpu239/ (bin, tests, sm75). Into $OUT/issue65-run-21.tgz.
set -u
c=$PWD/.gpu239
logs=$(mktemp -d)
trap 'tar -C "$logs" -czf "$OUT/issue65-run-21.tgz" .' EXIT
t() { timeout "$@"; }
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; date -u; } >"$logs/gpu.txt"
# The GPU tests that start a lab find it where cargo built it (CARGO_BIN_EXE_<lab>).
mkdir -p target/release target/arch-sm_75/release
cp "$c/bin/lab-mmm" target/release/ && cp "$c/sm75/bin/lab-mmm" target/arch-sm_75/release/
t 150 "$c/tests/lab-mmm-gpu" --include-ignored --test-threads=1 --nocapture hopper_steps every_step_of_the_ladder split_k \
  cublas_in_tf32 >"$logs/run-21-test-lab-mmm.log" 2>&1
echo "tests rc=$?" >>"$logs/rc.txt"
t 120 "$c/bin/lab-mmm" --ladder >"$logs/ladder-4096.log" 2>&1
echo "ladder 4096 rc=$?" >>"$logs/rc.txt"
for i in 1 2 3; do
  t 60 "$c/bin/lab-mmm" --ladder --precision bf16 >"$logs/ladder-bf16-4096-$i.log" 2>&1
  echo "bf16 4096 $i rc=$?" >>"$logs/rc.txt"
done
for size in "8192 8192 8192" "1024 1024 1024" "256 8192 256" "1000 777 1531"; do
  t 60 "$c/bin/lab-mmm" --ladder --precision bf16 --size $size >"$logs/ladder-bf16-${size// /x}.log" 2>&1
  echo "bf16 $size rc=$?" >>"$logs/rc.txt"
done
t 200 "$c/bin/lab-mmm" --ladder --sweep --plot "$logs/sweep.svg" >"$logs/sweep.log" 2>&1
echo "sweep rc=$?" >>"$logs/rc.txt"
for size in "300 200 500" "300 200 501"; do
  t 60 /usr/local/cuda/bin/compute-sanitizer --tool memcheck "$c/bin/lab-mmm" --ladder --precision bf16 --size $size \
    >"$logs/memcheck-bf16-${size// /x}.log" 2>&1
  echo "memcheck $size rc=$?" >>"$logs/rc.txt"
done
t 90 /usr/local/cuda/bin/ncu --clock-control none --section SpeedOfLight -k regex:'wgmma_tma_bf16_(once|stored)|nvjet' -c 3 \
  "$c/bin/lab-mmm" --ladder --precision bf16 >"$logs/ncu-bf16-4096.log" 2>&1
echo "ncu rc=$?" >>"$logs/rc.txt"
t 100 "$c/sm75/tests/lab-mmm-gpu" --include-ignored --test-threads=1 --nocapture hopper_steps \
  >"$logs/run-21-sm75-test-lab-mmm.log" 2>&1
echo "sm75 tests rc=$?" >>"$logs/rc.txt"
cat "$logs/rc.txt"; grep -hE "^\| (1[3-6]\.|cuBLAS GemmEx)" "$logs"/ladder-*.log; grep -E "bf16" "$logs/sweep.log" | grep "^|"
grep -E "test result|16\. C stored" "$logs"/run-21-*test-lab-mmm.log | head

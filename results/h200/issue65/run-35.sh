#!/usr/bin/env bash
# Issue 65, run 35 (one H200): step 17 in the ladder (TF32 with no transpose of B, run 34's trial of
# two k steps a wgmma group): the GPU tests of the wgmma steps at awkward sizes (step 17's 256 x 128
# tiles with A and B read in place and copied, C stored by TMA and from registers, more tiles than
# multiprocessors), split-K and the sweep's checks; the whole ladder at 4096, tf32 at 4096 three more
# times and at 8192, 1024, 256 x 8192 x 256 and 1000 x 777 x 1531; the whole sweep and its plot;
# memcheck of the tf32 steps on 256 x 128 tiles where TMA stores and where it does not; ncu on one
# launch of steps 12 and 17 and cuBLAS at 4096; a CUDA_ARCH=sm_75 build's wgmma steps on the same
# GPU. Release lab-mmm and GPU tests in .gpu246/ (bin, tests, sm75). Into $OUT/issue65-run-35.tgz.
set -u
c=$PWD/.gpu246
logs=$(mktemp -d)
trap 'tar -C "$logs" -czf "$OUT/issue65-run-35.tgz" .' EXIT
t() { timeout "$@"; }
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; date -u; } >"$logs/gpu.txt"
# The GPU tests that start a lab find it where cargo built it (CARGO_BIN_EXE_<lab>).
mkdir -p target/release target/arch-sm_75/release
cp "$c/bin/lab-mmm" target/release/ && cp "$c/sm75/bin/lab-mmm" target/arch-sm_75/release/
t 200 "$c/tests/lab-mmm-gpu" --include-ignored --test-threads=1 --nocapture hopper_steps every_step_of_the_ladder split_k \
  cublas_in_tf32 >"$logs/run-35-test-lab-mmm.log" 2>&1
echo "tests rc=$?" >>"$logs/rc.txt"
t 120 "$c/bin/lab-mmm" --ladder >"$logs/ladder-4096.log" 2>&1
echo "ladder 4096 rc=$?" >>"$logs/rc.txt"
for i in 1 2 3; do
  t 60 "$c/bin/lab-mmm" --ladder --precision tf32 >"$logs/ladder-tf32-4096-$i.log" 2>&1
  echo "tf32 4096 $i rc=$?" >>"$logs/rc.txt"
done
for size in "8192 8192 8192" "1024 1024 1024" "256 8192 256" "1000 777 1531"; do
  t 60 "$c/bin/lab-mmm" --ladder --precision tf32 --size $size >"$logs/ladder-tf32-${size// /x}.log" 2>&1
  echo "tf32 $size rc=$?" >>"$logs/rc.txt"
done
t 200 "$c/bin/lab-mmm" --ladder --sweep --plot "$logs/sweep.svg" >"$logs/sweep.log" 2>&1
echo "sweep rc=$?" >>"$logs/rc.txt"
for size in "1100 36 2000" "1100 37 1999"; do
  t 90 /usr/local/cuda/bin/compute-sanitizer --tool memcheck "$c/bin/lab-mmm" --ladder --precision tf32 --size $size \
    >"$logs/memcheck-tf32-${size// /x}.log" 2>&1
  echo "memcheck $size rc=$?" >>"$logs/rc.txt"
done
t 90 /usr/local/cuda/bin/ncu --clock-control none --section SpeedOfLight -k regex:'wgmma_tma_tf32|sm90_xmma|transpose' -c 4 \
  "$c/bin/lab-mmm" --ladder --precision tf32 >"$logs/ncu-tf32-4096.log" 2>&1
echo "ncu rc=$?" >>"$logs/rc.txt"
t 100 "$c/sm75/tests/lab-mmm-gpu" --include-ignored --test-threads=1 --nocapture hopper_steps \
  >"$logs/run-35-sm75-test-lab-mmm.log" 2>&1
echo "sm75 tests rc=$?" >>"$logs/rc.txt"
cat "$logs/rc.txt"; grep -hE "^\| (12\.|17\.|cuBLAS SGEMM, TF32)" "$logs"/ladder-*.log; grep -E "tf32" "$logs/sweep.log" | grep "^|"
grep -E "test result|17\. no transpose" "$logs"/run-35-*test-lab-mmm.log | head
grep -h "ERROR SUMMARY" "$logs"/memcheck-*.log

#!/usr/bin/env bash
# Issue 65, run 38 (one H200): steps 12 and 17 with B's fragments loaded 8 bytes at a time and C's
# neighbouring columns stored 8 bytes at a time (a new order of the tile's columns,
# fragment_column): the GPU tests of the wgmma steps at awkward sizes, the whole ladder at 4096,
# tf32 at 4096 three more times and at 8192, 1024 and 1000 x 777 x 1531, memcheck of the tf32
# steps on 256 x 128 tiles where TMA stores and where it does not. Release lab-mmm and GPU tests in
# .gpu248/ (bin, tests). Into $OUT/issue65-run-38.tgz.
set -u
c=$PWD/.gpu248
logs=$(mktemp -d)
trap 'tar -C "$logs" -czf "$OUT/issue65-run-38.tgz" .' EXIT
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; date -u; } >"$logs/gpu.txt"
mkdir -p target/release && cp "$c/bin/lab-mmm" target/release/
timeout 200 "$c/tests/lab-mmm-gpu" --include-ignored --test-threads=1 --nocapture hopper_steps every_step_of_the_ladder \
  split_k cublas_in_tf32 >"$logs/run-38-test-lab-mmm.log" 2>&1
echo "tests rc=$?" >>"$logs/rc.txt"
timeout 120 "$c/bin/lab-mmm" --ladder >"$logs/ladder-4096.log" 2>&1
echo "ladder 4096 rc=$?" >>"$logs/rc.txt"
for i in 1 2 3; do
  timeout 60 "$c/bin/lab-mmm" --ladder --precision tf32 >"$logs/ladder-tf32-4096-$i.log" 2>&1
  echo "tf32 4096 $i rc=$?" >>"$logs/rc.txt"
done
for size in "8192 8192 8192" "1024 1024 1024" "1000 777 1531"; do
  timeout 60 "$c/bin/lab-mmm" --ladder --precision tf32 --size $size >"$logs/ladder-tf32-${size// /x}.log" 2>&1
  echo "tf32 $size rc=$?" >>"$logs/rc.txt"
done
for size in "1100 36 2000" "1100 37 1999"; do
  timeout 90 /usr/local/cuda/bin/compute-sanitizer --tool memcheck "$c/bin/lab-mmm" --ladder --precision tf32 --size $size \
    >"$logs/memcheck-tf32-${size// /x}.log" 2>&1
  echo "memcheck $size rc=$?" >>"$logs/rc.txt"
done
cat "$logs/rc.txt"; grep -hE "^\| (12\.|17\.|cuBLAS SGEMM, TF32)" "$logs"/ladder-*.log
grep -E "test result|^test " "$logs/run-38-test-lab-mmm.log" | head; grep -h "ERROR SUMMARY" "$logs"/memcheck-*.log

#!/usr/bin/env bash
# Issue 65, run 78 (one H200): step 18 sharing the last round out along k only where it would leave
# the multiprocessors idle long (wgmma::MIN_IDLE_STAGES, from runs 76 and 77): the GPU tests of the
# wgmma steps at awkward sizes (two shapes share tiles out) and of every step, the whole ladder at
# 4096, bf16 at 4096 three more times and at 8192 three times, memcheck of bf16 where step 18 shares
# tiles out (stored by TMA and from registers), ncu's Speed of Light on steps 16 and 18 at 8192, the
# whole sweep and its plot. Release lab-mmm and its GPU tests in .gpu278z/c.tgz
# (bin, tests). Into $OUT/issue65-run-78.tgz.
set -u
c=$(mktemp -d)
tar -C "$c" -xzf .gpu278z/c.tgz
logs=$(mktemp -d)
trap 'tar -C "$logs" -czf "$OUT/issue65-run-78.tgz" .' EXIT
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; date -u; } >"$logs/gpu.txt"
mkdir -p target/release && cp "$c/bin/lab-mmm" target/release/
timeout 200 "$c/tests/lab-mmm-gpu" --include-ignored --test-threads=1 --nocapture hopper_steps every_step_of_the_ladder \
  >"$logs/run-78-test-lab-mmm.log" 2>&1
echo "tests rc=$?" >>"$logs/rc.txt"
timeout 120 "$c/bin/lab-mmm" --ladder >"$logs/ladder-4096.log" 2>&1
echo "ladder 4096 rc=$?" >>"$logs/rc.txt"
for i in 1 2 3; do
  timeout 60 "$c/bin/lab-mmm" --ladder --precision bf16 >"$logs/ladder-bf16-4096-$i.log" 2>&1
  echo "bf16 4096 $i rc=$?" >>"$logs/rc.txt"
done
for i in 1 2 3; do
  timeout 90 "$c/bin/lab-mmm" --ladder --precision bf16 --size 8192 >"$logs/ladder-bf16-8192-$i.log" 2>&1
  echo "bf16 8192 $i rc=$?" >>"$logs/rc.txt"
done
for size in "2300 4000 2170" "2300 4001 2171"; do
  timeout 120 /usr/local/cuda/bin/compute-sanitizer --tool memcheck "$c/bin/lab-mmm" --ladder --precision bf16 --size $size \
    >"$logs/memcheck-bf16-${size// /x}.log" 2>&1
  echo "memcheck $size rc=$?" >>"$logs/rc.txt"
done
for kernel in wgmma_tma_bf16_stored wgmma_tma_bf16_streamk; do
  timeout 120 /usr/local/cuda/bin/ncu --clock-control none --section SpeedOfLight -k "$kernel" -c 2 \
    "$c/bin/lab-mmm" --ladder --precision bf16 --size 8192 >"$logs/ncu-bf16-8192-$kernel.log" 2>&1
  echo "ncu $kernel rc=$?" >>"$logs/rc.txt"
done
timeout 240 "$c/bin/lab-mmm" --ladder --sweep --plot "$logs/sweep.svg" >"$logs/sweep.log" 2>&1
echo "sweep rc=$?" >>"$logs/rc.txt"
cat "$logs/rc.txt"; grep -hE "^\| (1[3-8]\.|cuBLAS GemmEx)" "$logs"/ladder-bf16-*.log
grep -E "test result|^test |streamk|18\. .* at" "$logs/run-78-test-lab-mmm.log" | head -20; grep -h "ERROR SUMMARY" "$logs"/memcheck-*.log
grep -hE "^  [a-z_0-9]+ \(|SM Frequency|Duration" "$logs"/ncu-*.log | head -20; grep "^|" "$logs/sweep.log" | grep bf16

#!/usr/bin/env bash
# Issue 65, run 76 (one H200): step 18, step 16 with the last, partial round of tiles shared out
# along k (stream-K): the GPU tests of the wgmma steps at awkward sizes (two shapes share tiles out)
# and of every step, the whole ladder at 4096, bf16 at 4096 four more times and at 8192 twice,
# memcheck of bf16 where step 18 shares tiles out (stored by TMA and from registers), ncu's Speed of
# Light on steps 16 and 18 and cuBLAS at 4096. Release lab-mmm and its GPU tests in .gpu276z/c.tgz
# (bin, tests). Into $OUT/issue65-run-76.tgz.
set -u
c=$(mktemp -d)
tar -C "$c" -xzf .gpu276z/c.tgz
logs=$(mktemp -d)
trap 'tar -C "$logs" -czf "$OUT/issue65-run-76.tgz" .' EXIT
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; date -u; } >"$logs/gpu.txt"
mkdir -p target/release && cp "$c/bin/lab-mmm" target/release/
timeout 200 "$c/tests/lab-mmm-gpu" --include-ignored --test-threads=1 --nocapture hopper_steps every_step_of_the_ladder \
  >"$logs/run-76-test-lab-mmm.log" 2>&1
echo "tests rc=$?" >>"$logs/rc.txt"
timeout 120 "$c/bin/lab-mmm" --ladder >"$logs/ladder-4096.log" 2>&1
echo "ladder 4096 rc=$?" >>"$logs/rc.txt"
for i in 1 2 3 4; do
  timeout 60 "$c/bin/lab-mmm" --ladder --precision bf16 >"$logs/ladder-bf16-4096-$i.log" 2>&1
  echo "bf16 4096 $i rc=$?" >>"$logs/rc.txt"
done
for i in 1 2; do
  timeout 90 "$c/bin/lab-mmm" --ladder --precision bf16 --size 8192 >"$logs/ladder-bf16-8192-$i.log" 2>&1
  echo "bf16 8192 $i rc=$?" >>"$logs/rc.txt"
done
for size in "2000 1000 2600" "1999 515 2601"; do
  timeout 120 /usr/local/cuda/bin/compute-sanitizer --tool memcheck "$c/bin/lab-mmm" --ladder --precision bf16 --size $size \
    >"$logs/memcheck-bf16-${size// /x}.log" 2>&1
  echo "memcheck $size rc=$?" >>"$logs/rc.txt"
done
timeout 120 /usr/local/cuda/bin/ncu --clock-control none --section SpeedOfLight -k regex:'wgmma_tma_bf16_(stored|streamk)|nvjet' -c 3 \
  "$c/bin/lab-mmm" --ladder --precision bf16 >"$logs/ncu-bf16-4096.log" 2>&1
echo "ncu rc=$?" >>"$logs/rc.txt"
cat "$logs/rc.txt"; grep -hE "^\| (1[3-8]\.|cuBLAS GemmEx)" "$logs"/ladder-bf16-*.log
grep -E "test result|^test |streamk|18\. .* at" "$logs/run-76-test-lab-mmm.log" | head -20; grep -h "ERROR SUMMARY" "$logs"/memcheck-*.log
grep -hE "^  [a-z_0-9]+|Duration|Compute \(SM\) Throughput" "$logs"/ncu-*.log | head -20

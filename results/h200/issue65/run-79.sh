#!/usr/bin/env bash
# Issue 65, run 79 (one H200): step 18 as committed (stream-K compiled into its kernel only; its grid
# step 16's where it shares nothing out): the GPU tests of the wgmma steps at awkward sizes and of
# every step, memcheck where it shares tiles out, and the whole ladder at 4096 and bf16 at 8192,
# each with this build and with 7435c9b's lab-mmm (before step 18) in turn, twice, to see that no
# older row is slower. Release binaries and GPU tests in .gpu279z/c.tgz. Into $OUT/issue65-run-79.tgz.
set -u
c=$(mktemp -d)
tar -C "$c" -xzf .gpu279z/c.tgz
logs=$(mktemp -d)
trap 'tar -C "$logs" -czf "$OUT/issue65-run-79.tgz" .' EXIT
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; date -u; } >"$logs/gpu.txt"
mkdir -p target/release && cp "$c/bin/lab-mmm" target/release/
timeout 200 "$c/tests/lab-mmm-gpu" --include-ignored --test-threads=1 --nocapture hopper_steps every_step_of_the_ladder \
  >"$logs/run-79-test-lab-mmm.log" 2>&1
echo "tests rc=$?" >>"$logs/rc.txt"
for size in "2300 4000 2170" "2300 4001 2171"; do
  timeout 120 /usr/local/cuda/bin/compute-sanitizer --tool memcheck "$c/bin/lab-mmm" --ladder --precision bf16 --size $size \
    >"$logs/memcheck-bf16-${size// /x}.log" 2>&1
  echo "memcheck $size rc=$?" >>"$logs/rc.txt"
done
for i in 1 2; do
  for build in lab-mmm-7435c9b lab-mmm; do
    timeout 120 "$c/bin/$build" --ladder >"$logs/ladder-4096-$build-$i.log" 2>&1
    echo "ladder 4096 $build $i rc=$?" >>"$logs/rc.txt"
    timeout 90 "$c/bin/$build" --ladder --precision bf16 --size 8192 >"$logs/ladder-bf16-8192-$build-$i.log" 2>&1
    echo "bf16 8192 $build $i rc=$?" >>"$logs/rc.txt"
  done
done
cat "$logs/rc.txt"
for f in "$logs"/ladder-*.log; do echo "== ${f##*/}"; grep -E "^\| (1[2-8]\.|[0-9]\.|10\.|11\.|cuBLAS)" "$f" | cut -d'|' -f2-6; done
grep -E "test result|^test " "$logs/run-79-test-lab-mmm.log"; grep -E "^18\. .* at 2300" "$logs/run-79-test-lab-mmm.log"; grep -h "ERROR SUMMARY" "$logs"/memcheck-*.log

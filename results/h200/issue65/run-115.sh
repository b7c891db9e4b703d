#!/usr/bin/env bash
# Issue 65, run 115 (one H200): the change as committed (run-115/mmm_wgmma-uniform.diff: run 114's
# `warp_uniform`, and step 18 running step 16's code where it shares nothing out). Release lab-mmm
# of this change and of e27cef7 (run 93's bundle, the code of HEAD before it) and the new GPU tests
# in .gpu315z/c.tgz.
#  1. The bf16 ladder at 4096, new and old in turn, three times each; at 8192 twice, new and old.
#  2. The whole ladder at 4096, new then old.
#  3. Every GPU test of lab-mmm (new build).
#  4. The sweep and its plot (new build), as sweep-run.sh runs it.
#  5. compute-sanitizer memcheck of step 18 where it shares tiles out and where it does not.
#  6. ncu: instructions, cycles and time of one launch of step 16 (new and old kernels) and cuBLAS,
#     run 100's bench built against both.
# Each step runs only while the call has time left. Into $OUT/issue65-run-115.tgz.
set -u
start=$SECONDS
c=$(mktemp -d)
tar -C "$c" -xzf .gpu315z/c.tgz
logs=$(mktemp -d)
trap 'tar -C "$logs" -czf "$OUT/issue65-run-115.tgz" .' EXIT
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version,power.limit --format=csv,noheader; date -u; } >"$logs/gpu.txt"
left() { (( SECONDS - start < $1 )); }  # true while fewer than $1 seconds have gone
run() {  # name, timeout, then the command
  local name=$1 limit=$2
  shift 2
  timeout "$limit" "$@" >"$logs/$name.log" 2>&1
  echo "$name rc=$? at $((SECONDS - start)) s" >>"$logs/rc.txt"
}
for i in 1 2 3; do
  run "ladder-bf16-4096-new-$i" 90 "$c/bin/lab-mmm" --ladder --precision bf16
  run "ladder-bf16-4096-old-$i" 90 "$c/bin/lab-mmm-e27cef7" --ladder --precision bf16
done
for i in 1 2; do
  run "ladder-bf16-8192-new-$i" 90 "$c/bin/lab-mmm" --ladder --precision bf16 --size 8192
  run "ladder-bf16-8192-old-$i" 90 "$c/bin/lab-mmm-e27cef7" --ladder --precision bf16 --size 8192
done
run ladder-4096-new 120 "$c/bin/lab-mmm" --ladder
run ladder-4096-old 120 "$c/bin/lab-mmm-e27cef7" --ladder
mkdir -p target/release && cp "$c/bin/lab-mmm" target/release/
left 200 && run test-lab-mmm 200 "$c/tests/lab-mmm-gpu" --include-ignored --test-threads=1 --nocapture
left 330 && run sweep 240 "$c/bin/lab-mmm" --ladder --sweep --plot "$logs/sweep.svg"
for size in "2300 4000 2170" "2300 4001 2171" "2300 2560 2170"; do
  left 540 && run "memcheck-bf16-${size// /x}" 40 /usr/local/cuda/bin/compute-sanitizer --tool memcheck \
    "$c/bin/lab-mmm" --ladder --precision bf16 --size $size --repetitions 1
done
if left 540; then
  src=$(mktemp -d)
  cp -r kernels/cuda "$src/old" && patch -s -R -d "$src/old" -p3 <results/h200/issue65/run-115/mmm_wgmma-uniform.diff
  for build in new old; do
    inc=kernels/cuda
    [ $build = old ] && inc="$src/old"
    /usr/local/cuda/bin/nvcc -std=c++17 -O3 -arch=sm_90a -I "$inc" results/h200/issue65/run-100/bf16-bench.cu \
      -lcublas -lcuda -lnvidia-ml -o "$src/bench-$build" >"$logs/build-$build.log" 2>&1 &
  done
  wait
  for build in new old; do
    run "ncu-$build" 40 /usr/local/cuda/bin/ncu --metrics smsp__inst_executed.sum,sm__cycles_elapsed.max,gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second \
      -k "regex:stored|nvjet" "$src/bench-$build" 4096x4096x4096 --ncu-once
  done
fi
cat "$logs/rc.txt"
for f in "$logs"/ladder-*.log; do echo "== ${f##*/}"; grep -E "^\| (1[2-8]\.|cuBLAS)" "$f" | cut -d'|' -f2-6; done
grep -hE "test result|FAILED|panicked" "$logs/test-lab-mmm.log" 2>/dev/null
grep "^|" "$logs/sweep.log" 2>/dev/null | grep -E "bf16|tf32"
grep -h "ERROR SUMMARY" "$logs"/memcheck-*.log 2>/dev/null
for f in "$logs"/ncu-*.log; do [ -e "$f" ] && { echo "== ${f##*/}"; grep -E "wgmma|nvjet|inst_executed|cycles_elapsed|duration" "$f" | cut -c1-120; }; done

#!/usr/bin/env bash
# Issue 65, run 114 (one H200): the consumers' wgmma descriptors in uniform registers
# (run-114/mmm_wgmma-uniform.diff: `warp_uniform`, lane 0's value broadcast, so that ptxas builds
# each descriptor in the warp's uniform registers instead of every thread's, with an R2UR move and
# about a dozen vector instructions for each wgmma). Release lab-mmm of this change and of e27cef7
# (run 93's bundle, the code of HEAD) and the new GPU tests in .gpu314z/c.tgz.
#  1. The bf16 ladder at 4096, new and old in turn, three times each; at 8192 once each.
#  2. The GPU tests of every step and of the wgmma steps at awkward sizes (new build).
#  3. The whole ladder at 4096 with the new build (no older row slower), then with the old.
#  4. Run 100's bench (unchanged) built twice on this machine, against the kernels with and without
#     the diff: in turn at five sizes, as ladder rows (cuBLAS last, first, last), and --sustained 2000
#     (NVML's energy a GEMM).
#  5. compute-sanitizer memcheck where step 18 shares tiles out.
# Each step runs only while the call has time left. Into $OUT/issue65-run-114.tgz.
set -u
start=$SECONDS
c=$(mktemp -d)
tar -C "$c" -xzf .gpu314z/c.tgz
logs=$(mktemp -d)
trap 'tar -C "$logs" -czf "$OUT/issue65-run-114.tgz" .' EXIT
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
run ladder-bf16-8192-new 90 "$c/bin/lab-mmm" --ladder --precision bf16 --size 8192
run ladder-bf16-8192-old 90 "$c/bin/lab-mmm-e27cef7" --ladder --precision bf16 --size 8192
mkdir -p target/release && cp "$c/bin/lab-mmm" target/release/
left 330 && run test-lab-mmm 120 "$c/tests/lab-mmm-gpu" --include-ignored --test-threads=1 --nocapture hopper_steps every_step_of_the_ladder
left 360 && run ladder-4096-new 120 "$c/bin/lab-mmm" --ladder
left 420 && run ladder-4096-old 120 "$c/bin/lab-mmm-e27cef7" --ladder
if left 470; then
  src=$(mktemp -d)
  cp -r kernels/cuda "$src/old" && patch -s -R -d "$src/old" -p3 <results/h200/issue65/run-114/mmm_wgmma-uniform.diff
  for build in new old; do
    inc=kernels/cuda
    [ $build = old ] && inc="$src/old"
    /usr/local/cuda/bin/nvcc -std=c++17 -O3 -arch=sm_90a -I "$inc" results/h200/issue65/run-100/bf16-bench.cu \
      -lcublas -lcuda -lnvidia-ml -o "$src/bench-$build" >"$logs/build-$build.log" 2>&1 &
  done
  wait
  echo "bench builds at $((SECONDS - start)) s: $(ls "$src" | tr '\n' ' ')" >>"$logs/rc.txt"
  for build in new old; do run "in-turn-$build" 60 "$src/bench-$build" 4096x4096x4096 8192x8192x8192 4000x4000x4000 1000x4096x3000 640x200x1920; done
  for i in 1 2 3; do
    rev=""; [ $i = 2 ] && rev=--reverse
    for build in new old; do run "bench-ladder-$build-$i" 40 "$src/bench-$build" 4096x4096x4096 --ladder $rev; done
  done
  left 560 && for build in new old; do run "sustained-$build" 30 "$src/bench-$build" 4096x4096x4096 --sustained 2000; done
fi
left 575 && run memcheck-bf16-2300x4000x2170 25 /usr/local/cuda/bin/compute-sanitizer --tool memcheck "$c/bin/lab-mmm" --ladder --precision bf16 --size 2300 4000 2170
cat "$logs/rc.txt"
for f in "$logs"/ladder-*.log; do echo "== ${f##*/}"; grep -E "^\| (1[2-8]\.|[0-9]\.|10\.|11\.|cuBLAS)" "$f" | cut -d'|' -f2-6; done
grep -hE "test result|^test " "$logs/test-lab-mmm.log" 2>/dev/null
for f in "$logs"/in-turn-*.log "$logs"/bench-*.log "$logs"/sustained-*.log; do
  [ -e "$f" ] || continue
  echo "== ${f##*/}"; grep -hE "^(== m|step 16|pairs|cuBLAS Gemm)" "$f" | cut -c1-150
done
grep -h "ERROR SUMMARY" "$logs"/memcheck-*.log 2>/dev/null

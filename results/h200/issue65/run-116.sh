#!/usr/bin/env bash
# Issue 65, run 116 (one H200): run 110's trials again on the uniform-register consumers of bebe9ec
# (two_sets, two_sets_pair, ping_pong; run-116/mmm_wgmma-sets.diff, applied with patch and put
# back afterwards), and step 16 with one wgmma group in flight (in_flight), against step 16 and
# cuBLAS, bf16, with run-116/bf16-bench.diff applied to run 100's bench: in turn at six sizes, as
# ladder rows three times at 4096 (cuBLAS last, first, last) and once at 8192. Then, with the time
# left, the GPU tests of lab-mmm that run 115's 200 seconds did not reach (bebe9ec's bundle,
# .gpu315z/c.tgz). Into $OUT/issue65-run-116.tgz.
set -u
start=$SECONDS
logs=$(mktemp -d)
trap 'tar -C "$logs" -czf "$OUT/issue65-run-116.tgz" .' EXIT
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version,power.limit --format=csv,noheader; date -u; } >"$logs/gpu.txt"
run() {  # name, timeout, then the command
  local name=$1 limit=$2
  shift 2
  timeout "$limit" "$@" >"$logs/$name.log" 2>&1
  echo "$name rc=$? at $((SECONDS - start)) s" >>"$logs/rc.txt"
}
src=$(mktemp -d)
patch -s -o "$src/bf16-bench.cu" results/h200/issue65/run-100/bf16-bench.cu results/h200/issue65/run-116/bf16-bench.diff \
  && patch -s -p1 <results/h200/issue65/run-116/mmm_wgmma-sets.diff \
  || { echo "patch failed" >>"$logs/rc.txt"; cat "$logs/rc.txt"; exit 1; }
/usr/local/cuda/bin/nvcc -std=c++17 -O3 -arch=sm_90a -I kernels/cuda "$src/bf16-bench.cu" \
  -lcublas -lcuda -lnvidia-ml -o "$src/bench" >"$logs/build.log" 2>&1
echo "build rc=$? at $((SECONDS - start)) s" >>"$logs/rc.txt"
patch -s -R -p1 <results/h200/issue65/run-116/mmm_wgmma-sets.diff
run in-turn 120 "$src/bench" 4096x4096x4096 8192x8192x8192 4000x4000x4000 1000x4096x3000 4096x64x4096 640x200x1920
run ladder-1 60 "$src/bench" 4096x4096x4096 --ladder
run ladder-2 60 "$src/bench" 4096x4096x4096 --ladder --reverse
run ladder-3 60 "$src/bench" 4096x4096x4096 --ladder
run ladder-8192 60 "$src/bench" 8192x8192x8192 --ladder
c=$(mktemp -d)
tar -C "$c" -xzf .gpu315z/c.tgz
mkdir -p target/release && cp "$c/bin/lab-mmm" target/release/
run test-lab-mmm-rest $((570 - (SECONDS - start))) "$c/tests/lab-mmm-gpu" --include-ignored --test-threads=1 weeks:: \
  --skip a_kernel_that_makes_the_machine_look_broken --skip the_labs_run_puts_each --skip the_week_3_red_team \
  --skip week_2_broken_kernels_are_caught --skip week_3_a_case_that_faults --skip week_3_a_correct_kernel_that_prints \
  --skip week_3_a_forged_result_row
cat "$logs/rc.txt"
for f in "$logs"/in-turn.log "$logs"/ladder-*.log; do
  echo "== ${f##*/}"; grep -hE "^(== m|step 16|one group|two sets|ping-pong|cuBLAS Gemm)" "$f" | cut -c1-150
done
grep -hE "^test |test result" "$logs/test-lab-mmm-rest.log" | cut -c1-150

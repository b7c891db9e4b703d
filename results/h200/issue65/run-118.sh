#!/usr/bin/env bash
# Issue 65, run 118 (one H200): the consumers' whole units and step 18's shared-out pieces in two
# loops (run-118/mmm_wgmma-two-loops.diff), so that ptxas builds the descriptors of step 18's whole
# units in uniform registers too. Release lab-mmm of this change and of bebe9ec (run 115's), and the
# new GPU tests, in .gpu318z/c.tgz.
#  1. The bf16 ladder at 8192 and at 4096, new and old in turn, twice each.
#  2. lab-mmm's GPU tests of every step, of split-K and of the wgmma steps at awkward sizes (new).
#  3. memcheck where step 18 shares tiles out; the whole ladder at 4096; the sweep and its plot.
# Into $OUT/issue65-run-118.tgz.
set -u
start=$SECONDS
c=$(mktemp -d)
tar -C "$c" -xzf .gpu318z/c.tgz
logs=$(mktemp -d)
trap 'tar -C "$logs" -czf "$OUT/issue65-run-118.tgz" .' EXIT
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version,power.limit --format=csv,noheader; date -u; } >"$logs/gpu.txt"
run() {  # name, timeout, then the command
  local name=$1 limit=$2
  shift 2
  timeout "$limit" "$@" >"$logs/$name.log" 2>&1
  echo "$name rc=$? at $((SECONDS - start)) s" >>"$logs/rc.txt"
}
for i in 1 2; do
  for size in 8192 4096; do
    run "ladder-bf16-$size-new-$i" 90 "$c/bin/lab-mmm" --ladder --precision bf16 --size $size
    run "ladder-bf16-$size-old-$i" 90 "$c/bin/lab-mmm-bebe9ec" --ladder --precision bf16 --size $size
  done
done
mkdir -p target/release && cp "$c/bin/lab-mmm" target/release/
run test-lab-mmm 150 "$c/tests/lab-mmm-gpu" --include-ignored --test-threads=1 --nocapture \
  hopper_steps every_step_of_the_ladder split_k cublas_in_tf32
for size in "2300 4000 2170" "2300 4001 2171"; do
  run "memcheck-bf16-${size// /x}" 40 /usr/local/cuda/bin/compute-sanitizer --tool memcheck \
    "$c/bin/lab-mmm" --ladder --precision bf16 --size $size --repetitions 1
done
run ladder-4096-new 120 "$c/bin/lab-mmm" --ladder
run sweep 240 "$c/bin/lab-mmm" --ladder --sweep --plot "$logs/sweep.svg"
cat "$logs/rc.txt"
for f in "$logs"/ladder-*.log; do echo "== ${f##*/}"; grep -E "^\| (1[2-8]\.|cuBLAS)" "$f" | cut -d'|' -f2-6; done
grep -hE "^test |test result" "$logs/test-lab-mmm.log" | cut -c1-100
grep -h "ERROR SUMMARY" "$logs"/memcheck-*.log
grep "^|" "$logs/sweep.log" | grep -E "bf16|tf32" | grep -E "^\| (4096|8192) "

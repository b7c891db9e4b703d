#!/usr/bin/env bash
# Issue 65, run 117 (one H200): bebe9ec's lab-mmm (run 115's bundle, .gpu315z/c.tgz) on another GPU:
# the bf16 ladder three times at 4096 and once at 8192, then the four GPU tests of lab-mmm that runs
# 115 and 116 did not finish (the weeks' legal cases, corners, solution and templates, solution under
# compute-sanitizer). Into $OUT/issue65-run-117.tgz.
set -u
start=$SECONDS
c=$(mktemp -d)
tar -C "$c" -xzf .gpu315z/c.tgz
logs=$(mktemp -d)
trap 'tar -C "$logs" -czf "$OUT/issue65-run-117.tgz" .' EXIT
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version,power.limit --format=csv,noheader; date -u; } >"$logs/gpu.txt"
run() {  # name, timeout, then the command
  local name=$1 limit=$2
  shift 2
  timeout "$limit" "$@" >"$logs/$name.log" 2>&1
  echo "$name rc=$? at $((SECONDS - start)) s" >>"$logs/rc.txt"
}
for i in 1 2 3; do run "ladder-bf16-4096-$i" 90 "$c/bin/lab-mmm" --ladder --precision bf16; done
run ladder-bf16-8192 90 "$c/bin/lab-mmm" --ladder --precision bf16 --size 8192
mkdir -p target/release && cp "$c/bin/lab-mmm" target/release/
run test-lab-mmm-weeks $((540 - (SECONDS - start))) "$c/tests/lab-mmm-gpu" --include-ignored --test-threads=1 \
  weeks::weeks_2_and_3
cat "$logs/rc.txt"
for f in "$logs"/ladder-*.log; do echo "== ${f##*/}"; grep -E "^\| (1[2-8]\.|cuBLAS)" "$f" | cut -d'|' -f2-6; done
grep -hE "^test |test result" "$logs/test-lab-mmm-weeks.log" | cut -c1-150

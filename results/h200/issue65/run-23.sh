#!/usr/bin/env bash
# Issue 65, run 23 (one H200): after step 16's consumer chose its store with one `if constexpr`
# (behaviour unchanged): the GPU tests of the wgmma steps at awkward sizes and the bf16 ladder at 4096.
# Release lab-mmm and its GPU tests in .gpu241/ (from .gpu241z/c.tgz). Into $OUT/issue65-run-23.tgz.
set -u
c=$PWD/.gpu241
logs=$(mktemp -d)
trap 'tar -C "$logs" -czf "$OUT/issue65-run-23.tgz" .' EXIT
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; date -u; } >"$logs/gpu.txt"
mkdir -p target/release && cp "$c/bin/lab-mmm" target/release/
timeout 120 "$c/tests/lab-mmm-gpu" --include-ignored --test-threads=1 --nocapture hopper_steps >"$logs/run-23-test-lab-mmm.log" 2>&1
echo "tests rc=$?" >>"$logs/rc.txt"
timeout 60 "$c/bin/lab-mmm" --ladder --precision bf16 >"$logs/ladder-bf16-4096.log" 2>&1
echo "bf16 4096 rc=$?" >>"$logs/rc.txt"
cat "$logs/rc.txt"; grep -E "test result" "$logs/run-23-test-lab-mmm.log"; grep -E "^\| (1[3-6]\.|cuBLAS GemmEx)" "$logs/ladder-bf16-4096.log"

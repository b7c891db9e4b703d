#!/usr/bin/env bash
# Issue 65, run 86 (one H200): why the ladder gives step 16 99% of cuBLAS at 4096 where run 85's bench,
# which runs the GEMMs in turn launch by launch and keeps the GPU busy, gives it 100.7% to 100.9%:
# `lab-mmm --ladder --precision bf16` at 4096 with 10 timed launches (the default, 1.8 ms of GPU
# work a row), 200 and 2000, in turn, three rounds. Release lab-mmm in .gpu286z/c.tgz (bin).
# Into $OUT/issue65-run-86.tgz.
set -u
c=$(mktemp -d)
tar -C "$c" -xzf .gpu286z/c.tgz
logs=$(mktemp -d)
trap 'tar -C "$logs" -czf "$OUT/issue65-run-86.tgz" .' EXIT
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; date -u; } >"$logs/gpu.txt"
for i in 1 2 3; do
  for reps in 10 200 2000; do
    timeout 90 "$c/bin/lab-mmm" --ladder --precision bf16 --repetitions $reps >"$logs/ladder-bf16-4096-r$reps-$i.log" 2>&1
    echo "reps $reps round $i rc=$?" >>"$logs/rc.txt"
  done
done
cat "$logs/rc.txt"
for f in "$logs"/ladder-*.log; do echo "== ${f##*/}"; grep -E "^(1[68]\.|cuBLAS).*GPU time" "$f" | cut -c1-150; done

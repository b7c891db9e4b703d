#!/usr/bin/env bash
# Issue 65, run 109 (one H200): the ladder as committed (lab-mmm of c9058df in run 93's bundle,
# .gpu293z/c.tgz; its code is that of 52633c3), cuBLAS in the same run: the whole ladder at 4096
# once, bf16 at 4096 three times and at 8192 once. Into $OUT/issue65-run-109.tgz.
set -u
c=$(mktemp -d)
tar -C "$c" -xzf .gpu293z/c.tgz
logs=$(mktemp -d)
trap 'tar -C "$logs" -czf "$OUT/issue65-run-109.tgz" .' EXIT
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version,power.limit --format=csv,noheader; date -u; } >"$logs/gpu.txt"
timeout 150 "$c/bin/lab-mmm" --ladder >"$logs/ladder-4096.log" 2>&1
echo "ladder 4096 rc=$?" >>"$logs/rc.txt"
for i in 1 2 3; do
  timeout 90 "$c/bin/lab-mmm" --ladder --precision bf16 >"$logs/ladder-bf16-4096-$i.log" 2>&1
  echo "bf16 4096 $i rc=$?" >>"$logs/rc.txt"
done
timeout 90 "$c/bin/lab-mmm" --ladder --precision bf16 --size 8192 >"$logs/ladder-bf16-8192.log" 2>&1
echo "bf16 8192 rc=$?" >>"$logs/rc.txt"
cat "$logs/rc.txt"
for f in "$logs"/ladder-*.log; do echo "== ${f##*/}"; grep -E "^\| (1[2-8]\.|[0-9]\.|10\.|11\.|cuBLAS)" "$f" | cut -d'|' -f2-6; done

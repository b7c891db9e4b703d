#!/usr/bin/env bash
# Issue 65, run 83 (one H200): run 81's sweep again with the plot's legend above the lines (the y
# axis taller by the legend's rows, lab-mmm/src/sweep.rs). Release lab-mmm in .gpu283z/c.tgz (bin).
# Into $OUT/issue65-run-83.tgz.
set -u
c=$(mktemp -d)
tar -C "$c" -xzf .gpu283z/c.tgz
logs=$(mktemp -d)
trap 'tar -C "$logs" -czf "$OUT/issue65-run-83.tgz" .' EXIT
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; date -u; } >"$logs/gpu.txt"
timeout 300 "$c/bin/lab-mmm" --ladder --sweep --plot "$logs/sweep.svg" >"$logs/sweep.log" 2>&1
echo "sweep rc=$?" | tee "$logs/rc.txt"
grep "^|" "$logs/sweep.log" | grep -E "bf16|tf32"

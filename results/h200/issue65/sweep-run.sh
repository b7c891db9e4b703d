#!/usr/bin/env bash
# Issue 65: lab-mmm's whole sweep and its plot with a bundle's release lab-mmm (BUNDLE.tgz holding
# bin/lab-mmm), what runs 81 and 83 did. Into $OUT/issue65-NAME.tgz.
#
#   bash results/h200/issue65/sweep-run.sh BUNDLE.tgz NAME
set -u
[[ $# == 2 ]] || { echo "usage: sweep-run.sh BUNDLE.tgz NAME" >&2; exit 2; }
c=$(mktemp -d)
tar -C "$c" -xzf "$1"
logs=$(mktemp -d)
trap 'tar -C "$logs" -czf "$OUT/issue65-$2.tgz" .' EXIT
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; date -u; } >"$logs/gpu.txt"
timeout 300 "$c/bin/lab-mmm" --ladder --sweep --plot "$logs/sweep.svg" >"$logs/sweep.log" 2>&1
echo "sweep rc=$?" | tee "$logs/rc.txt"
grep "^|" "$logs/sweep.log" | grep -E "bf16|tf32"

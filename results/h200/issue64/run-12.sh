#!/usr/bin/env bash
# Issue 64, run 12 (one H200): compare.sh's COUNT-product rows, ours beside the labs (warm), with each
# side run as five processes (PROCESSES=5, new after run 11 showed one process of a pageable copy 12%
# off the next). Release labs in .gpu111/bin, copied where compare.sh looks in a checkout. Into
# $OUT/issue64-12.tgz.
set -u
c=.gpu111
logs=$(mktemp -d)
trap 'tar -C "$logs" -czf "$OUT/issue64-12.tgz" .' EXIT
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; date -u; } >"$logs/gpu.txt"
mkdir -p target/release && cp $c/bin/* target/release/
PROCESSES=5 WORK=$logs/compare-work timeout 500 bash scripts/compare.sh --only '^mmm( \(2048|-without|-streamed|-mapped)' >"$logs/compare-streams-5-processes.log" 2>"$logs/compare-streams-5-processes.err"
rm -f "$logs"/compare-*work/*[^g] 2>/dev/null

#!/usr/bin/env bash
# Issue 65, run 22 (one H200): the GPU tests that our solutions pass the corners of weeks 5 and 6's
# legal case spaces (lab-streams' tests/corners-*.txt: N 2^28 on 64 streams and on one, N 1, the most
# products, the largest matrices; lab-mapped's likewise), which issue 62's run 9 cut off and which
# issue 65's item 4 changed since. Release labs and GPU tests in .gpu240/ (from .gpu240z/c.tgz). Into
# $OUT/issue65-run-22.tgz.
set -u
c=$PWD/.gpu240
logs=$(mktemp -d)
trap 'tar -C "$logs" -czf "$OUT/issue65-run-22.tgz" .' EXIT
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; date -u; } >"$logs/gpu.txt"
export LAB_BIN_DIR=$c/bin
s=$(date +%s)
timeout 300 "$c/tests/lab-streams-gpu" --include-ignored --test-threads=1 --nocapture week_5_the_corners \
  >"$logs/run-22-test-lab-streams-corners.log" 2>&1
echo "week 5 corners rc=$? $(( $(date +%s) - s )) s" >>"$logs/rc.txt"
s=$(date +%s)
timeout 150 "$c/tests/lab-mapped-gpu" --include-ignored --test-threads=1 --nocapture week_6_the_corners \
  >"$logs/run-22-test-lab-mapped-corners.log" 2>&1
echo "week 6 corners rc=$? $(( $(date +%s) - s )) s" >>"$logs/rc.txt"
cat "$logs/rc.txt"; grep -hE "test result|legal cases|panicked" "$logs"/run-22-*.log | cut -c1-300

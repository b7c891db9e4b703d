#!/usr/bin/env bash
# Issue 64, run 10 (one H200): compare.sh's COUNT-product rows again with the labs as committed (the
# streams of --as-printed made before the window again, after run 9 tried them inside it), the slides'
# programs as printed beside the labs' --as-printed with fifteen cold runs a side, and ours beside the
# labs (warm). Release labs in .gpu111/bin, copied where compare.sh looks in a checkout. Into
# $OUT/issue64-10.tgz.
set -u
c=.gpu111
logs=$(mktemp -d)
trap 'tar -C "$logs" -czf "$OUT/issue64-10.tgz" .' EXIT
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; date -u; } >"$logs/gpu.txt"
mkdir -p target/release && cp $c/bin/* target/release/
rows='^mmm( \(2048|-without|-streamed|-mapped)'
COLD_RUNS=15 WORK=$logs/compare-slides-work timeout 400 bash scripts/compare.sh --originals reference/slides --only "$rows" >"$logs/compare-slides-15.log" 2>"$logs/compare-slides-15.err"
WORK=$logs/compare-work timeout 150 bash scripts/compare.sh --only "$rows" >"$logs/compare-streams-2.log" 2>"$logs/compare-streams-2.err"
rm -f "$logs"/compare-*work/*[^g] 2>/dev/null

#!/usr/bin/env bash
# Issue 62, run 8 (one H200): week 5's corners again (results/h200/issue62/corners/05-streams.txt,
# N up to 2^28, which run 7 stopped after 90 s while the CPU checked every element's STEPS fused
# multiply-adds), with lab-streams whose results row checks a random sample past 2^34 operations
# (.gpu100: release lab-streams). Log into $OUT.
set -u
work=$(mktemp -d)
tar -C "$work" -xzf .gpu100/bundle.tgz
nvidia-smi -L > "$OUT/gpu.txt"
start=$(date +%s%N)
# (the corner file has since moved to lab-streams/tests/corners-pipeline.txt)
timeout 250 "$work/b/bin/lab-streams" --program-source reference/weeks/pipeline.cu --check --cases results/h200/issue62/corners/05-streams.txt > "$OUT/05-streams.log" 2>&1
echo "exit $?, wall $(( ($(date +%s%N) - start) / 1000000 )) ms" >> "$OUT/05-streams.log"
grep -E "results|rules passed|exit" "$OUT/05-streams.log"

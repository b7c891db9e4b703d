#!/usr/bin/env bash
# Issue 62, run 9 (one H200): the new GPU tests of the corners of each week's legal case space
# (tests/corners*.txt, run with our solutions), from the dev-profile test executables and labs of
# .gpu101. The weeks run 7 and 8 did not reach first; no test starts after 190 s (the session's
# device time). Logs into $OUT.
set -u
work=$(mktemp -d)
tar -C "$work" -xzf .gpu101/bundle.tgz
export LAB_BIN_DIR=$work/b/bin
nvidia-smi -L > "$OUT/gpu.txt"
begin=$(date +%s)
for pair in lab-mapped:week_6_the_corners lab-mmm:weeks_2_and_3_the_corners lab-constant-tracer:week_4_the_corners \
    lab-dynamic-parallel:week_7_the_corners lab-simpson:week_1_the_corners lab-streams:week_5_the_corners; do
    IFS=: read -r lab test <<<"$pair"
    (( $(date +%s) - begin < 190 )) || { echo "$lab: not started (time)"; continue; }
    start=$(date +%s)
    timeout 120 "$work/b/tests/$lab-gpu" "$test" --include-ignored --test-threads=1 --nocapture > "$OUT/$lab.log" 2>&1
    echo "exit $?, wall $(( $(date +%s) - start )) s" >> "$OUT/$lab.log"
    echo "$lab: $(grep -E '^test result' "$OUT/$lab.log") $(tail -n 1 "$OUT/$lab.log")"
done

#!/usr/bin/env bash
# Issue 62, run 5 (one H200): the GPU tests of the kernel weeks' labs, after their checks moved behind
# the KernelWeek trait, from the bundle scripts/gpu-bundle.sh made (.gpu98): each test whose name
# holds "week" (the assignments: our solution, the starters, broken, red-team and honest kernels,
# random legal cases, hidden cases, faults, time limits), one at a time, compute-sanitizer's left
# out. Arguments: the labs (lab-simpson ...) and the seconds each may take. Into $OUT/issue62-5-*.tgz.
set -u
limit=$1
shift
work=$(mktemp -d)
tar -C "$work" -xzf .gpu98/bundle.tgz
export LAB_BIN_DIR=$work/gpu-bundle/bin
logs=$(mktemp -d)
nvidia-smi -L > "$logs/gpu.txt"
for lab in "$@"; do
    start=$(date +%s)
    timeout "$limit" "$work/gpu-bundle/tests/$lab-gpu" week --include-ignored --test-threads=1 --skip sanitize > "$logs/$lab.log" 2>&1
    echo "exit $?, wall $(( $(date +%s) - start )) s" >> "$logs/$lab.log"
    tar -C "$logs" -czf "$OUT/issue62-5-$1.tgz" .
    echo "$lab: $(grep -E '^test result' "$logs/$lab.log") $(tail -n 1 "$logs/$lab.log")"
    grep -E "^test .* (FAILED|ok)$" "$logs/$lab.log"
done

#!/usr/bin/env bash
# Issue 66 on the GPU, run 4 (the bundle of run 1): week 6's legal cases, 100 random ones per program
# beside the fixed ones, as run 3 did for week 5.
# Into $OUT/logs.tgz, re-made after every step.
set -u
mkdir -p .gpu70/b && tar -C .gpu70/b -xzf .gpu70/bundle.tgz
export LAB_BIN_DIR=$PWD/.gpu70/b/bin B=$PWD/.gpu70/b/bin U=$PWD/.gpu70/b/bin-unboxed T=$PWD/.gpu70/b/tests
logs=$(mktemp -d)
t() { local name=$1 limit=$2; shift 2; { echo "\$ $*"; start=$(date +%s%N); timeout "$limit" "$@"; code=$?; echo "exit $code, wall $(( ($(date +%s%N) - start) / 1000000 )) ms"; } >"$logs/$name.log" 2>&1; tar -C "$logs" -czf "$OUT/logs.tgz" .; }
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; uname -r; date -u; } > "$logs/gpu.txt"
LAB_LEGAL_CASES=100 t week6-legal 540 $T/mapped --include-ignored --test-threads 1 --nocapture week_6_our_solutions_pass_legal_cases
tar -C "$logs" -czf "$OUT/logs.tgz" .
tail -n 4 "$logs"/*.log | grep -v "^$"

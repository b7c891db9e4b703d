#!/usr/bin/env bash
# Issue 61 on the GPU, run 3 (bundle in .gpu82/): lab-mmm's two GPU tests run 2 left, the naive body's
# rule rows (its expected row now names the case measured) and the random legal cases of weeks 2 and 3
# for ours and the honest corpus (each timed launch on fresh inputs, every telling case measured).
# Into $OUT/every-case-3.tgz.
set -u
mkdir -p .gpu82/b && tar -C .gpu82/b -xzf .gpu82/bundle.tgz
export LAB_BIN_DIR=$PWD/.gpu82/b/bin T=$PWD/.gpu82/b/tests
logs=$(mktemp -d)
t() { local name=$1 limit=$2; shift 2; { echo "\$ $*"; start=$(date +%s%N); timeout "$limit" "$@"; code=$?; echo "exit $code, wall $(( ($(date +%s%N) - start) / 1000000 )) ms"; } >"$logs/$name.log" 2>&1; tar -C "$logs" -czf "$OUT/every-case-3.tgz" .; }
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; uname -r; date -u; } > "$logs/gpu.txt"
t naive-body 60 "$T/mmm" --include-ignored --test-threads 1 week_3_the_naive_body_in_the_tiled_kernel_fails_the_rules_only
t legal 480 "$T/mmm" --include-ignored --test-threads 1 --nocapture random_legal_cases
tail -n 2 "$logs"/*.log | grep -v "^$"

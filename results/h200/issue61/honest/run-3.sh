#!/usr/bin/env bash
# Issues 61 and 66 on the GPU, run 3 (bundle in .gpu75/): the honest corpora of weeks 4 and 7, made
# by the templates generator from our kernels (`assignments/<week>/honest/`), each through the week's
# cases and 100 random legal ones beside ours, the measured rules included. Into $OUT/honest-3.tgz.
set -u
mkdir -p .gpu75/b && tar -C .gpu75/b -xzf .gpu75/bundle.tgz
export LAB_BIN_DIR=$PWD/.gpu75/b/bin T=$PWD/.gpu75/b/tests
logs=$(mktemp -d)
t() { local name=$1 limit=$2; shift 2; { echo "\$ $*"; start=$(date +%s%N); timeout "$limit" "$@"; code=$?; echo "exit $code, wall $(( ($(date +%s%N) - start) / 1000000 )) ms"; } >"$logs/$name.log" 2>&1; tar -C "$logs" -czf "$OUT/honest-3.tgz" .; }
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; uname -r; date -u; } > "$logs/gpu.txt"
LAB_LEGAL_CASES=100 t week4-honest 240 $T/tracer --include-ignored --test-threads 1 --nocapture week_4_random_legal
LAB_LEGAL_CASES=100 t week7-honest 200 $T/dynamic --include-ignored --test-threads 1 --nocapture week_7_random_legal
tail -n 4 "$logs"/*.log | grep -v "^$"

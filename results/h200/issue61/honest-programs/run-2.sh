#!/usr/bin/env bash
# Issues 60, 61 and 66 on the GPU, run 2 (bundle in .gpu79/): week 6's honest corpus again, through
# the one helper both program weeks' tests now call (common::testing::assert_honest_programs_pass).
# Into $OUT/honest-programs-2.tgz.
set -u
mkdir -p .gpu79/b && tar -C .gpu79/b -xzf .gpu79/bundle.tgz
export LAB_BIN_DIR=$PWD/.gpu79/b/bin T=$PWD/.gpu79/b/tests
logs=$(mktemp -d)
t() { local name=$1 limit=$2; shift 2; { echo "\$ $*"; start=$(date +%s%N); timeout "$limit" "$@"; code=$?; echo "exit $code, wall $(( ($(date +%s%N) - start) / 1000000 )) ms"; } >"$logs/$name.log" 2>&1; tar -C "$logs" -czf "$OUT/honest-programs-2.tgz" .; }
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; uname -r; date -u; } > "$logs/gpu.txt"
t week6-honest 220 $T/mapped --include-ignored --test-threads 1 --nocapture week_6_the_honest_corpus
tail -n 4 "$logs"/*.log | grep -v "^$"

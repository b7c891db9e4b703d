#!/usr/bin/env bash
# Issue 60 on the GPU, run 6 (bundle in .gpu73/): week 5's red team again, now that a header's
# `// reason:` line must be in the table too (forges-trace.cu: "something was written after the
# trace's end"), so that a FAULT reached some other way, as in run 1, fails the test. Into $OUT/logs.tgz.
set -u
mkdir -p .gpu73/b && tar -C .gpu73/b -xzf .gpu73/bundle.tgz
export LAB_BIN_DIR=$PWD/.gpu73/b/bin T=$PWD/.gpu73/b/tests
logs=$(mktemp -d)
t() { local name=$1 limit=$2; shift 2; { echo "\$ $*"; start=$(date +%s%N); timeout "$limit" "$@"; code=$?; echo "exit $code, wall $(( ($(date +%s%N) - start) / 1000000 )) ms"; } >"$logs/$name.log" 2>&1; tar -C "$logs" -czf "$OUT/logs.tgz" .; }
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; uname -r; date -u; } > "$logs/gpu.txt"
t week5-red-team 200 $T/streams --include-ignored --test-threads 1 --nocapture week_5_red_team
tar -C "$logs" -czf "$OUT/logs.tgz" .
tail -n 12 "$logs"/*.log | grep -v "^$"

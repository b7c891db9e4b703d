#!/usr/bin/env bash
# Issue 60 on the GPU, run 7 (bundle in .gpu74/): weeks 5 and 6's red teams after the re-read that
# reads every corpus (kernel and program red teams, honest kernels) through one lister in
# common::testing. Into $OUT/logs.tgz.
set -u
mkdir -p .gpu74/b && tar -C .gpu74/b -xzf .gpu74/bundle.tgz
export LAB_BIN_DIR=$PWD/.gpu74/b/bin T=$PWD/.gpu74/b/tests
logs=$(mktemp -d)
t() { local name=$1 limit=$2; shift 2; { echo "\$ $*"; start=$(date +%s%N); timeout "$limit" "$@"; code=$?; echo "exit $code, wall $(( ($(date +%s%N) - start) / 1000000 )) ms"; } >"$logs/$name.log" 2>&1; tar -C "$logs" -czf "$OUT/logs.tgz" .; }
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; uname -r; date -u; } > "$logs/gpu.txt"
t week5-red-team 150 $T/streams --include-ignored --test-threads 1 --nocapture week_5_red_team
t week6-red-team 60 $T/mapped --include-ignored --test-threads 1 --nocapture week_6_red_team
tar -C "$logs" -czf "$OUT/logs.tgz" .
tail -n 6 "$logs"/*.log | grep -v "^$"

#!/usr/bin/env bash
# Issue 60 on the GPU, run 3 of the sealed recorder (bundle in .gpu76/): week 5's test of programs
# without our trace, rewritten for the allow-list (run 2 found it still ending by `_exit`, which the
# static checks now refuse, and forging with `fdopen`, off the list too): `_exit` refused, `abort()`
# a FAULT in every case, a forger that finds no settings passes as the solution it otherwise is.
# Into $OUT/sealed-3.tgz.
set -u
mkdir -p .gpu76/b && tar -C .gpu76/b -xzf .gpu76/bundle.tgz
export LAB_BIN_DIR=$PWD/.gpu76/b/bin T=$PWD/.gpu76/b/tests
logs=$(mktemp -d)
t() { local name=$1 limit=$2; shift 2; { echo "\$ $*"; start=$(date +%s%N); timeout "$limit" "$@"; code=$?; echo "exit $code, wall $(( ($(date +%s%N) - start) / 1000000 )) ms"; } >"$logs/$name.log" 2>&1; tar -C "$logs" -czf "$OUT/sealed-3.tgz" .; }
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; uname -r; date -u; } > "$logs/gpu.txt"
t week5-without-trace 200 $T/streams --include-ignored --test-threads 1 week_5_a_program_without
tail -n 4 "$logs"/*.log | grep -v "^$"

#!/usr/bin/env bash
# Issue 66 on the GPU, final run 1 of 2: weeks 5 and 6, every GPU test of theirs (the legal-case tests
# with LAB_LEGAL_CASES random cases per program beside the fixed ones), into $OUT/logs.tgz.
set -u
mkdir -p .gpu66/b && tar -C .gpu66/b -xzf .gpu66/bundle.tgz
export LAB_BIN_DIR=$PWD/.gpu66/b/bin
logs=$(mktemp -d)
t() { local name=$1; shift; { echo "\$ $*"; start=$(date +%s%N); "$@"; code=$?; echo "exit $code, wall $(( ($(date +%s%N) - start) / 1000000 )) ms"; } >"$logs/$name.log" 2>&1; tar -C "$logs" -czf "$OUT/logs.tgz" .; }
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; uname -r; } > "$logs/gpu.txt"
LAB_LEGAL_CASES=20 t week5-tests .gpu66/b/tests/streams --include-ignored --test-threads 1 --nocapture week_5
LAB_LEGAL_CASES=20 t week6-tests .gpu66/b/tests/mapped --include-ignored --test-threads 1 --nocapture week_6
tar -C "$logs" -czf "$OUT/logs.tgz" .
tail -n 3 "$logs"/*.log

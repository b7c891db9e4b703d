#!/usr/bin/env bash
# Issues 66 and 60 on the GPU, run 2 of 3 (the bundle of run 1, lab-mmm's tests again after the ncu
# test's fix: a MACHINE row gives its reason on the error line, not in the row): the lab-mmm tests run
# 1 did not reach within its time (compute-sanitizer's, ncu's stand-in), then 200 random legal cases
# of weeks 4 and 7; into $OUT/logs.tgz, re-made after every step.
set -u
mkdir -p .gpu67/b && tar -C .gpu67/b -xzf .gpu67/bundle.tgz
export LAB_BIN_DIR=$PWD/.gpu67/b/bin B=$PWD/.gpu67/b/bin T=$PWD/.gpu67/b/tests
logs=$(mktemp -d)
t() { local name=$1 limit=$2; shift 2; { echo "\$ $*"; start=$(date +%s%N); timeout "$limit" "$@"; code=$?; echo "exit $code, wall $(( ($(date +%s%N) - start) / 1000000 )) ms"; } >"$logs/$name.log" 2>&1; tar -C "$logs" -czf "$OUT/logs.tgz" .; }
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; uname -r; date -u; } > "$logs/gpu.txt"
t mmm-ncu 60 $T/mmm --include-ignored --test-threads 1 week_3_ncu_failing
t mmm-rest 330 $T/mmm --include-ignored --test-threads 1 week_3_under_sanitize weeks_2_and_3_the_solution_passes week_3_writes_outside
LAB_LEGAL_CASES=200 t week4-legal 100 $T/constant-tracer --include-ignored --test-threads 1 --nocapture week_4_random_legal
LAB_LEGAL_CASES=200 t week7-legal 60 $T/dynamic-parallel --include-ignored --test-threads 1 --nocapture week_7_random_legal
tail -n 3 "$logs"/*.log

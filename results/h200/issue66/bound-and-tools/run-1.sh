#!/usr/bin/env bash
# Issues 66 and 60 on the GPU, run 1 of 2 (bundle of 2a3e35a in .gpu67/): week 1's and lab-mmm's GPU
# tests with the products' error bound (matrix::bound) and the stand-ins for compute-sanitizer and ncu
# (tools failing on their own are MACHINE), then 200 random legal cases of weeks 2 and 3; into
# $OUT/logs.tgz, re-made after every step.
set -u
mkdir -p .gpu67/b && tar -C .gpu67/b -xzf .gpu67/bundle.tgz
export LAB_BIN_DIR=$PWD/.gpu67/b/bin B=$PWD/.gpu67/b/bin T=$PWD/.gpu67/b/tests
logs=$(mktemp -d)
t() { local name=$1 limit=$2; shift 2; { echo "\$ $*"; start=$(date +%s%N); timeout "$limit" "$@"; code=$?; echo "exit $code, wall $(( ($(date +%s%N) - start) / 1000000 )) ms"; } >"$logs/$name.log" 2>&1; tar -C "$logs" -czf "$OUT/logs.tgz" .; }
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; uname -r; date -u; } > "$logs/gpu.txt"
t simpson-tests 120 $T/simpson --include-ignored --test-threads 1
t mmm-tests 330 $T/mmm --include-ignored --test-threads 1 --skip weeks_2_and_3_random_legal
LAB_LEGAL_CASES=200 t weeks23-legal 130 $T/mmm --include-ignored --test-threads 1 --nocapture weeks_2_and_3_random_legal
tail -n 3 "$logs"/*.log

#!/usr/bin/env bash
# Issue 66 on the GPU, part A: week 1 (its GPU tests, the issue's case through --check and grade.sh)
# and week 5 (its program tests, the legal-case test with more random cases).
set -u
export LAB_BIN_DIR=$PWD/.gpu66/bin
nvidia-smi -L > "$OUT/gpu.txt"; nvidia-smi --query-gpu=driver_version --format=csv,noheader >> "$OUT/gpu.txt"
t() { local name=$1; shift; { echo "\$ $*"; start=$(date +%s%N); "$@"; code=$?; echo "exit $code, wall $(( ($(date +%s%N) - start) / 1000000 )) ms"; } >"$OUT/$name.log" 2>&1; }
printf 'sin 100 200 999999 999\nexp -700 709 999999 999\npeak 0.29 0.31 65536 512\npi -1000000 1000000 67108864 1024\n' > "$OUT/week1-cases.txt"
t week1-tests .gpu66/tests/simpson --include-ignored --test-threads 1 --nocapture
t week1-issue-cases "$LAB_BIN_DIR/lab-simpson" --kernel-source kernels/cuda/simpson.cu --check --cases "$OUT/week1-cases.txt"
subs=$(mktemp -d); cp kernels/cuda/simpson.cu "$subs/ours.cu"; cp assignments/01-simpson/simpson.cu "$subs/starter.cu"; cp assignments/01-simpson/broken/off-by-one.cu "$subs/off-by-one.cu"
t week1-grade bash assignments/grade.sh --cases "$OUT/week1-cases.txt" 01-simpson "$subs"
LAB_LEGAL_CASES=16 t week5-tests .gpu66/tests/streams --include-ignored --test-threads 1 --nocapture week_5

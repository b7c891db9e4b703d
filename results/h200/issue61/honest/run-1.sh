#!/usr/bin/env bash
# Issues 61 and 66 on the GPU, run 1 (bundle of the honest corpus in .gpu71/): each kernel of weeks
# 1, 2 and 3's honest corpora (`assignments/<week>/honest/`) through the week's own cases and 100
# random legal ones, beside ours (the measured rules of week 3 included). Into $OUT/logs.tgz.
set -u
mkdir -p .gpu71/b && tar -C .gpu71/b -xzf .gpu71/bundle.tgz
export LAB_BIN_DIR=$PWD/.gpu71/b/bin T=$PWD/.gpu71/b/tests
logs=$(mktemp -d)
t() { local name=$1 limit=$2; shift 2; { echo "\$ $*"; start=$(date +%s%N); timeout "$limit" "$@"; code=$?; echo "exit $code, wall $(( ($(date +%s%N) - start) / 1000000 )) ms"; } >"$logs/$name.log" 2>&1; tar -C "$logs" -czf "$OUT/logs.tgz" .; }
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; uname -r; date -u; } > "$logs/gpu.txt"
LAB_LEGAL_CASES=100 t week1-honest 200 $T/simpson --include-ignored --test-threads 1 --nocapture week_1_the_honest_corpus
LAB_LEGAL_CASES=100 t weeks23-honest 360 $T/mmm --include-ignored --test-threads 1 --nocapture weeks_2_and_3_random_legal_cases
tar -C "$logs" -czf "$OUT/logs.tgz" .
tail -n 4 "$logs"/*.log | grep -v "^$"
grep -h "legal cases pass" "$logs"/*.log

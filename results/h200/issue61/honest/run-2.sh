#!/usr/bin/env bash
# Issues 61 and 66 on the GPU, run 2 (bundle in .gpu72/): after run 1 found grid-stride-loop.cu's
# `(f0 + 4 f1 + f2) * h / 6` infinite where ours is 8.2e307 (exp near x = 705), the bound near the
# largest double; week 1's honest corpus again, with run 1's seed and then a new one, 100 random
# legal cases each. Into $OUT/logs.tgz.
set -u
mkdir -p .gpu72/b && tar -C .gpu72/b -xzf .gpu72/bundle.tgz
export LAB_BIN_DIR=$PWD/.gpu72/b/bin T=$PWD/.gpu72/b/tests
logs=$(mktemp -d)
t() { local name=$1 limit=$2; shift 2; { echo "\$ $*"; start=$(date +%s%N); timeout "$limit" "$@"; code=$?; echo "exit $code, wall $(( ($(date +%s%N) - start) / 1000000 )) ms"; } >"$logs/$name.log" 2>&1; tar -C "$logs" -czf "$OUT/logs.tgz" .; }
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; uname -r; date -u; } > "$logs/gpu.txt"
LAB_LEGAL_SEED=1795950276697944442 LAB_LEGAL_CASES=100 t week1-honest-seed-of-run-1 200 $T/simpson --include-ignored --test-threads 1 --nocapture week_1_the_honest_corpus
LAB_LEGAL_CASES=100 t week1-honest 200 $T/simpson --include-ignored --test-threads 1 --nocapture week_1_the_honest_corpus
tar -C "$logs" -czf "$OUT/logs.tgz" .
tail -n 4 "$logs"/*.log | grep -v "^$"
grep -h "legal cases pass" "$logs"/*.log

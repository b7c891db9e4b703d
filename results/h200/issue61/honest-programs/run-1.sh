#!/usr/bin/env bash
# Issues 60, 61 and 66 on the GPU, run 1 (bundle in .gpu77/): the honest corpora of the program
# weeks (`assignments/05-streams/honest/`, `assignments/06-pinned-mapped/honest/`, made by the
# templates generator): each program through the week's cases and issue 66's small ones, under the
# sealed recorder, in the box. Into $OUT/honest-programs-1.tgz.
set -u
mkdir -p .gpu77/b && tar -C .gpu77/b -xzf .gpu77/bundle.tgz
export LAB_BIN_DIR=$PWD/.gpu77/b/bin T=$PWD/.gpu77/b/tests
logs=$(mktemp -d)
t() { local name=$1 limit=$2; shift 2; { echo "\$ $*"; start=$(date +%s%N); timeout "$limit" "$@"; code=$?; echo "exit $code, wall $(( ($(date +%s%N) - start) / 1000000 )) ms"; } >"$logs/$name.log" 2>&1; tar -C "$logs" -czf "$OUT/honest-programs-1.tgz" .; }
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; uname -r; date -u; } > "$logs/gpu.txt"
t week6-honest 240 $T/mapped --include-ignored --test-threads 1 --nocapture week_6_the_honest_corpus
t week5-honest 330 $T/streams --include-ignored --test-threads 1 --nocapture week_5_the_honest_corpus
tail -n 4 "$logs"/*.log | grep -v "^$"

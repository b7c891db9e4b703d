#!/usr/bin/env bash
# Issue 60 on the GPU, run 2 of the sealed recorder (bundle in .gpu75/): week 5's red team again, with
# forges-trace.cu's reason now a row of the table (run 1 looked for the program's own line there,
# which goes to stderr), and the program tests of weeks 5 and 6 (our solutions, the broken programs
# and a program without our trace, judged by their traces). Into $OUT/sealed-2.tgz.
set -u
mkdir -p .gpu75/b && tar -C .gpu75/b -xzf .gpu75/bundle.tgz
export LAB_BIN_DIR=$PWD/.gpu75/b/bin T=$PWD/.gpu75/b/tests
logs=$(mktemp -d)
t() { local name=$1 limit=$2; shift 2; { echo "\$ $*"; start=$(date +%s%N); timeout "$limit" "$@"; code=$?; echo "exit $code, wall $(( ($(date +%s%N) - start) / 1000000 )) ms"; } >"$logs/$name.log" 2>&1; tar -C "$logs" -czf "$OUT/sealed-2.tgz" .; }
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; uname -r; date -u; } > "$logs/gpu.txt"
t week5-red-team 150 $T/streams --include-ignored --test-threads 1 --nocapture week_5_red_team
t week5-programs 300 $T/streams --include-ignored --test-threads 1 week_5_programs_are_judged week_5_a_program_without week_5_mmm_streamed_is_judged
t week6-programs 150 $T/mapped --include-ignored --test-threads 1 week_6_programs_are_judged week_6_mmm_streamed_and_pinned_is_judged
tail -n 4 "$logs"/*.log | grep -v "^$"

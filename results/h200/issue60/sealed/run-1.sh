#!/usr/bin/env bash
# Issue 60 on the GPU, run 1 of the sealed recorder (bundle in .gpu75/): the recorder keeps its word,
# pipe and process on a page sealed before main and reads CUPTI's buffers only at exit. Both program
# weeks' red teams (forges-trace.cu now also overwrites the pipe's number), forges-trace.cu on its own
# with what it printed, and the program tests of weeks 5 and 6 (our solutions and the broken
# programs, judged by their traces). Into $OUT/sealed-1.tgz.
set -u
mkdir -p .gpu75/b && tar -C .gpu75/b -xzf .gpu75/bundle.tgz
export LAB_BIN_DIR=$PWD/.gpu75/b/bin B=$PWD/.gpu75/b/bin T=$PWD/.gpu75/b/tests
logs=$(mktemp -d)
t() { local name=$1 limit=$2; shift 2; { echo "\$ $*"; start=$(date +%s%N); timeout "$limit" "$@"; code=$?; echo "exit $code, wall $(( ($(date +%s%N) - start) / 1000000 )) ms"; } >"$logs/$name.log" 2>&1; tar -C "$logs" -czf "$OUT/sealed-1.tgz" .; }
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; uname -r; date -u; } > "$logs/gpu.txt"
t forges-trace 60 $B/lab-streams --program-source assignments/05-streams/adversarial/forges-trace.cu --show-output --check
t week5-red-team 150 $T/streams --include-ignored --test-threads 1 --nocapture week_5_red_team
t week6-red-team 60 $T/mapped --include-ignored --test-threads 1 --nocapture week_6_red_team
tail -n 4 "$logs"/*.log | grep -v "^$"
grep -h "^forge:" "$logs"/forges-trace.log | sort | uniq -c

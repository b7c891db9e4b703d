#!/usr/bin/env bash
# Issue 60, run 3 (bundle in .gpu86/): the box gives a program no mem file of its own (nor any
# thread's) and the recorder sends the driver's thread names to /dev/null (run 2: the driver writes
# /proc/self/task/<tid>/comm of each thread it starts, and cudaHostAlloc failed without it).
# forges-trace.cu, both program weeks' red teams and their program tests, and a week-1 check (a
# compile in the box). Into $OUT/proc-mem-3.tgz.
set -u
mkdir -p .gpu86/b && tar -C .gpu86/b -xzf .gpu86/bundle.tgz
export LAB_BIN_DIR=$PWD/.gpu86/b/bin B=$PWD/.gpu86/b/bin T=$PWD/.gpu86/b/tests
logs=$(mktemp -d)
t() { local name=$1 limit=$2; shift 2; { echo "\$ $*"; start=$(date +%s%N); timeout "$limit" "$@"; code=$?; echo "exit $code, wall $(( ($(date +%s%N) - start) / 1000000 )) ms"; } >"$logs/$name.log" 2>&1; tar -C "$logs" -czf "$OUT/proc-mem-3.tgz" .; }
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; uname -r; date -u; } > "$logs/gpu.txt"
t forge-now 90 $B/lab-streams --program-source assignments/05-streams/adversarial/forges-trace.cu --show-output --check
t week1-check 60 $B/lab-simpson --kernel-source assignments/01-simpson/honest/$(ls assignments/01-simpson/honest | head -1) --check
t week5-red-team 150 $T/streams --include-ignored --test-threads 1 --nocapture week_5_red_team
t week6-red-team 90 $T/mapped --include-ignored --test-threads 1 --nocapture week_6_red_team
t week6-programs 200 $T/mapped --include-ignored --test-threads 1 week_6_programs_are_judged week_6_mmm_streamed_and_pinned_is_judged
tail -n 3 "$logs"/*.log | grep -v "^$"
grep -h "^forge:" "$logs"/forge-*.log | sort | uniq -c

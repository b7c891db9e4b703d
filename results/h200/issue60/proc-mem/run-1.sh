#!/usr/bin/env bash
# Issue 60 on the GPU, run 1 of the box's /proc for programs (bundle in .gpu85/): forges-trace.cu now
# also reads the recorder's sealed page through /proc/self/mem, silences it and forges the trace.
# Before: lab-streams of 58c334d (its box let a program open /proc/self/mem); now: the box gives a
# program no mem file of its own. Then both program weeks' red teams and week 1's check (a compile
# in the box). Into $OUT/proc-mem-1.tgz.
set -u
mkdir -p .gpu85/b && tar -C .gpu85/b -xzf .gpu85/bundle.tgz
export LAB_BIN_DIR=$PWD/.gpu85/b/bin B=$PWD/.gpu85/b/bin T=$PWD/.gpu85/b/tests
logs=$(mktemp -d)
t() { local name=$1 limit=$2; shift 2; { echo "\$ $*"; start=$(date +%s%N); timeout "$limit" "$@"; code=$?; echo "exit $code, wall $(( ($(date +%s%N) - start) / 1000000 )) ms"; } >"$logs/$name.log" 2>&1; tar -C "$logs" -czf "$OUT/proc-mem-1.tgz" .; }
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; uname -r; date -u; } > "$logs/gpu.txt"
forge=assignments/05-streams/adversarial/forges-trace.cu
t forge-before 90 .gpu85/b/before/lab-streams --program-source $forge --show-output --check
t forge-now 90 $B/lab-streams --program-source $forge --show-output --check
t week5-red-team 150 $T/streams --include-ignored --test-threads 1 --nocapture week_5_red_team
t week6-red-team 90 $T/mapped --include-ignored --test-threads 1 --nocapture week_6_red_team
t week1-check 60 $B/lab-simpson --check
tail -n 3 "$logs"/*.log | grep -v "^$"
grep -h "^forge:\|^Result\|PASS\|FAIL" "$logs"/forge-*.log | sort | uniq -c | head -20

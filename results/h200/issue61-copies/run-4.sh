#!/usr/bin/env bash
# Issue 61, run 4 (bundle in .gpu93/): in runs 2 and 3 the warm-up before each fresh timed launch
# of weeks 1, 4 and 7 ran on the same fresh input, so a kernel could do the work there and replay it
# in the timed launch. Now each timed launch warms up on another fresh input (an interval, a scene),
# and our week-7 tally is cleared after our rounds. --check of ours in weeks 1, 4 and 7 and of
# spheres-in-shared.cu; every GPU test of lab-simpson and lab-constant-tracer; week 7's GPU tests.
# Into $OUT/copies-4.tgz.
set -u
mkdir -p .gpu93/b && tar -C .gpu93/b -xzf .gpu93/bundle.tgz
export LAB_BIN_DIR=$PWD/.gpu93/b/bin B=$PWD/.gpu93/b/bin T=$PWD/.gpu93/b/tests
logs=$(mktemp -d)
t() { local name=$1 limit=$2; shift 2; { echo "\$ $*"; start=$(date +%s%N); timeout "$limit" "$@"; code=$?; echo "exit $code, wall $(( ($(date +%s%N) - start) / 1000000 )) ms"; } >"$logs/$name.log" 2>&1; tar -C "$logs" -czf "$OUT/copies-4.tgz" .; }
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; uname -r; date -u; } > "$logs/gpu.txt"
t check-simpson 60 $B/lab-simpson --kernel-source kernels/cuda/simpson.cu --check
t check-tracer 60 $B/lab-constant-tracer --kernel-source kernels/cuda/tracer.cu --check
t check-spheres-in-shared 60 $B/lab-constant-tracer --kernel-source assignments/04-constant-tracer/adversarial/spheres-in-shared.cu --check
t check-adaptive 60 $B/lab-dynamic-parallel --kernel-source kernels/cuda/adaptive_simpson.cu --check
t simpson-tests 120 $T/simpson --include-ignored --test-threads 1
t tracer-tests 150 $T/tracer --include-ignored --test-threads 1
t dp-tests 150 $T/dp --include-ignored --test-threads 1 week_7
tail -qn 2 "$logs"/*.log | grep -v "^$"

#!/usr/bin/env bash
# Issue 61, run 2 (bundle in .gpu91/): fresh inputs on every timed launch of weeks 1, 4 and 7 (a
# moved interval, a fresh scene), the physical floor, and week 4's loads not from the constant cache
# (shared, local and atomics beside global and generic). --check of ours in weeks 1, 4 and 7 and of
# the new spheres-in-shared.cu; every GPU test of lab-simpson and lab-constant-tracer; week 7's
# solution, broken kernels, red team and random legal cases; lab-dynamic-parallel's default run.
# Into $OUT/copies-2.tgz.
set -u
mkdir -p .gpu91/b && tar -C .gpu91/b -xzf .gpu91/bundle.tgz
export LAB_BIN_DIR=$PWD/.gpu91/b/bin B=$PWD/.gpu91/b/bin T=$PWD/.gpu91/b/tests
logs=$(mktemp -d)
t() { local name=$1 limit=$2; shift 2; { echo "\$ $*"; start=$(date +%s%N); timeout "$limit" "$@"; code=$?; echo "exit $code, wall $(( ($(date +%s%N) - start) / 1000000 )) ms"; } >"$logs/$name.log" 2>&1; tar -C "$logs" -czf "$OUT/copies-2.tgz" .; }
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; uname -r; date -u; } > "$logs/gpu.txt"
t check-simpson 60 $B/lab-simpson --kernel-source kernels/cuda/simpson.cu --check
t check-tracer 60 $B/lab-constant-tracer --kernel-source kernels/cuda/tracer.cu --check
t check-spheres-in-shared 60 $B/lab-constant-tracer --kernel-source assignments/04-constant-tracer/adversarial/spheres-in-shared.cu --check
t check-adaptive 60 $B/lab-dynamic-parallel --kernel-source kernels/cuda/adaptive_simpson.cu --check
t default-dynamic-parallel 60 $B/lab-dynamic-parallel
t simpson-tests 200 $T/simpson --include-ignored --test-threads 1
t tracer-tests 200 $T/tracer --include-ignored --test-threads 1
t dp-tests 200 $T/dp --include-ignored --test-threads 1 week_7
tail -qn 2 "$logs"/*.log | grep -v "^$"
grep -h "not from the constant cache" "$logs"/check-*.log | cut -c1-220

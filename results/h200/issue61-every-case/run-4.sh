#!/usr/bin/env bash
# Issue 61 on the GPU, run 4 (bundle in .gpu83/; .gpu81/'s lab-mmm as "before"): racecheck and
# synccheck on one small multi-tile case in every plain week-3 --check. The missing second barrier
# before and now, ours and the six honest kernels through the plain check (timed), then lab-mmm's
# GPU tests that run week 3's broken, red-team and printing kernels and the new test.
# Into $OUT/every-case-4.tgz.
set -u
mkdir -p .gpu83/b .gpu81/b && tar -C .gpu83/b -xzf .gpu83/bundle.tgz && tar -C .gpu81/b -xzf .gpu81/bundle.tgz
export LAB_BIN_DIR=$PWD/.gpu83/b/bin T=$PWD/.gpu83/b/tests
NOW=$PWD/.gpu83/b/bin/lab-mmm BEFORE=$PWD/.gpu81/b/bin/lab-mmm
logs=$(mktemp -d)
t() { local name=$1 limit=$2; shift 2; { echo "\$ $*"; start=$(date +%s%N); timeout "$limit" "$@"; code=$?; echo "exit $code, wall $(( ($(date +%s%N) - start) / 1000000 )) ms"; } >"$logs/$name.log" 2>&1; tar -C "$logs" -czf "$OUT/every-case-4.tgz" .; }
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; uname -r; date -u; } > "$logs/gpu.txt"
t missing-second-before 60 "$BEFORE" --kernel-source assignments/03-mmm-tiled/broken/missing-second-syncthreads.cu --kernel tiled --check
t missing-second-now 60 "$NOW" --kernel-source assignments/03-mmm-tiled/broken/missing-second-syncthreads.cu --kernel tiled --check
t mmm-now 60 "$NOW" --kernel-source kernels/cuda/mmm.cu --kernel tiled --check
for file in assignments/03-mmm-tiled/honest/*.cu; do
    t "honest-$(basename "$file" .cu)" 60 "$NOW" --kernel-source "$file" --kernel tiled --check
done
t tests 420 "$T/mmm" --include-ignored --test-threads 1 week_3_a_plain_check the_week_3_red_team week_3_broken_kernels week_3_a_correct_kernel_that_prints weeks_2_and_3_the_solution_passes_and
tail -n 2 "$logs"/*.log | grep -v "^$"

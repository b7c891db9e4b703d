#!/usr/bin/env bash
# Issue 61, week 7, run 3 (bundle in .gpu90/): runs 1 and 2 found no counter that tells an empty grid
# per split beside a loop in the parent from an honest tail-launch tree (both put their work on one
# SM sub-partition). Now integrands.cuh counts each grid's evaluations of the integrand (%gridid
# buckets, adaptive_simpson.cu and the student's file built with -DLAB_COUNT_EVALUATIONS), and a case
# fails where one grid made more than an eighth of the tree's. --check of ours and empty-children.cu;
# the GPU tests of week 7's broken kernels, red team, and random legal cases with the honest corpus.
# Into $OUT/children-3.tgz.
set -u
mkdir -p .gpu90/b && tar -C .gpu90/b -xzf .gpu90/bundle.tgz
export LAB_BIN_DIR=$PWD/.gpu90/b/bin B=$PWD/.gpu90/b/bin T=$PWD/.gpu90/b/tests
logs=$(mktemp -d)
t() { local name=$1 limit=$2; shift 2; { echo "\$ $*"; start=$(date +%s%N); timeout "$limit" "$@"; code=$?; echo "exit $code, wall $(( ($(date +%s%N) - start) / 1000000 )) ms"; } >"$logs/$name.log" 2>&1; tar -C "$logs" -czf "$OUT/children-3.tgz" .; }
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; uname -r; date -u; } > "$logs/gpu.txt"
w=assignments/07-dynamic-parallelism
t check-ours 60 $B/lab-dynamic-parallel --kernel-source kernels/cuda/adaptive_simpson.cu --check
t check-empty-children 60 $B/lab-dynamic-parallel --kernel-source $w/adversarial/empty-children.cu --check
t check-tail-launch 60 $B/lab-dynamic-parallel --kernel-source $w/honest/tail-launch.cu --check
t broken 60 $T/dp --include-ignored --test-threads 1 week_7_broken_kernels_are_caught
t red-team 60 $T/dp --include-ignored --test-threads 1 the_week_7_red_team
t legal 150 $T/dp --include-ignored --test-threads 1 week_7_random_legal_cases
tail -qn 2 "$logs"/*.log | grep -v "^$"
grep -h "evaluated the integrand" "$logs"/check-*.log | cut -c1-220 | head -8

#!/usr/bin/env bash
# Issue 61, run 1 (bundle in .gpu91/): week 3 counts copies into shared memory that pass no register
# (cp.async from sm_80, the TMA unit's bytes from sm_90), metrics chosen by the GPU's architecture.
# --check of ours, the honest cp-async-tiles.cu and the adversaries cp-async-naive.cu and
# bulk-copy-naive.cu; week 3's red team, broken kernels, solution and templates, and weeks 2 and 3's
# random legal cases with the honest corpus (fresh inputs and the physical floor in every case).
# Into $OUT/copies-1.tgz.
set -u
mkdir -p .gpu91/b && tar -C .gpu91/b -xzf .gpu91/bundle.tgz
export LAB_BIN_DIR=$PWD/.gpu91/b/bin B=$PWD/.gpu91/b/bin T=$PWD/.gpu91/b/tests
logs=$(mktemp -d)
t() { local name=$1 limit=$2; shift 2; { echo "\$ $*"; start=$(date +%s%N); timeout "$limit" "$@"; code=$?; echo "exit $code, wall $(( ($(date +%s%N) - start) / 1000000 )) ms"; } >"$logs/$name.log" 2>&1; tar -C "$logs" -czf "$OUT/copies-1.tgz" .; }
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; uname -r; date -u; } > "$logs/gpu.txt"
w=assignments/03-mmm-tiled
for file in kernels/cuda/mmm.cu $w/honest/cp-async-tiles.cu $w/adversarial/cp-async-naive.cu $w/adversarial/bulk-copy-naive.cu; do
    t "check-$(basename "$file" .cu)" 90 $B/lab-mmm --kernel-source "$file" --kernel tiled --check
done
t red-team 220 $T/mmm --include-ignored --test-threads 1 the_week_3_red_team
t broken 90 $T/mmm --include-ignored --test-threads 1 week_3_broken_kernels
t solution 90 $T/mmm --include-ignored --test-threads 1 weeks_2_and_3_the_solution_passes_and
t legal 230 $T/mmm --include-ignored --test-threads 1 weeks_2_and_3_random_legal_cases
tail -qn 2 "$logs"/*.log | grep -v "^$"
grep -h "global loads per element" "$logs"/check-*.log | cut -c1-220

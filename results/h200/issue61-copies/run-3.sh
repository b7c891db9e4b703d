#!/usr/bin/env bash
# Issue 61, run 3 (bundle in .gpu92/): run 1 counted cp.async twice on the H200 (L1's requests for
# global loads hold it): now the loads are the larger of the instructions (LDG and LDGSTS) and the
# requests. Run 2 failed our own week-7 kernel on a fresh interval (3684 intervals accepted, the CPU
# 3683): timed launches now allow a borderline decision, and each end of the fresh interval moves on
# its own. --check of ours, cp-async-tiles.cu, cp-async-naive.cu and bulk-copy-naive.cu (week 3) and
# of ours in week 7; week 3's red team and random legal cases with the honest corpus; week 7's GPU
# tests; lab-simpson's GPU tests. Into $OUT/copies-3.tgz.
set -u
mkdir -p .gpu92/b && tar -C .gpu92/b -xzf .gpu92/bundle.tgz
export LAB_BIN_DIR=$PWD/.gpu92/b/bin B=$PWD/.gpu92/b/bin T=$PWD/.gpu92/b/tests
logs=$(mktemp -d)
t() { local name=$1 limit=$2; shift 2; { echo "\$ $*"; start=$(date +%s%N); timeout "$limit" "$@"; code=$?; echo "exit $code, wall $(( ($(date +%s%N) - start) / 1000000 )) ms"; } >"$logs/$name.log" 2>&1; tar -C "$logs" -czf "$OUT/copies-3.tgz" .; }
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; uname -r; date -u; } > "$logs/gpu.txt"
w=assignments/03-mmm-tiled
for file in kernels/cuda/mmm.cu $w/honest/cp-async-tiles.cu $w/adversarial/cp-async-naive.cu $w/adversarial/bulk-copy-naive.cu; do
    t "check-$(basename "$file" .cu)" 90 $B/lab-mmm --kernel-source "$file" --kernel tiled --check
done
t check-adaptive 60 $B/lab-dynamic-parallel --kernel-source kernels/cuda/adaptive_simpson.cu --check
t legal 200 $T/mmm --include-ignored --test-threads 1 weeks_2_and_3_random_legal_cases
t dp-tests 150 $T/dp --include-ignored --test-threads 1 week_7
t simpson-tests 100 $T/simpson --include-ignored --test-threads 1
t red-team 150 $T/mmm --include-ignored --test-threads 1 the_week_3_red_team
tail -qn 2 "$logs"/*.log | grep -v "^$"
grep -h "global loads per element" "$logs"/check-*.log | cut -c1-200

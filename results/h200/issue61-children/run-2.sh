#!/usr/bin/env bash
# Issue 61, week 7, run 2 (bundle in .gpu89/, a calibration build not committed): run 1's share of
# instructions on the busiest SM sub-partition failed an honest tail-launch tree (15 %: its grids run
# where their parent ran). Beside it now: that share over the busiest sub-partition's share of the
# warps launched (smsp__warps_launched .max / .sum), which a warp running far longer than the others
# makes large. The same kernels as run 1, each twice. Into $OUT/children-2.tgz.
set -u
mkdir -p .gpu89/b && tar -C .gpu89/b -xzf .gpu89/bundle.tgz
export LAB_BIN_DIR=$PWD/.gpu89/b/bin B=$PWD/.gpu89/b/bin T=$PWD/.gpu89/b/tests
logs=$(mktemp -d)
t() { local name=$1 limit=$2; shift 2; { echo "\$ $*"; start=$(date +%s%N); timeout "$limit" "$@"; code=$?; echo "exit $code, wall $(( ($(date +%s%N) - start) / 1000000 )) ms"; } >"$logs/$name.log" 2>&1; tar -C "$logs" -czf "$OUT/children-2.tgz" .; }
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; uname -r; date -u; } > "$logs/gpu.txt"
w=assignments/07-dynamic-parallelism
for file in kernels/cuda/adaptive_simpson.cu $w/adversarial/empty-children.cu $w/adversarial/launch-never-runs.cu $w/honest/*.cu; do
    for n in 1 2; do
        t "check-$(basename "$file" .cu)-$n" 90 $B/lab-dynamic-parallel --kernel-source "$file" --check
    done
done
tail -qn 1 "$logs"/check-*.log
grep -h "child grids, measured" "$logs"/check-*.log | cut -d'|' -f2-7

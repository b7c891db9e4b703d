#!/usr/bin/env bash
# Issue 61, week 7, run 1 (bundle in .gpu88/): where the tree's instructions run. A second measured
# rule: the busiest SM sub-partition's share of the instructions executed while the master's tree
# ran (smsp__inst_executed .max / .sum). --check of ours, the new empty-children.cu (an empty grid
# per split, the refinement in the parent's loop), launch-never-runs.cu and the six honest kernels,
# each twice, to see the shares and how they move. Into $OUT/children-1.tgz.
set -u
mkdir -p .gpu88/b && tar -C .gpu88/b -xzf .gpu88/bundle.tgz
export LAB_BIN_DIR=$PWD/.gpu88/b/bin B=$PWD/.gpu88/b/bin T=$PWD/.gpu88/b/tests
logs=$(mktemp -d)
t() { local name=$1 limit=$2; shift 2; { echo "\$ $*"; start=$(date +%s%N); timeout "$limit" "$@"; code=$?; echo "exit $code, wall $(( ($(date +%s%N) - start) / 1000000 )) ms"; } >"$logs/$name.log" 2>&1; tar -C "$logs" -czf "$OUT/children-1.tgz" .; }
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; uname -r; date -u; } > "$logs/gpu.txt"
w=assignments/07-dynamic-parallelism
for file in kernels/cuda/adaptive_simpson.cu $w/adversarial/empty-children.cu $w/adversarial/launch-never-runs.cu $w/honest/*.cu; do
    for n in 1 2; do
        t "check-$(basename "$file" .cu)-$n" 90 $B/lab-dynamic-parallel --kernel-source "$file" --check
    done
done
tail -qn 1 "$logs"/check-*.log
grep -h "child grids, measured" "$logs"/check-*.log | cut -d'|' -f2-7

#!/usr/bin/env bash
# Issue 61 on the GPU, run 5 (bundle in .gpu78/): run 4's two rewritten week-3 kernels, and ours,
# through 60 random legal cases (`run-5-cases.txt`, drawn as the legal-case test draws them, seed 61
# in Python's random), then each rewritten kernel under `--sanitize`. Into $OUT/honest-5.tgz.
set -u
mkdir -p .gpu78/b && tar -C .gpu78/b -xzf .gpu78/bundle.tgz
B=$PWD/.gpu78/b/bin
cases=results/h200/issue61/honest/run-5-cases.txt
logs=$(mktemp -d)
t() { local name=$1 limit=$2; shift 2; { echo "\$ $*"; start=$(date +%s%N); timeout "$limit" "$@"; code=$?; echo "exit $code, wall $(( ($(date +%s%N) - start) / 1000000 )) ms"; } >"$logs/$name.log" 2>&1; tar -C "$logs" -czf "$OUT/honest-5.tgz" .; }
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; uname -r; date -u; } > "$logs/gpu.txt"
t ours-legal 60 $B/lab-mmm --kernel-source kernels/cuda/mmm.cu --kernel tiled --check --cases $cases
for name in padded-tiles transposed-b-tile; do
    t "$name-legal" 60 $B/lab-mmm --kernel-source assignments/03-mmm-tiled/honest/$name.cu --kernel tiled --check --cases $cases
    t "$name-sanitize" 60 $B/lab-mmm --kernel-source assignments/03-mmm-tiled/honest/$name.cu --kernel tiled --check --sanitize
done
tail -n 3 "$logs"/*.log | grep -v "^$"

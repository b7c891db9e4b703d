#!/usr/bin/env bash
# Issue 61 on the GPU, run 4 (bundle in .gpu78/): week 3's padded-tiles.cu and transposed-b-tile.cu
# rewritten so that they are independent of ours and of each other (the similarity's normal form
# found the first a padded copy of ours, the second a renamed copy of the first), each through the
# week's `--check`, the measured rules included. Into $OUT/honest-4.tgz.
set -u
mkdir -p .gpu78/b && tar -C .gpu78/b -xzf .gpu78/bundle.tgz
B=$PWD/.gpu78/b/bin
logs=$(mktemp -d)
t() { local name=$1 limit=$2; shift 2; { echo "\$ $*"; start=$(date +%s%N); timeout "$limit" "$@"; code=$?; echo "exit $code, wall $(( ($(date +%s%N) - start) / 1000000 )) ms"; } >"$logs/$name.log" 2>&1; tar -C "$logs" -czf "$OUT/honest-4.tgz" .; }
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; uname -r; date -u; } > "$logs/gpu.txt"
for name in padded-tiles transposed-b-tile; do
    t "$name" 120 $B/lab-mmm --kernel-source assignments/03-mmm-tiled/honest/$name.cu --kernel tiled --check
done
tail -n 3 "$logs"/*.log | grep -v "^$"

#!/usr/bin/env bash
# Issue 61 on the GPU, run 5 (bundle in .gpu84/): after the re-read (fresh inputs drawn in the case's
# precision at once; the per-thread count of a measured rule in one helper), ours, one honest kernel,
# the replaying and the only-where-measured kernels, and week 4's generic-pointer tracer through
# --check. Into $OUT/every-case-5.tgz.
set -u
mkdir -p .gpu84/b && tar -C .gpu84/b -xzf .gpu84/bundle.tgz
B=$PWD/.gpu84/b/bin
logs=$(mktemp -d)
t() { local name=$1 limit=$2; shift 2; { echo "\$ $*"; start=$(date +%s%N); timeout "$limit" "$@"; code=$?; echo "exit $code, wall $(( ($(date +%s%N) - start) / 1000000 )) ms"; } >"$logs/$name.log" 2>&1; tar -C "$logs" -czf "$OUT/every-case-5.tgz" .; }
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; uname -r; date -u; } > "$logs/gpu.txt"
t mmm 60 $B/lab-mmm --kernel-source kernels/cuda/mmm.cu --kernel tiled --check
t transposed-b-tile 60 $B/lab-mmm --kernel-source assignments/03-mmm-tiled/honest/transposed-b-tile.cu --kernel tiled --check
t replays-its-product 60 $B/lab-mmm --kernel-source assignments/03-mmm-tiled/adversarial/replays-its-product.cu --kernel tiled --check
t tiles-only-where-measured 60 $B/lab-mmm --kernel-source assignments/03-mmm-tiled/adversarial/tiles-only-where-measured.cu --kernel tiled --check
t tracer 60 $B/lab-constant-tracer --kernel-source kernels/cuda/tracer.cu --check
t generic-constant-pointer 60 $B/lab-constant-tracer --kernel-source assignments/04-constant-tracer/adversarial/generic-constant-pointer.cu --check
tail -n 2 "$logs"/*.log | grep -v "^$"

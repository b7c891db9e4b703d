#!/usr/bin/env bash
# Run 6 (lab-mmm of 8e1ffa4 in .gpu68/: A's row lengths computed once for the bound and Freivalds'
# test): the large product through Freivalds' path, every kernel at awkward sizes, and lab-mmm's
# default run. Into $OUT/logs.tgz.
set -u
mkdir -p .gpu68/b && tar -C .gpu68/b -xzf .gpu68/bundle.tgz
export LAB_BIN_DIR=$PWD/.gpu68/b/bin B=$PWD/.gpu68/b/bin T=$PWD/.gpu68/b/tests
logs=$(mktemp -d)
t() { local name=$1 limit=$2; shift 2; { echo "\$ $*"; start=$(date +%s%N); timeout "$limit" "$@"; code=$?; echo "exit $code, wall $(( ($(date +%s%N) - start) / 1000000 )) ms"; } >"$logs/$name.log" 2>&1; tar -C "$logs" -czf "$OUT/logs.tgz" .; }
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; uname -r; date -u; } > "$logs/gpu.txt"
t mmm-products 120 $T/mmm --include-ignored --test-threads 1 a_large_product_passes_freivalds every_kernel_precision the_labs_run_puts
t default-lab-mmm 60 $B/lab-mmm
tail -n 4 "$logs"/*.log

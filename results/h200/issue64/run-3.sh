#!/usr/bin/env bash
# Issue 64, run 3 (two H200s of one host): the new kernels built for sm_75 only (CUDA_ARCH=sm_75:
# the H200 JIT-compiles their PTX, as for a T4's code), and the device query on a machine with two
# GPUs. Binaries and GPU test executables from target/arch-sm_75, packed in .gpu104/. Into
# $OUT/issue64-3.tgz.
set -u
logs=$(mktemp -d)
trap 'tar -C "$logs" -czf "$OUT/issue64-3.tgz" .' EXIT
export LAB_BIN_DIR=$PWD/.gpu104/bin
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; date -u; } >"$logs/gpu.txt"
.gpu104/tests/lab-memory-gpu --include-ignored --test-threads=1 >"$logs/sm75-test-lab-memory.log" 2>&1
.gpu104/tests/lab-mmm-gpu --include-ignored --test-threads=1 tile_example >"$logs/sm75-test-lab-mmm-tile.log" 2>&1
.gpu104/tests/lab-mapped-gpu --include-ignored --test-threads=1 strided >"$logs/sm75-test-lab-mapped-strided.log" 2>&1
.gpu104/bin/lab-memory --mode latency >"$logs/sm75-latency.log" 2>&1
.gpu104/bin/lab-mmm --tile-example >"$logs/sm75-tile-example.log" 2>&1
.gpu104/bin/lab-memory --mode device-query >"$logs/two-gpus-device-query.log" 2>&1

#!/usr/bin/env bash
# What each CUDA_ARCH choice costs to build, on the machine that runs this (no GPU needed): the time
# of `cargo build --release -p kernels` after its outputs are cleaned (nvcc's time: every kernel for
# every architecture of the list, one nvcc per core) and the size of the lab-mmm release binary, which
# embeds every build of every kernel. The top README's "Every GPU of the course" table quotes its
# output, saved as results/cpu/build/costs.log.
#
#   bash scripts/build-costs.sh > results/cpu/build/costs.log
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR=target/build-costs
nvcc=.toolchain/cuda/bin/nvcc
[[ -x $nvcc ]] || nvcc=nvcc
echo "Machine: $(nproc) cores, $(grep -m 1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'); $("$nvcc" --version | grep release)"
# Everything but the kernels is built once, first, so that only nvcc's part is timed below.
CUDA_ARCH=sm_90 cargo build --release -q -p lab-mmm
echo
echo "| CUDA_ARCH | kernels build s | lab-mmm binary MB |"
echo "|-----------|-----------------|-------------------|"
for arch in sm_90 all-major all; do
    cargo clean -q --release -p kernels
    start=$(date +%s%N)
    CUDA_ARCH=$arch cargo build --release -q -p kernels 2>/dev/null
    tenths=$((($(date +%s%N) - start) / 100000000))
    CUDA_ARCH=$arch cargo build --release -q -p lab-mmm 2>/dev/null
    bytes=$(stat -c %s "$CARGO_TARGET_DIR/release/lab-mmm")
    printf '| %s | %d.%d | %s |\n' "$arch" $((tenths / 10)) $((tenths % 10)) "$(python3 -c "print(f'{$bytes / 1e6:.1f}')")"
done

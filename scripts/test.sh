#!/usr/bin/env bash
# The test command (README, .ci/run): everything that needs no GPU. On a fresh machine it first
# installs what the build needs (scripts/cuda-toolchain.sh); GPU tests are #[ignore]d here and run on a
# GPU machine by gpu-bundle/run.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/cuda-toolchain.sh
cargo build --workspace --all-targets --locked
cargo test --workspace --locked

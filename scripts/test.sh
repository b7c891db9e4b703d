#!/usr/bin/env bash
# The test command (README, .ci/run): everything that needs no GPU. On a fresh machine it first
# installs what the build needs (scripts/cuda-toolchain.sh); GPU tests are #[ignore]d here and run on a
# GPU machine by gpu-bundle/run.sh. Ends with the workspace's total on one line.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/cuda-toolchain.sh
cargo build --workspace --all-targets --locked
log=$(mktemp)
trap 'rm -f "$log"' EXIT
cargo test --workspace --locked 2>&1 | tee "$log"
# cargo prints one "test result:" line per test binary; the last is often an empty doc-test run.
awk '/^test result:/ {
        for (i = 2; i <= NF; i++) {
            if ($i ~ /^passed;/) passed += $(i - 1)
            if ($i ~ /^failed;/) failed += $(i - 1)
            if ($i ~ /^ignored;/) ignored += $(i - 1)
        }
     }
     END { print "skipped: the GPU tests, for bash gpu-bundle/run.sh on a GPU machine"
           printf "tests: %d passed, %d failed, %d skipped\n", passed, failed, ignored }' "$log"

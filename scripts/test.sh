#!/usr/bin/env bash
# The test command (README, .ci/run): everything that needs no GPU. On a fresh machine it first
# installs what the build needs (scripts/cuda-toolchain.sh); GPU tests are #[ignore]d here and run on a
# GPU machine by gpu-bundle/run.sh. Ends with the workspace's total on one line.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/cuda-toolchain.sh
# One format for every crate (rustfmt.toml); `cargo fmt --all` makes it.
cargo fmt --all --check
cargo build --workspace --all-targets --locked
# No warning anywhere, and every unsafe block and unsafe fn documented (the workspace's [lints]).
cargo clippy --workspace --all-targets --locked -- -D warnings
# Every doc link resolves, for a reader of the private items too (the crates are read more than
# published: a link to a private item is fine, a broken or ambiguous one is not).
RUSTDOCFLAGS="-D warnings -A rustdoc::private_intra_doc_links" cargo doc --workspace --no-deps --document-private-items --locked
log=$(mktemp)
references=$(mktemp -d)
trap 'rm -rf "$log" "$references"' EXIT
# The slide programs in CUDA C++ compile with the pinned nvcc (cuBLAS's is reported skipped: the
# toolchain has no cuBLAS), and compare.sh reads both sides' saved outputs right.
bash scripts/compare.sh --build-only "$references"
# The programs as the slides print them (reference/slides/, what compare.sh --originals reads): each
# built in place of ours, and their compare.toml read.
bash scripts/compare.sh --originals reference/slides --build-only "$references/slides"
bash scripts/test-compare.sh
# grade.sh's CSV, --jobs, GPUs in turn, --cases and errors, with a stand-in lab (no GPU); make-class.sh.
bash scripts/test-grade.sh
# The student pack (dev profile, one architecture): its audit for our solutions, its labs' --check
# --dry-run, and a build from its sources without nvcc.
bash scripts/test-student-pack.sh
# grade.sh --slurm and --collect on a one-node Slurm started here (installed with apt where missing);
# where it cannot run it prints a "test result:" line with 1 ignored, counted below as skipped.
bash scripts/test-slurm.sh | tee -a "$log"
# grade.sh --feedback's pages, from a saved grading run, as headless Chromium draws them (installed
# with apt where missing; where it cannot run, a "test result:" line with 1 ignored, as for Slurm).
bash scripts/test-feedback-page.sh | tee -a "$log"
# The course server's pages as a student drives them in headless Chromium (playwright-core from npm,
# pinned), with a stand-in worker; skipped, and counted so, where the browser cannot be had.
bash scripts/test-course-page.sh | tee -a "$log"
# Every `cargo run` line of every README parses and finds its files from where the README says.
bash scripts/test-readme-commands.sh
# Every figure a README quotes from a saved run (results/) is in that run's output.
bash scripts/test-readme-figures.sh
# Every code quote a README or a comment credits to the slides is printed by them (issue 40).
bash scripts/test-slide-quotes.sh
# Every place a slide table's `where in the texts` column names is where it says in that text (issue 64).
bash scripts/test-slide-locators.sh
# saved-runs.sh, which makes those runs on the GPU machine: logs, must-fail runs, the per-run limit.
bash scripts/test-saved-runs.sh
cargo test --workspace --locked 2>&1 | tee -a "$log"
# Every architecture this nvcc supports, not only the default's major ones (issue 28): the kernels
# built for each, in a target folder of their own, and their tests, which check each build's report
# against kernels::NEEDS.
CUDA_ARCH=all CARGO_TARGET_DIR=target/arch-all cargo test -p kernels --lib --locked 2>&1 | tee -a "$log"
# cargo prints one "test result:" line per test binary; the last is often an empty doc-test run.
awk '/^test result:/ {
        for (i = 2; i <= NF; i++) {
            if ($i ~ /^passed;/) passed += $(i - 1)
            if ($i ~ /^failed;/) failed += $(i - 1)
            if ($i ~ /^ignored;/) ignored += $(i - 1)
        }
     }
     /^test-slurm.sh: SKIPPED/ { slurm = "; scripts/test-slurm.sh (no Slurm here)" }
     /^test-feedback-page.sh: SKIPPED/ { browser = "; scripts/test-feedback-page.sh (no Chromium here)" }
     /^test-course-page.sh: SKIPPED/ { course = "; scripts/test-course-page.sh (no Chromium or playwright-core here)" }
     END { print "skipped: the GPU tests, for bash gpu-bundle/run.sh on a GPU machine; reference/cublas/gemm.cu (no cuBLAS here)" slurm browser course
           printf "tests: %d passed, %d failed, %d skipped\n", passed, failed, ignored }' "$log"

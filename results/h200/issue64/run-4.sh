#!/usr/bin/env bash
# Issue 64, run 4 (one H200): lab-memory after two changes: --mode coherence (new) and memory.cu's
# copies sharing one copy_plus_one (strided_copy and line_order_copy): the GPU tests, memcheck on the
# coherence kernel, and the coherence and coalescing runs the README quotes. Release lab-memory and its
# GPU test executable in .gpu105/. Into $OUT/issue64-4.tgz.
set -u
logs=$(mktemp -d)
trap 'tar -C "$logs" -czf "$OUT/issue64-4.tgz" .' EXIT
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; date -u; } >"$logs/gpu.txt"
.gpu105/lab-memory-gpu --include-ignored --test-threads=1 >"$logs/run-4-test-lab-memory.log" 2>&1
/usr/local/cuda/bin/compute-sanitizer --tool memcheck .gpu105/lab-memory --mode coherence >"$logs/run-4-sanitize-coherence.log" 2>&1
.gpu105/lab-memory --mode coherence >"$logs/coherence.log" 2>&1
.gpu105/lab-memory --mode coherence --seed 9 >"$logs/coherence-seed-9.log" 2>&1
.gpu105/lab-memory --mode coalescing >"$logs/run-4-coalescing.log" 2>&1

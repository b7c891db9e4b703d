#!/usr/bin/env bash
# Issue 65, run 92 (one H200): run 91 found a CUDA context 2.7x cheaper, and a request of ncu's batch
# beside 8 processes making contexts 2.2x faster, with CUDA_DEVICE_MAX_CONNECTIONS=1. The class of
# 300 with --jobs 16 for 230 s with c9058df's grader and lab-mmm (.gpu292z/c.tgz, a/bin), first as it
# is (A), then with CUDA_DEVICE_MAX_CONNECTIONS=1 in grade.sh's environment, which every check and
# its children inherit (B). Into $OUT/issue65-run-92-a.tgz and $OUT/issue65-run-92-b.tgz.
set -u
mkdir -p .gpu292 && tar -C .gpu292 -xzf .gpu292z/c.tgz
echo "== a"
bash results/h200/issue65/class-run.sh .gpu292/a 16 230 run-92-a
echo "== b"
CUDA_DEVICE_MAX_CONNECTIONS=1 bash results/h200/issue65/class-run.sh .gpu292/a 16 230 run-92-b

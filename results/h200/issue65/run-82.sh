#!/usr/bin/env bash
# Issue 65, run 82 (one H200): run 80's change against the code before it, in one run: the class of
# 300 with --jobs 16 for 270 s with be18b20's grader and lab-mmm (A), then with those of run 80
# (B: CUDA contexts kept apart from ncu's batch's requests, gpu_lock::quiet). .gpu282z/c.tgz
# (a/bin, b/bin) carried. Into $OUT/issue65-run-82-a.tgz and $OUT/issue65-run-82-b.tgz.
set -u
mkdir -p .gpu282 && tar -C .gpu282 -xzf .gpu282z/c.tgz
for side in a b; do
  echo "== $side"
  bash results/h200/issue65/class-run.sh ".gpu282/$side" 16 270 "run-82-$side"
done

#!/usr/bin/env bash
# Issue 65, run 87 (one H200): fewer jobs, each slowed less by the others' CUDA contexts? The class
# of 300 for 250 s with --jobs 16 and then --jobs 12, this commit's grader and lab-mmm (.gpu286z/c.tgz,
# bin). Into $OUT/issue65-run-87-j16.tgz and $OUT/issue65-run-87-j12.tgz.
set -u
mkdir -p .gpu286 && tar -C .gpu286 -xzf .gpu286z/c.tgz
for jobs in 16 12; do
  echo "== --jobs $jobs"
  bash results/h200/issue65/class-run.sh .gpu286 "$jobs" 250 "run-87-j$jobs"
done

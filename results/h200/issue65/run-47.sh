#!/usr/bin/env bash
# Issue 65, run 47 (one H200), to run: the class of 300 with --jobs 32 for 540 s (the device's limit
# per call is 600) after run 46 stalled (checks held the GPU 60 s each in ncu, one after another):
# a measured run whose metrics differ from the week's usual ones (bulk-copy-naive's TMA bytes, ours)
# now runs under ncu with no other measured run of the grading run alive, and those of the usual ones
# beside each other (grading/src/gpu_lock.rs, metric_set). Look for: no check holding the GPU near
# 60 s, the same verdicts as run 10's --jobs 1, the rate. The bundle: the release grader and lab-mmm
# of this branch in .gpu253/bin (.gpu253z/c.tgz carried). Into $OUT/issue65-run-47.tgz.
set -u
tar xzf .gpu253z/c.tgz
bash results/h200/issue65/class-run.sh .gpu253 32 540 run-47

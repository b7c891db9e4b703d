#!/usr/bin/env bash
# Issue 65, run 94 (one H200): run 93 graded the class with the committed grader (one hardware queue
# per CUDA context) at 32.7 a minute past the first minute, 283 of 300 in 550 s, its cores 37% busy.
# With contexts cheaper, do more jobs now help where runs 63 and 65 found 24 slower than 16? The class
# of 300 for 150 s with run 93's bundle (.gpu293z/c.tgz), first with --jobs 24 (B), then --jobs 16
# (A): the later run has the warmer machine, so B goes first. Into $OUT/issue65-run-94-{b,a}.tgz.
set -u
mkdir -p .gpu293 && tar -C .gpu293 -xzf .gpu293z/c.tgz
echo "== b: --jobs 24"
bash results/h200/issue65/class-run.sh .gpu293 24 150 run-94-b 2>&1 | head -3
echo "== a: --jobs 16"
bash results/h200/issue65/class-run.sh .gpu293 16 150 run-94-a 2>&1 | head -3

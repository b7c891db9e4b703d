#!/usr/bin/env bash
# Issue 65, run 95 (one H200): run 94 found 24 jobs grading 46 a minute where
# 16 graded 30, once their first waves had ended. The whole class of 300 with --jobs 24 and the
# committed grader, for at most 550 s (run 94's rate gives about 440 s), with run 93's bundle
# (.gpu293z/c.tgz: bin/ with grader, lab-mmm, feedback and libcupti.so.13). Into
# $OUT/issue65-run-95.tgz; times.txt has how many were graded in each 30 s.
set -u
mkdir -p .gpu293 && tar -C .gpu293 -xzf .gpu293z/c.tgz
bash results/h200/issue65/class-run.sh .gpu293 24 550 run-95

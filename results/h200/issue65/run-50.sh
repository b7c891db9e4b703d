#!/usr/bin/env bash
# Issue 65, run 50 (one H200): the class of 300 with --jobs 32 for 300 s, as run 49, with the
# LAB_PHASES lines of 2e6555b: each phase's part of a check's hold of the GPU (cases, ncu), so that
# held-summary.py says which part to shorten. The bundle: the release grader and lab-mmm of c97fb9f
# in .gpu256/bin (.gpu256z/c.tgz carried).
set -u
tar xzf .gpu256z/c.tgz
bash results/h200/issue65/class-run.sh .gpu256 32 300 run-50

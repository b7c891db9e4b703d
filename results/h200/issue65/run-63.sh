#!/usr/bin/env bash
# Issue 65, run 63 (one H200): the class of 300 week-3 copies with the measured children started
# beside the cases (run 62's bundle, .gpu265): --jobs 16 for 150 s, as runs 60 and 61, then --jobs 24
# for 150 s.
set -u
tar xzf .gpu265z/c.tgz
bash results/h200/issue65/class-run.sh .gpu265 16 150 run-63-j16
bash results/h200/issue65/class-run.sh .gpu265 24 150 run-63-j24

#!/usr/bin/env bash
# Issue 65, run 83 (one H200): run 81's sweep again with the plot's legend above the lines (the y
# axis taller by the legend's rows, lab-mmm/src/sweep.rs). Release lab-mmm in .gpu283z/c.tgz (bin).
# Into $OUT/issue65-run-83.tgz.
set -u
bash results/h200/issue65/sweep-run.sh .gpu283z/c.tgz run-83

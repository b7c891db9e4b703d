#!/usr/bin/env bash
# Issue 65, run 81 (one H200): the sweep and its plot with step 18 as committed in be18b20 (sharing
# the last round out along k only past wgmma::MIN_IDLE_STAGES; run 78's sweep shared it out
# everywhere). Release lab-mmm in .gpu280z/c.tgz (bin). Into $OUT/issue65-run-81.tgz.
set -u
bash results/h200/issue65/sweep-run.sh .gpu280z/c.tgz run-81

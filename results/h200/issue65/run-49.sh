#!/usr/bin/env bash
# Issue 65, run 49 (one H200): the class of 300 with --jobs 32 for 300 s (what was left of the
# session's device time) after runs 46 to 48 stalled (measured runs holding the GPU 60 s each, one
# after another), with the measured child holding the GPU from its CUDA context to its last launch
# (grading::measure::alone) instead of around each kernel's launches; run 48's slots are not in it.
# Every 5 s how many ncu and lab-mmm processes are alive ($OUT/ncu-alive.txt). The bundle: the
# release grader and lab-mmm of this commit in .gpu255/bin (.gpu255z/c.tgz carried).
set -u
tar xzf .gpu255z/c.tgz
while sleep 5; do echo "$(date -u +%T) $(pgrep -xc ncu) ncu, $(pgrep -xc lab-mmm) lab-mmm"; done >"$OUT/ncu-alive.txt" &
watch=$!
bash results/h200/issue65/class-run.sh .gpu255 32 300 run-49
kill "$watch"

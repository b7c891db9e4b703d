#!/usr/bin/env bash
# Issue 65, run 52 (one H200): the class of 300 with --jobs 32 for 540 s, after run 51 showed where
# a check's hold went: a case's two correctness launches no longer hold the GPU (they are not
# timed), and the measured child makes its CUDA context before it takes the GPU and destroys it
# after. locks.py watches /proc/locks every 20 ms ($OUT/locks.tsv: the GPU's lock held shared or
# alone, and ncu's own). The bundle: the release grader and labs of this commit in .gpu258/bin
# (.gpu258z/c.tgz carried).
set -u
tar xzf .gpu258z/c.tgz
python3 results/h200/issue65/locks.py watch "$OUT/locks.tsv" 20 &
watcher=$!
bash results/h200/issue65/class-run.sh .gpu258 32 540 run-52
kill "$watcher"
gzip "$OUT/locks.tsv"

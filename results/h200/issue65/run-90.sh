#!/usr/bin/env bash
# Issue 65, run 90 (one H200): fewer waits for the GPU per check? A small case's 24 timed launches
# (its fresh inputs under 2^18 elements: five of week 3's six sizes) holding the GPU once for them
# all (common::timing::alone::together, lab-mmm's drawn_quickly) where each held it by itself. The
# class of 300 with --jobs 16 for 250 s with c9058df's grader and lab-mmm (A), then with this
# change's (B), in one run. .gpu290z/c.tgz (a/bin, b/bin) carried. Into $OUT/issue65-run-90-a.tgz
# and $OUT/issue65-run-90-b.tgz.
set -u
mkdir -p .gpu290 && tar -C .gpu290 -xzf .gpu290z/c.tgz
for side in a b; do
  echo "== $side"
  bash results/h200/issue65/class-run.sh ".gpu290/$side" 16 250 "run-90-$side"
done

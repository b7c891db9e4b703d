#!/usr/bin/env bash
# Issue 64, run 2 (one H200): the slides' programs as printed beside the labs again, with this
# checkout's compare.sh (a row whose program times nothing runs it once where compare.toml gives its
# arguments) and 9 cold runs a side instead of 5: one cold run of the German stream programs moved
# between 75 and 103 ms in run 1, on both sides. Labs from the bundle of run 1. Into
# $OUT/issue64-2.tgz.
set -u
work=$(mktemp -d)
tar -C "$work" -xzf .gpu103/bundle.tgz
logs=$(mktemp -d)
trap 'tar -C "$logs" -czf "$OUT/issue64-2.tgz" .' EXIT
COLD_RUNS=9 LABS=$work/gpu-bundle/bin WORK=$logs/compare-slides-work \
    bash scripts/compare.sh --originals reference/slides >"$logs/compare-slides.log" 2>"$logs/compare-slides.err"
rm -f "$logs"/compare-slides-work/*[^g]

#!/usr/bin/env bash
# Issue 65, run 97 (one H200): the one-at-a-time verdicts (--jobs 1) of the 23 kinds of the week-3
# class that run 10's --jobs 1 did not reach (s0015 to s0037, the first copy of each; the same
# files make-class.sh makes in every class), with run 93's bundle (the committed grader), so that
# every copy of the class of 300 is compared with a one-at-a-time verdict of its own kind;
# same-as-alone.sh compares a class run with them and run 10's.
# Into $OUT: j1.log, j1.csv and j1-checks.tgz (whatever was graded by the limit; a first call kept
# the outputs as files, of which a device call brings only a few back).
#   bash results/h200/issue65/run-97.sh SECONDS     (carry .gpu293z)
set -u
mkdir -p .gpu293 && tar -C .gpu293 -xzf .gpu293z/c.tgz
export LAB_BIN_DIR=$PWD/.gpu293/bin
work=$(mktemp -d)
bash scripts/make-class.sh 03-mmm-tiled 37 "$work/class" >/dev/null
mkdir "$work/rest"
for n in $(seq 15 37); do mv "$work"/class/s00"$n"-*.cu "$work/rest/"; done
nvidia-smi -L >"$OUT/gpu.txt"
timeout -k 10 "$1" bash assignments/grade.sh --jobs 1 03-mmm-tiled "$work/rest" \
  --out "$OUT/j1.csv" --keep "$work/j1-checks" 2>&1 | tee "$OUT/j1.log"
tar -C "$work" -czf "$OUT/j1-checks.tgz" j1-checks

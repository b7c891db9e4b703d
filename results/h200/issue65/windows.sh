#!/usr/bin/env bash
# Issue 65: how many submissions a class run graded in each 30 s, from grade.sh's log with the
# seconds since the class began on each line (class-run.sh's class-300.log, from run 65 on). With
# many jobs the first wave of checks ends past the first minute, which the rate past it then counts.
#
#   bash results/h200/issue65/windows.sh CLASS-LOG
set -u
[[ $# == 1 ]] || { echo "usage: windows.sh CLASS-LOG" >&2; exit 2; }
awk '$2 == "grade.sh:" && $3 == "graded" { n[int($1 / 30)]++; last = int($1 / 30) }
  END { for (w = 0; w <= last; w++) printf "%3d to %3d s: %d\n", 30 * w, 30 * w + 30, n[w] }' "$1"

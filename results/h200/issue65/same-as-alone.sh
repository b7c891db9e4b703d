#!/usr/bin/env bash
# Issue 65: class runs' kept outputs against the one-job (--jobs 1) verdict of each copy's kind:
# run 10's j1-checks (the first 14 kinds of the week-3 class) and run 97's (the other 23), so that
# every copy of a class of 300 is compared with its kind graded alone, none only with an earlier
# copy in its own run (same-verdicts.py kept-runs, times aside). Exit 1 if any differ.
#
#   bash results/h200/issue65/same-as-alone.sh RUN...   (each RUN with class-originals.txt and class-300-checks/)
set -u
here=$(dirname "$0")
alone=$(mktemp -d)
trap 'rm -rf "$alone"' EXIT
cp "$here"/run-10/j1-checks/* "$here"/run-97/j1-checks/* "$alone"/
rc=0
for run in "$@"; do
  echo "$run:"
  python3 "$here/same-verdicts.py" kept-runs "$run/class-originals.txt" "$alone" "$run/class-300-checks" || rc=1
done
exit $rc

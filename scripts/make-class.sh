#!/usr/bin/env bash
# Makes a class to grade from a week's test kernels (issue 65: a class graded in minutes):
#
#   bash scripts/make-class.sh WEEK COUNT OUT
#
# OUT (a folder that must not exist yet) gets COUNT submissions, the week's honest/, broken/ and
# adversarial/ .cu files (assignments/WEEK/, each kind sorted) taken in turn over and over:
# OUT/s0001-<name>.cu, OUT/s0002-<name>.cu ... Each copy begins with one added line,
# "// class copy N of WEEK/KIND/NAME", so that no two are equal. OUT/originals.txt has a line per
# copy: its file name, a tab, and KIND/NAME. Then, on a GPU machine:
#
#   bash assignments/grade.sh WEEK OUT --out grades.csv
#
#   -h, --help   this text
set -euo pipefail
caller=$PWD
cd "$(dirname "$0")/.."

fail() { echo "make-class.sh: $1" >&2; exit 2; }
if [[ ${1:-} == -h || ${1:-} == --help ]]; then
    sed -n '2,/^set -euo pipefail/p' "$0" | sed '$d; s/^# \{0,1\}//'
    exit 0
fi
[[ $# == 3 ]] || fail "usage: bash scripts/make-class.sh WEEK COUNT OUT (--help for more)"
week=$1 count=$2 out=$3
[[ $out == /* ]] || out=$caller/$out
[[ -n $week && -d assignments/$week && $week != */* ]] || fail "no week $week in assignments/"
# Four digits keep the copies in byte order, the order grade.sh grades them in.
[[ $count =~ ^[1-9][0-9]{0,3}$ ]] || fail "COUNT must be a whole number from 1 to 9999, not '$count'"
[[ ! -e $out ]] || fail "$out exists already: name a new folder"

originals=()
for kind in honest broken adversarial; do
    while IFS= read -r file; do originals+=("$kind/$file"); done < <(
        find "assignments/$week/$kind" -maxdepth 1 -type f -name '*.cu' -printf '%f\n' 2>/dev/null | LC_ALL=C sort
    )
done
((${#originals[@]} > 0)) || fail "assignments/$week has no honest/, broken/ or adversarial/ .cu files"

mkdir -p "$out"
for ((n = 1; n <= count; n++)); do
    original=${originals[(n - 1) % ${#originals[@]}]}
    copy=$(printf 's%04d-%s' "$n" "${original#*/}")
    { echo "// class copy $n of $week/$original"; cat "assignments/$week/$original"; } >"$out/$copy"
    printf '%s\t%s\n' "$copy" "$original" >>"$out/originals.txt"
done
echo "make-class.sh: $count submissions of $week in $out (from ${#originals[@]} files)"

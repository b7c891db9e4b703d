#!/usr/bin/env bash
# Grades a folder of submissions for one week into CSV on stdout:
#
#   bash assignments/grade.sh 02-mmm-ab submissions/ > grades.csv
#
# A submission is submissions/<student>.cu or submissions/<student>/<any name>.cu (the first .cu in
# the folder). Each runs through the week's lab with --kernel-source FILE --check --csv: one row per
# student with every case's PASS / FAIL / FAULT, how many passed, and the geometric mean of the
# student's time over ours (cases that passed). A file that does not compile gets "compile error" and
# the first line nvcc printed. Needs a GPU. The labs come from LAB_BIN_DIR (a folder with the lab
# binaries, e.g. gpu-bundle/bin) or else from `cargo run --release`.
set -uo pipefail
cd "$(dirname "$0")/.."

if [[ $# -ne 2 ]]; then
    echo "usage: bash assignments/grade.sh WEEK SUBMISSIONS  (WEEK: 01-simpson, 02-mmm-ab, 03-mmm-tiled, 04-constant-tracer, 07-dynamic-parallelism)" >&2
    exit 2
fi
week=$1 submissions=$2
case $week in
    01-simpson) lab=lab-simpson; week_args=() ;;
    02-mmm-ab) lab=lab-mmm; week_args=(--kernel naive) ;;
    03-mmm-tiled) lab=lab-mmm; week_args=(--kernel tiled) ;;
    04-constant-tracer) lab=lab-constant-tracer; week_args=() ;;
    07-dynamic-parallelism) lab=lab-dynamic-parallel; week_args=() ;;
    *) echo "grade.sh: no kernel week $week (01-simpson, 02-mmm-ab, 03-mmm-tiled, 04-constant-tracer, 07-dynamic-parallelism)" >&2; exit 2 ;;
esac
[[ -d $submissions ]] || { echo "grade.sh: $submissions is not a folder" >&2; exit 2; }

if [[ -n ${LAB_BIN_DIR:-} ]]; then
    run_lab=("$LAB_BIN_DIR/$lab")
else
    cargo build --release -q -p "$lab" || exit 1
    run_lab=("target/release/$lab")
fi

header_done=0
for entry in "$submissions"/*; do
    student=$(basename "$entry" .cu)
    if [[ -d $entry ]]; then
        file=$(find "$entry" -maxdepth 1 -name '*.cu' | sort | head -n 1)
    else
        file=$entry
    fi
    [[ $file == *.cu && -f $file ]] || { echo "grade.sh: $entry: no .cu file, skipped" >&2; continue; }
    output=$("${run_lab[@]}" --kernel-source "$file" "${week_args[@]}" --check --csv 2>/tmp/grade-stderr.$$)
    if [[ $(wc -l <<<"$output") -ge 2 ]] && head -n 1 <<<"$output" | grep -q '^file,'; then
        if [[ $header_done == 0 ]]; then
            echo "student,$(head -n 1 <<<"$output")"
            header_done=1
        fi
        echo "\"$student\",$(sed -n 2p <<<"$output")"
    else
        reason=$(grep -m 1 -E 'error' /tmp/grade-stderr.$$ | tr -d '"' | cut -c 1-200)
        echo "\"$student\",\"$file\",compile error or no result: $reason"
    fi
done
rm -f /tmp/grade-stderr.$$

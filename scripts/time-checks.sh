#!/usr/bin/env bash
# Runs on a GPU machine, from the repository root, with what scripts/gpu-bundle.sh built: how long each
# week's `--check` takes on our solution, without and with `--sanitize` (what a teacher plans grading
# by), then assignments/grade.sh on week 3's template and broken kernels, with one job and with
# --jobs 2, which must give the same CSV. Logs and the CSVs go to RESULTS (first argument, else
# gpu-bundle/check-results); a table ends the output. Naming weeks (and `grade`) after RESULTS runs only
# those, so that the whole can be split over shorter sessions on a shared GPU machine.
#
#   bash gpu-bundle/time-checks.sh [RESULTS [WEEK... grade]]
#   bash gpu-bundle/time-checks.sh results 01-simpson 03-mmm-tiled grade
set -uo pipefail
bundle=$(cd "$(dirname "$0")" && pwd)
export LAB_BIN_DIR="$bundle/bin"
results=${1:-$bundle/check-results}
mkdir -p "$results"
shift $(($# > 0 ? 1 : 0))
only=("$@")
# Whether this run includes WHAT (a week's folder name, or grade): all do when none is named.
wanted() {
    [[ ${#only[@]} == 0 || " ${only[*]} " == *" $1 "* ]]
}

# week|lab|our solution|the week's flags
weeks=(
    "01-simpson|lab-simpson|kernels/cuda/simpson.cu|"
    "02-mmm-ab|lab-mmm|kernels/cuda/mmm.cu|--kernel naive"
    "03-mmm-tiled|lab-mmm|kernels/cuda/mmm.cu|--kernel tiled"
    "04-constant-tracer|lab-constant-tracer|kernels/cuda/tracer.cu|"
    "07-dynamic-parallelism|lab-dynamic-parallel|kernels/cuda/adaptive_simpson.cu|"
)
rows=()
failed=0

# One --check run: its log, and a row with the verdict line and the wall time.
time_check() {
    local week=$1 lab=$2 file=$3 flags=$4 mode=$5 extra=()
    [[ $mode == sanitize ]] && extra=(--sanitize)
    local log="$results/$week-$mode.log" start
    start=$(date +%s%N)
    # shellcheck disable=SC2086
    "$bundle/bin/$lab" --kernel-source "$file" $flags --check "${extra[@]}" >"$log" 2>&1
    local rc=$? tenths=$((($(date +%s%N) - start) / 100000000))
    local verdict
    verdict=$(grep -m 1 -E 'Solution is correct|cases failed|error' "$log" | cut -c 1-60)
    [[ $rc == 0 ]] || failed=$((failed + 1))
    rows+=("$week|$mode|$((tenths / 10)).$((tenths % 10))|${verdict:-no verdict (exit $rc)}")
}

for entry in "${weeks[@]}"; do
    IFS='|' read -r week lab file flags <<<"$entry"
    wanted "$week" || continue
    time_check "$week" "$lab" "$file" "$flags" plain
    time_check "$week" "$lab" "$file" "$flags" sanitize
done

# Every field but the time ratio (timings differ between runs) must be the same, row by row, except
# in the rows of the two kernels without a barrier, whose verdicts depend on the threads' timing, and
# of printf-every-thread, whose last cases run into the time limit wherever it falls.
same_csv() {
    python3 - "$1" "$2" <<'PY'
import csv, sys
def rows(path):
    table = list(csv.reader(open(path, newline="")))
    ratio = table[0].index("time ratio")
    racy = ("missing-syncthreads", "missing-second-syncthreads", "printf-every-thread")
    return [row[:ratio] + row[ratio + 1:] for row in table if row[0] not in racy]
one, two = rows(sys.argv[1]), rows(sys.argv[2])
sys.exit(0 if one == two and len(one) > 1 and len({len(row) for row in one}) == 1 else 1)
PY
}

# grade.sh on week 3: our solution, the template and every broken kernel, one job and two, a minute
# at most per submission (printf-every-thread would print for many minutes at the week's cases).
grade_week_3() {
    local submissions one_job two_jobs start same
    submissions=$(mktemp -d)
    cp kernels/cuda/mmm.cu "$submissions/solution, ours.cu"
    cp assignments/03-mmm-tiled/mmm.cu "$submissions/template.cu"
    cp assignments/03-mmm-tiled/broken/*.cu "$submissions/"
    start=$(date +%s)
    bash assignments/grade.sh --limit 60 03-mmm-tiled "$submissions" >"$results/grades-1-job.csv" 2>"$results/grades-1-job.log"
    one_job=$(($(date +%s) - start))
    start=$(date +%s)
    bash assignments/grade.sh --limit 60 --jobs 2 03-mmm-tiled "$submissions" >"$results/grades-2-jobs.csv" 2>"$results/grades-2-jobs.log"
    two_jobs=$(($(date +%s) - start))
    rm -rf "$submissions"
    if same_csv "$results/grades-1-job.csv" "$results/grades-2-jobs.csv"; then
        same="same CSV but the time ratios"
    else
        same="DIFFERENT"
        failed=$((failed + 1))
    fi
    rows+=("03-mmm-tiled|grade.sh, 1 job|$one_job|$(($(wc -l <"$results/grades-1-job.csv") - 1)) rows")
    rows+=("03-mmm-tiled|grade.sh --jobs 2|$two_jobs|$same")
}

if wanted grade; then
    grade_week_3
fi

echo
echo "| week | run | wall s | verdict |"
echo "|------|-----|--------|---------|"
for row in "${rows[@]}"; do
    IFS='|' read -r week mode seconds verdict <<<"$row"
    echo "| $week | $mode | $seconds | $verdict |"
done
echo
[[ -f $results/grades-1-job.csv ]] && cat "$results/grades-1-job.csv"
echo "checks: $failed failed"
[[ $failed == 0 ]]

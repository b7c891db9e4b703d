#!/usr/bin/env bash
# Grades a folder of submissions for one week (issue 62: the grading itself is the Rust program
# `grader`, crate grader/; this only finds it and runs it with the same command line):
#
#   bash assignments/grade.sh [OPTIONS] WEEK SUBMISSIONS --out grades.csv
#   bash assignments/grade.sh --dry-run WEEK SUBMISSIONS --out compiles.csv     (no GPU needed)
#   bash assignments/grade.sh --slurm [OPTIONS] WEEK SUBMISSIONS OUT            (a Slurm job array)
#   bash assignments/grade.sh --collect OUT --out grades.csv
#   bash assignments/grade.sh --help                                            (every option)
#
# The grader is GRADER where that is set, else LAB_BIN_DIR/grader (gpu-bundle/bin, which
# bash scripts/gpu-bundle.sh builds, beside the labs), else cargo's release build of this repository.
set -euo pipefail
repository=$(cd "$(dirname "$0")/.." && pwd)
export GRADE_REPOSITORY=$repository
if [[ -n ${GRADER:-} ]]; then
    grader=$GRADER
elif [[ -n ${LAB_BIN_DIR:-} && -x $LAB_BIN_DIR/grader ]]; then
    grader=$LAB_BIN_DIR/grader
else
    echo "grade.sh: building: cargo build --release -p grader (minutes the first time)" >&2
    (cd "$repository" && cargo build --release -q -p grader) || { echo "grade.sh: cargo build --release -p grader failed" >&2; exit 1; }
    grader=$repository/target/release/grader
fi
exec "$grader" "$@"

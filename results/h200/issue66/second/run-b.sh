#!/usr/bin/env bash
# Issue 66 on the GPU, part B: week 6's legal-case test and program tests, the issue's table cases
# through --check, and grade.sh with small cases (rows not judged, the score) for weeks 5 and 6.
set -u
export LAB_BIN_DIR=$PWD/.gpu66/bin
t() { local name=$1; shift; { echo "\$ $*"; start=$(date +%s%N); "$@"; code=$?; echo "exit $code, wall $(( ($(date +%s%N) - start) / 1000000 )) ms"; } >"$OUT/$name.log" 2>&1; }
LAB_LEGAL_CASES=16 t week6-tests .gpu66/tests/mapped --include-ignored --test-threads 1 --nocapture week_6
printf '4096 4 1\n1000 7 2\n100000 64 3\n1 1 4\n' > "$OUT/week5-small.txt"
printf '3 7 1\n16 32 2\n64 8 3\n' > "$OUT/week56-tiny-products.txt"
t week5-pipeline-small "$LAB_BIN_DIR/lab-streams" --program-source reference/weeks/pipeline.cu --check --cases "$OUT/week5-small.txt"
t week5-mmm-tiny "$LAB_BIN_DIR/lab-streams" --program mmm-streamed --program-source reference/weeks/mmm_streamed.cu --check --cases "$OUT/week56-tiny-products.txt"
t week6-mmm-tiny "$LAB_BIN_DIR/lab-mapped" --program mmm-streamed-and-pinned --program-source reference/weeks/mmm_streamed_and_pinned.cu --check --cases "$OUT/week56-tiny-products.txt"
subs=$(mktemp -d); cp reference/weeks/pipeline.cu "$subs/ours.cu"; cp assignments/05-streams/pipeline.cu "$subs/starter.cu"; cp assignments/05-streams/broken/one-stream.cu "$subs/one-stream.cu"
t week5-grade bash assignments/grade.sh --cases "$OUT/week5-small.txt" 05-streams "$subs"
subs=$(mktemp -d); cp reference/weeks/mmm_streamed_and_pinned.cu "$subs/ours.cu"; cp assignments/06-pinned-mapped/mmm_streamed_and_pinned.cu "$subs/starter.cu"
t week6-grade bash assignments/grade.sh --cases "$OUT/week56-tiny-products.txt" 06-mmm-streamed-and-pinned "$subs"
t week5-default-ours "$LAB_BIN_DIR/lab-streams" --program-source reference/weeks/pipeline.cu --check
# The same check where no solution of ours is found (a copy of the lab outside the repository, run
# from elsewhere): the canary's cost is the difference.
alone=$(mktemp -d); mkdir -p "$alone/a/b"; cp "$LAB_BIN_DIR/lab-streams" "$alone/a/b/"; source=$PWD/reference/weeks/pipeline.cu
(cd "$alone" && t week5-default-without-ours "$alone/a/b/lab-streams" --program-source "$source" --check)

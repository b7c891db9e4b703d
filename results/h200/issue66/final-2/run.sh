#!/usr/bin/env bash
# Issue 66 on the GPU, final run 2 of 2: week 1 (its GPU tests with 300 random legal cases, the issue's
# cases through --check and grade.sh), weeks 2, 3, 4 and 7's random legal cases, the issue's program
# cases through --check and grade.sh (rows not judged, the score), the canary's cost; into $OUT/logs.tgz.
set -u
mkdir -p .gpu66/b && tar -C .gpu66/b -xzf .gpu66/bundle.tgz
export LAB_BIN_DIR=$PWD/.gpu66/b/bin B=$PWD/.gpu66/b/bin T=$PWD/.gpu66/b/tests
logs=$(mktemp -d)
t() { local name=$1; shift; { echo "\$ $*"; start=$(date +%s%N); "$@"; code=$?; echo "exit $code, wall $(( ($(date +%s%N) - start) / 1000000 )) ms"; } >"$logs/$name.log" 2>&1; tar -C "$logs" -czf "$OUT/logs.tgz" .; }
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; uname -r; } > "$logs/gpu.txt"
printf 'sin 100 200 999999 999\nexp -700 709 999999 999\npeak 0.29 0.31 65536 512\npi -1000000 1000000 67108864 1024\n' > "$logs/week1-cases.txt"
# Week 6's legal-case test again with the seed whose case 22 (57 products of N 100) failed overlap in
# final run 1, under the margins set after it.
LAB_LEGAL_SEED=1795926012983914437 LAB_LEGAL_CASES=20 t week6-legal-again $T/mapped --include-ignored --test-threads 1 --nocapture week_6_our_solutions
LAB_LEGAL_CASES=300 t week1-random $T/simpson --include-ignored --test-threads 1 --nocapture week_1_random
t week1-issue-cases $B/lab-simpson --kernel-source kernels/cuda/simpson.cu --check --cases "$logs/week1-cases.txt"
subs=$(mktemp -d); cp kernels/cuda/simpson.cu "$subs/ours.cu"; cp assignments/01-simpson/simpson.cu "$subs/starter.cu"; cp assignments/01-simpson/broken/off-by-one.cu "$subs/off-by-one.cu"
t week1-grade bash assignments/grade.sh --cases "$logs/week1-cases.txt" 01-simpson "$subs"
LAB_LEGAL_CASES=6 t weeks23-legal $T/mmm --include-ignored --test-threads 1 --nocapture weeks_2_and_3_random_legal
LAB_LEGAL_CASES=6 t week4-legal $T/tracer --include-ignored --test-threads 1 --nocapture week_4_random_legal
LAB_LEGAL_CASES=6 t week7-legal $T/dynamic --include-ignored --test-threads 1 --nocapture week_7_random_legal
printf '4096 4 1\n1000 7 2\n100000 64 3\n1 1 4\n5007586 35 5\n' > "$logs/week5-small.txt"
printf '3 7 1\n16 32 2\n64 8 3\n' > "$logs/week56-tiny-products.txt"
t week5-pipeline-small $B/lab-streams --program-source reference/weeks/pipeline.cu --check --cases "$logs/week5-small.txt"
t week5-mmm-tiny $B/lab-streams --program mmm-streamed --program-source reference/weeks/mmm_streamed.cu --check --cases "$logs/week56-tiny-products.txt"
t week6-mmm-tiny $B/lab-mapped --program mmm-streamed-and-pinned --program-source reference/weeks/mmm_streamed_and_pinned.cu --check --cases "$logs/week56-tiny-products.txt"
subs=$(mktemp -d); cp reference/weeks/pipeline.cu "$subs/ours.cu"; cp assignments/05-streams/pipeline.cu "$subs/starter.cu"; cp assignments/05-streams/broken/one-stream.cu "$subs/one-stream.cu"
t week5-grade bash assignments/grade.sh --cases "$logs/week5-small.txt" 05-streams "$subs"
subs=$(mktemp -d); cp reference/weeks/mmm_streamed_and_pinned.cu "$subs/ours.cu"; cp assignments/06-pinned-mapped/mmm_streamed_and_pinned.cu "$subs/starter.cu"
t week6-grade bash assignments/grade.sh --cases "$logs/week56-tiny-products.txt" 06-mmm-streamed-and-pinned "$subs"
# The canary's cost: week 5's and week 6's default checks with our solution found, then where none is
# (a copy of the lab outside the repository, run from elsewhere).
alone=$(mktemp -d); mkdir -p "$alone/a/b"; cp $B/lab-streams $B/lab-mapped "$alone/a/b/"
for run in 1; do
    t week5-default-with-ours-$run $B/lab-streams --program-source reference/weeks/pipeline.cu --check
    (cd "$alone" && t week5-default-without-ours-$run "$alone/a/b/lab-streams" --program-source "$OLDPWD/reference/weeks/pipeline.cu" --check)
    t week6-default-with-ours-$run $B/lab-mapped --program-source reference/weeks/zero_copy.cu --check
    (cd "$alone" && t week6-default-without-ours-$run "$alone/a/b/lab-mapped" --program-source "$OLDPWD/reference/weeks/zero_copy.cu" --check)
done
tar -C "$logs" -czf "$OUT/logs.tgz" .
tail -n 2 "$logs"/*.log

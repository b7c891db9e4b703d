#!/usr/bin/env bash
# Issue 61 on the GPU, run 1 (bundle in .gpu80/, and .gpu78/'s lab-mmm from before this change): week 3
# measured on every telling case with every kind of global read counted, fresh inputs on every
# timed launch, the PTX read statement by statement; week 4's generic loads counted. STAGE picks:
#   direct  each new red-team kernel, ours and two honest kernels through --check, before and now
#   tests   the GPU tests of weeks 4 and 7 that this change touches
#   mmm     lab-mmm's GPU tests but the random legal cases
# Into $OUT/every-case-1-STAGE.tgz.
set -u
stage=$1
mkdir -p .gpu80/b .gpu78/b && tar -C .gpu80/b -xzf .gpu80/bundle.tgz && tar -C .gpu78/b -xzf .gpu78/bundle.tgz
export LAB_BIN_DIR=$PWD/.gpu80/b/bin T=$PWD/.gpu80/b/tests
NOW=$PWD/.gpu80/b/bin/lab-mmm BEFORE=$PWD/.gpu78/b/bin/lab-mmm
logs=$(mktemp -d)
t() { local name=$1 limit=$2; shift 2; { echo "\$ $*"; start=$(date +%s%N); timeout "$limit" "$@"; code=$?; echo "exit $code, wall $(( ($(date +%s%N) - start) / 1000000 )) ms"; } >"$logs/$name.log" 2>&1; tar -C "$logs" -czf "$OUT/every-case-1-$stage.tgz" .; }
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; uname -r; date -u; } > "$logs/gpu.txt"
case $stage in
direct)
    for file in kernels/cuda/mmm.cu assignments/03-mmm-tiled/honest/transposed-b-tile.cu assignments/03-mmm-tiled/honest/padded-tiles.cu; do
        name=$(basename "$file" .cu)
        t "$name-before" 60 "$BEFORE" --kernel-source "$file" --kernel tiled --check
        t "$name-now" 60 "$NOW" --kernel-source "$file" --kernel tiled --check
    done
    for name in tiles-only-where-measured atomic-reads asm-generic-loads replays-its-product; do
        t "$name-before" 90 "$BEFORE" --kernel-source "assignments/03-mmm-tiled/adversarial/$name.cu" --kernel tiled --check
        t "$name-now" 90 "$NOW" --kernel-source "assignments/03-mmm-tiled/adversarial/$name.cu" --kernel tiled --check
    done
    printf '1 1 1 f64 1\n100 7 129 f32 2\n255 257 256 f64 3\n' > "$logs/chatty-cases.txt"
    t printf-every-thread-now 120 "$NOW" --kernel-source assignments/03-mmm-tiled/broken/printf-every-thread.cu --kernel tiled --check --cases "$logs/chatty-cases.txt"
    t generic-constant-pointer-now 90 "$LAB_BIN_DIR/lab-constant-tracer" --kernel-source assignments/04-constant-tracer/adversarial/generic-constant-pointer.cu --check
    ;;
tests)
    t week4-tests 400 "$T/tracer" --include-ignored --test-threads 1 week_4
    t week4-red-team 100 "$T/tracer" --include-ignored --test-threads 1 the_week_4_red_team
    t week7-red-team 200 "$T/dp" --include-ignored --test-threads 1 the_week_7_red_team
    ;;
mmm)
    t mmm-tests 560 "$T/mmm" --include-ignored --test-threads 1 --skip random_legal_cases
    ;;
esac
tail -n 2 "$logs"/*.log | grep -v "^$"

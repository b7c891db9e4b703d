#!/usr/bin/env bash
# Issue 64, run 1 (one H200): the new measurements and the Greek programs, from the GPU bundle
# (scripts/gpu-bundle.sh --no-dev, packed as .gpu103/bundle.tgz):
# - the GPU tests of lab-memory and lab-mapped (all) and lab-mmm's tile example;
# - compute-sanitizer memcheck on the latency chase, the order-within-a-line copy, the strided mapped
#   reads and the traced tile example;
# - the runs the READMEs quote: lab-memory --mode latency / coalescing / device-query, lab-mmm
#   --tile-example, the default lab-memory run timed;
# - compare.sh (ours beside the labs) and compare.sh --originals reference/slides (the slides' programs
#   as printed, Greek tiled-matmul.cu among them), with their outputs.
# PART=labs runs all but the compare tables, PART=compare only those (each fits one device call).
# Logs into $OUT/issue64-1-$PART.tgz.
set -u
work=$(mktemp -d)
tar -C "$work" -xzf .gpu103/bundle.tgz
bundle=$work/gpu-bundle
export LAB_BIN_DIR=$bundle/bin
bin=$bundle/bin
logs=$(mktemp -d)
part=${PART:-all}
save() { tar -C "$logs" -czf "$OUT/issue64-1-$part.tgz" .; }
trap save EXIT
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; date -u; } >"$logs/gpu.txt"
step() { echo "== $* ($(date -u +%T))" >>"$logs/steps.txt"; }

if [[ $part != compare ]]; then
step tests
"$bundle/tests/lab-memory-gpu" --include-ignored --test-threads=1 >"$logs/test-lab-memory.log" 2>&1
"$bundle/tests/lab-mapped-gpu" --include-ignored --test-threads=1 >"$logs/test-lab-mapped.log" 2>&1
"$bundle/tests/lab-mmm-gpu" --include-ignored --test-threads=1 tile_example >"$logs/test-lab-mmm-tile.log" 2>&1
save

step sanitizer
san=/usr/local/cuda/bin/compute-sanitizer
$san --tool memcheck "$bin/lab-memory" --mode latency --repetitions 2 >"$logs/sanitize-latency.log" 2>&1
$san --tool memcheck "$bin/lab-memory" --mode coalescing --buffer-bytes 4MiB --repetitions 1 >"$logs/sanitize-coalescing.log" 2>&1
$san --tool memcheck "$bin/lab-mapped" --size 64 --count 2 --elements 3079 --strided-elements 3079 >"$logs/sanitize-mapped.log" 2>&1
$san --tool memcheck "$bin/lab-mmm" --tile-example >"$logs/sanitize-tile-example.log" 2>&1
save

step readme runs
"$bin/lab-memory" --mode latency >"$logs/latency.log" 2>&1
"$bin/lab-memory" --mode latency --seed 7 >"$logs/latency-seed-7.log" 2>&1
"$bin/lab-memory" --mode coalescing >"$logs/coalescing.log" 2>&1
"$bin/lab-memory" --mode device-query >"$logs/device-query.log" 2>&1
"$bin/lab-mmm" --tile-example >"$logs/tile-example.log" 2>&1
{ /usr/bin/time -f "wall %e s" "$bin/lab-memory" >/dev/null; } 2>"$logs/default-time.log"
save
fi

if [[ $part != labs ]]; then
step compare
WORK=$logs/compare-work bash "$bundle/compare.sh" >"$logs/compare.log" 2>"$logs/compare.err"
save
WORK=$logs/compare-slides-work bash "$bundle/compare.sh" --originals "$bundle/reference/slides" >"$logs/compare-slides.log" 2>"$logs/compare-slides.err"
rm -f "$logs"/compare-*work/*[^g] 2>/dev/null   # the binaries: keep the logs
fi
step done

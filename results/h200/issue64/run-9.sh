#!/usr/bin/env bash
# Issue 64, run 9 (one H200): the streamed programs under --as-printed now make their streams inside the
# timed window, as the slides' loop does (matrix::batch::RunStreams, shared by lab-streams, lab-pinned
# and lab-mapped). Their GPU tests; the labs' --as-printed and warm runs; compare.sh's slides table for
# the COUNT-product rows (the slides' programs as printed beside the labs' --as-printed, nine cold runs
# a side) and ours beside the labs (warm). Binaries in .gpu110/ (bin, tests), copied where compare.sh
# looks in a checkout (target/release). Into $OUT/issue64-9.tgz.
set -u
c=.gpu110
logs=$(mktemp -d)
trap 'tar -C "$logs" -czf "$OUT/issue64-9.tgz" .' EXIT
t() { timeout "$@"; }
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; date -u; } >"$logs/gpu.txt"
mkdir -p target/release /work/main/target/release
cp $c/bin/* target/release/; cp $c/bin/* /work/main/target/release/ 2>/dev/null
t 120 $c/tests/lab-streams-gpu --include-ignored --test-threads=1 as_printed_mmm_streamed the_three_matrix_programs >"$logs/run-9-test-lab-streams.log" 2>&1
t 120 $c/tests/lab-pinned-gpu --include-ignored --test-threads=1 >"$logs/run-9-test-lab-pinned.log" 2>&1
t 120 $c/tests/lab-mapped-gpu --include-ignored --test-threads=1 mapped_products vector_add strided_reads zero_copy_computes >"$logs/run-9-test-lab-mapped.log" 2>&1
t 60 $c/tests/matrix-gpu --include-ignored --test-threads=1 >"$logs/run-9-test-matrix.log" 2>&1
t 60 $c/bin/lab-streams --mode mmm --as-printed --size 33 --count 3 >"$logs/streamed-as-printed-33.log" 2>&1
t 60 $c/bin/lab-pinned --as-printed --size 100 --count 3 --no-sweep >"$logs/pinned-as-printed-100.log" 2>&1
t 60 $c/bin/lab-mapped --as-printed --size 1024 --count 10 >"$logs/mapped-as-printed-1024.log" 2>&1
WORK=$logs/compare-slides-work t 330 bash scripts/compare.sh --originals reference/slides --only '^mmm( \(2048|-without|-streamed|-mapped)' >"$logs/compare-slides-streams.log" 2>"$logs/compare-slides-streams.err"
WORK=$logs/compare-work t 120 bash scripts/compare.sh --only '^mmm( \(2048|-without|-streamed|-mapped)' >"$logs/compare-streams.log" 2>"$logs/compare-streams.err"
rm -f "$logs"/compare-*work/*[^g] 2>/dev/null

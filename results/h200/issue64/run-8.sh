#!/usr/bin/env bash
# Issue 64, run 8 (one H200): after run 7. lab-memory's GPU tests with the small-word test's length
# fixed, --mode transactions with the third row renamed (a table larger than L1), both also built for
# sm_75 alone; lab-mmm's tile-example test (it starts the lab binary, which run 7 did not place where
# the test looks) and, after lab-mmm/src/ladder.rs was split (issue 65, item 2), the ladder's GPU
# tests. Binaries in .gpu109/ (bin, tests, sm75). Into $OUT/issue64-8.tgz.
set -u
c=.gpu109
logs=$(mktemp -d)
trap 'tar -C "$logs" -czf "$OUT/issue64-8.tgz" .' EXIT
t() { timeout "$@"; }
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; date -u; } >"$logs/gpu.txt"
# The GPU tests that start a lab find it where cargo built it (CARGO_BIN_EXE_<lab>).
for d in target/release target/arch-sm_75/release; do
  mkdir -p "/work/main/$d" && cp $c/$( [[ $d == *sm_75* ]] && echo sm75/ )bin/lab-mmm "/work/main/$d/" 2>>"$logs/setup.txt"
done
t 60 $c/bin/lab-memory --mode transactions >"$logs/transactions.log" 2>&1
t 60 $c/bin/lab-memory --mode transactions --seed 5 >"$logs/transactions-seed-5.log" 2>&1
t 60 $c/sm75/bin/lab-memory --mode transactions >"$logs/sm75-transactions.log" 2>&1
t 120 $c/tests/lab-memory-gpu --include-ignored --test-threads=1 >"$logs/run-8-test-lab-memory.log" 2>&1
t 120 $c/sm75/tests/lab-memory-gpu --include-ignored --test-threads=1 >"$logs/run-8-sm75-test-lab-memory.log" 2>&1
t 200 $c/tests/lab-mmm-gpu --include-ignored --test-threads=1 tile_example every_step_of_the_ladder split_k hopper_steps cublas_in_tf32 every_unroll_variant every_kernel_precision >"$logs/run-8-test-lab-mmm.log" 2>&1
t 120 $c/sm75/tests/lab-mmm-gpu --include-ignored --test-threads=1 tile_example every_step_of_the_ladder split_k hopper_steps every_unroll_variant >"$logs/run-8-sm75-test-lab-mmm.log" 2>&1
t 120 $c/bin/lab-mmm --ladder --size 1000 777 1531 >"$logs/ladder-awkward.log" 2>&1
t 200 $c/bin/lab-mmm --ladder >"$logs/ladder-4096.log" 2>&1

#!/usr/bin/env bash
# Issue 64, run 7 (two H200s of one host, nvidia-h200-x2): the remaining sub-claims. lab-memory's
# words under 32 bits and --mode transactions (L1 lines against L2 sectors, with counters), lab-mmm's
# --unroll (with the SASS of each variant) and --reads (loads per element of C counted by ncu),
# lab-mapped --too-small, lab-pinned --flags with the second context on GPU 1 on its own host thread,
# lab-streams' French programs as printed; the GPU tests of all five (also built for sm_75 alone), and
# the dev-profile default runs timed. Binaries in .gpu108/ (bin, dev, tests, sm75, kernels). Into
# $OUT/issue64-7.tgz.
set -u
c=.gpu108
logs=$(mktemp -d)
trap 'tar -C "$logs" -czf "$OUT/issue64-7.tgz" .' EXIT
export NCU=/usr/local/cuda/bin/ncu
t() { timeout "$@"; }
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; date -u; } >"$logs/gpu.txt"
# lab-memory
t 120 $c/bin/lab-memory --mode coalescing >"$logs/run-7-coalescing.log" 2>&1
t 60 $c/bin/lab-memory --mode transactions >"$logs/transactions.log" 2>&1
t 60 $c/bin/lab-memory --mode transactions --seed 5 >"$logs/transactions-seed-5.log" 2>&1
t 120 $c/bin/lab-memory --mode transactions --repetitions 1 --counters >"$logs/transactions-counters.log" 2>&1
t 120 $c/bin/lab-memory --mode latency >"$logs/run-7-latency.log" 2>&1
t 120 $c/tests/lab-memory-gpu --include-ignored --test-threads=1 >"$logs/run-7-test-lab-memory.log" 2>&1
t 120 $c/sm75/tests/lab-memory-gpu --include-ignored --test-threads=1 >"$logs/run-7-sm75-test-lab-memory.log" 2>&1
t 60 $c/sm75/bin/lab-memory --mode transactions >"$logs/sm75-transactions.log" 2>&1
t 120 /usr/local/cuda/bin/compute-sanitizer --tool memcheck $c/bin/lab-memory --mode transactions --repetitions 1 >"$logs/sanitize-transactions.log" 2>&1
# lab-mmm
t 60 $c/bin/lab-mmm --unroll >"$logs/unroll-1024.log" 2>&1
t 90 $c/bin/lab-mmm --unroll --size 4096 >"$logs/unroll-4096.log" 2>&1
t 90 $c/bin/lab-mmm --reads --size 1024 >"$logs/reads-1024.log" 2>&1
t 90 $c/bin/lab-mmm --reads --size 1000 >"$logs/reads-1000.log" 2>&1
t 120 $c/tests/lab-mmm-gpu --include-ignored --test-threads=1 every_unroll_variant every_kernel_precision tile_example >"$logs/run-7-test-lab-mmm.log" 2>&1
t 120 $c/sm75/tests/lab-mmm-gpu --include-ignored --test-threads=1 every_unroll_variant tile_example >"$logs/run-7-sm75-test-lab-mmm.log" 2>&1
t 60 $c/sm75/bin/lab-mmm --unroll >"$logs/sm75-unroll-1024.log" 2>&1
mkdir -p "$logs/unroll-sass"
for bs in 16 32; do for v in "" _unroll1 _no_pragma; do
  name=mmm_bs${bs}${v}; f=$c/kernels/$name.sm_90.fatbin
  /usr/local/cuda/bin/cuobjdump -sass "$f" >"$logs/unroll-sass/$name.sm_90.sass" 2>&1
  awk -v file="$name" '
    /Function : /{fn=$3}
    fn ~ /^mmm_f(32|64)$/ && /\/\*[0-9a-f]+\*\//{ n[fn]++
      if ($0 ~ /[ \t]BRA[ .;]/) bra[fn]++; if ($0 ~ /[ \t]FFMA[ .]/) ffma[fn]++; if ($0 ~ /[ \t]DFMA[ .]/) dfma[fn]++ }
    END{for (f in n) printf "%-24s %-8s instructions %5d  BRA %3d  FFMA %4d  DFMA %4d\n", file, f, n[f], bra[f]+0, ffma[f]+0, dfma[f]+0}' \
    "$logs/unroll-sass/$name.sm_90.sass"
done; done | sort >"$logs/unroll-sass-counts.txt" 2>&1
# lab-mapped
t 60 $c/bin/lab-mapped --too-small >"$logs/too-small.log" 2>&1
t 60 $c/bin/lab-mapped --too-small --elements 100000000 --seed 3 >"$logs/too-small-100000000.log" 2>&1
t 120 $c/bin/lab-mapped >"$logs/run-7-mapped-default.log" 2>&1
t 120 $c/tests/lab-mapped-gpu --include-ignored --test-threads=1 mapped_products vector_add strided_reads unified zero_copy_computes >"$logs/run-7-test-lab-mapped.log" 2>&1
t 120 $c/sm75/tests/lab-mapped-gpu --include-ignored --test-threads=1 strided_reads zero_copy_computes >"$logs/run-7-sm75-test-lab-mapped.log" 2>&1
# lab-pinned (GPU 1 for the second context)
t 60 $c/bin/lab-pinned --flags --no-sweep >"$logs/pinned-flags-two-threads.log" 2>&1
t 120 $c/tests/lab-pinned-gpu --include-ignored --test-threads=1 >"$logs/run-7-test-lab-pinned.log" 2>&1
# lab-streams
t 60 $c/bin/lab-streams --mode overlap >"$logs/overlap-as-printed.log" 2>&1
t 60 $c/bin/lab-streams --mode overlap --seed 4 >"$logs/overlap-as-printed-seed-4.log" 2>&1
# dev-profile default runs, timed (what `cargo run -p lab-x` runs)
for lab in lab-memory lab-mmm lab-mapped lab-pinned lab-streams; do
  s=$(date +%s%N); t 120 $c/dev/$lab >"$logs/dev-default-$lab.log" 2>&1; rc=$?; e=$(date +%s%N)
  echo "$lab rc=$rc $(( (e - s) / 1000000 )) ms" >>"$logs/dev-default-times.txt"
done

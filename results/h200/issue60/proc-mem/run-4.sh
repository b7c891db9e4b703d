#!/usr/bin/env bash
# Issue 60, run 4: the box without mem files and the recorder's thread names, on more of the program
# weeks: week 5's program tests (our solutions and the broken programs judged by their traces, a
# program without our trace), from the bundle of 24c3d5e (.gpu87/), and week 6's honest corpus (ten
# programs: cudaMallocHost, cudaHostRegister, mapped memory, ...), from run 3's bundle (.gpu86/).
# Into $OUT/proc-mem-4.tgz.
set -u
mkdir -p .gpu86/b .gpu87/b && tar -C .gpu86/b -xzf .gpu86/bundle.tgz && tar -C .gpu87/b -xzf .gpu87/bundle.tgz
logs=$(mktemp -d)
t() { local name=$1 limit=$2; shift 2; { echo "\$ $*"; start=$(date +%s%N); timeout "$limit" "$@"; code=$?; echo "exit $code, wall $(( ($(date +%s%N) - start) / 1000000 )) ms"; } >"$logs/$name.log" 2>&1; tar -C "$logs" -czf "$OUT/proc-mem-4.tgz" .; }
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; uname -r; date -u; } > "$logs/gpu.txt"
LAB_BIN_DIR=$PWD/.gpu87/b/bin t week5-programs 300 .gpu87/b/tests/streams --include-ignored --test-threads 1 week_5_programs_are_judged week_5_a_program_without week_5_mmm_streamed_is_judged
LAB_BIN_DIR=$PWD/.gpu86/b/bin t week6-honest 250 .gpu86/b/tests/mapped --include-ignored --test-threads 1 week_6_the_honest_corpus
tail -n 3 "$logs"/*.log | grep -v "^$"

#!/usr/bin/env bash
# Issue 61, run 1 (bundle in .gpu87/): week 3 counts generic loads that reached global memory (L1's
# requests for global loads beside the load instructions), and only a kernel that prints must have
# none (the PTX rule). Whether the new metric exists on every chip; the checks of ours, the honest
# zero-from-shared.cu (a false FAIL before), the generic-load adversaries and printf-every-thread.cu;
# week 3's red team, the naive body's test, and weeks 2 and 3's random legal cases with the honest
# corpus. Into $OUT/generic-1.tgz.
set -u
mkdir -p .gpu87/b && tar -C .gpu87/b -xzf .gpu87/bundle.tgz
export LAB_BIN_DIR=$PWD/.gpu87/b/bin B=$PWD/.gpu87/b/bin T=$PWD/.gpu87/b/tests
logs=$(mktemp -d)
t() { local name=$1 limit=$2; shift 2; { echo "\$ $*"; start=$(date +%s%N); timeout "$limit" "$@"; code=$?; echo "exit $code, wall $(( ($(date +%s%N) - start) / 1000000 )) ms"; } >"$logs/$name.log" 2>&1; tar -C "$logs" -czf "$OUT/generic-1.tgz" .; }
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; uname -r; date -u; } > "$logs/gpu.txt"
for chip in tu104 ga100 ad102 gh100 gb202; do
    printf '%s: ' $chip; /usr/local/cuda/bin/ncu --query-metrics --chip $chip 2>&1 | grep -c "^l1tex__t_requests_pipe_lsu_mem_global_op_ld "
done > "$logs/metric.log"
for file in kernels/cuda/mmm.cu assignments/03-mmm-tiled/honest/zero-from-shared.cu assignments/03-mmm-tiled/honest/padded-tiles.cu \
    assignments/03-mmm-tiled/adversarial/generic-pointers.cu assignments/03-mmm-tiled/adversarial/asm-generic-loads.cu \
    assignments/03-mmm-tiled/adversarial/generic-loads-beside-printf.cu; do
    t "check-$(basename "$file" .cu)" 90 $B/lab-mmm --kernel-source "$file" --kernel tiled --check
done
printf '1 1 1 f64 1\n100 7 129 f32 2\n255 257 256 f64 3\n' > "$logs/chatty-cases.txt"
t check-printf-every-thread 120 $B/lab-mmm --kernel-source assignments/03-mmm-tiled/broken/printf-every-thread.cu --kernel tiled --check --cases "$logs/chatty-cases.txt"
t red-team 200 $T/mmm --include-ignored --test-threads 1 the_week_3_red_team
t naive-body 60 $T/mmm --include-ignored --test-threads 1 week_3_the_naive_body
t legal 200 $T/mmm --include-ignored --test-threads 1 weeks_2_and_3_random_legal_cases
cat "$logs/metric.log"
tail -n 2 "$logs"/*.log | grep -v "^$"
grep -h "global loads per element" "$logs"/check-*.log | cut -c1-200

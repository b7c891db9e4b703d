#!/usr/bin/env bash
# Runs on a GPU machine, from the repository root, with what scripts/gpu-bundle.sh built (no Rust
# needed): every GPU test executable, then every lab's experiment from the table below, then, with
# RUN_BENCHES=1, the criterion benchmarks. The experiments on several GPUs run where the machine has
# two or more, and are listed as not run otherwise; MULTI_GPU_ONLY=1 runs nothing else. Logs go to
# RESULTS (first argument, else gpu-bundle/results); a summary table ends the output. GPU_TEST_ARGS
# passes more arguments to every test executable ("--skip sanitize" leaves out the slow
# compute-sanitizer tests).
set -uo pipefail
bundle=$(cd "$(dirname "$0")" && pwd)
# The GPU tests that run a lab binary (assignments: --kernel-source, --check) find it here.
export LAB_BIN_DIR="$bundle/bin"
results=${1:-$bundle/results}
mkdir -p "$results"

# The labs' experiments: one line each, a label then the command line (which may start with
# VARIABLE=value settings); RESULTS stands for the results folder.
labs=(
    "simpson-default|lab-simpson"
    "simpson-ptxas|lab-simpson --ptxas"
    "simpson-peak|lab-simpson --integrand peak --intervals 16777216 --block-size 1024"
    "simpson-sin-1M|lab-simpson --integrand sin --a 0 --b 3.141592653589793 --block-size 128"
    "mmm-files|lab-mmm lab-mmm/data/A.txt lab-mmm/data/B.txt"
    "mmm-default-1024|lab-mmm"
    "mmm-4096|lab-mmm --random 4096"
    "mmm-non-square|lab-mmm --size 4097 1000 3001 --repetitions 3"
    "mmm-ptxas|lab-mmm --random 256 --ptxas"
    "mmm-ladder|lab-mmm --ladder"
    "mmm-ladder-awkward|lab-mmm --ladder --size 1000 777 1531"
    "dynamic-default-peak|lab-dynamic-parallel"
    "dynamic-pi|lab-dynamic-parallel --integrand pi --tolerance 0.000000000001"
    "dynamic-sin|lab-dynamic-parallel --integrand sin --a 0 --b 3 --tolerance 0.000000000001"
    "dynamic-exp|lab-dynamic-parallel --integrand exp --a -1 --b 2"
    "dynamic-ptxas|lab-dynamic-parallel --ptxas --repetitions 3"
    "tracer-default|lab-constant-tracer --output RESULTS/tracer.png"
    "tracer-scene-file|lab-constant-tracer --scene lab-constant-tracer/scenes/three.txt --output RESULTS/three.png --no-sweep"
    "tracer-ptxas|lab-constant-tracer --ptxas --no-sweep --spheres 8 --output RESULTS/eight.png"
    "streams-mmm|lab-streams --timeline RESULTS/streams-timeline.svg"
    "streams-chunked|lab-streams --mode chunked --timeline RESULTS/chunked-timeline.svg"
    "streams-chunked-pageable|lab-streams --mode chunked --host-memory pageable"
    "streams-fifteen|lab-streams --mode fifteen --timeline RESULTS/fifteen-timeline.svg"
    "streams-fifteen-pageable|lab-streams --mode fifteen --host-memory pageable"
    "streams-fifteen-as-printed|lab-streams --mode fifteen --as-printed"
    "streams-mmm-as-printed|lab-streams --size 1024 --as-printed"
    "streams-overlap|lab-streams --mode overlap"
    "streams-concurrent|lab-streams --mode concurrent --timeline RESULTS/concurrent-timeline.svg"
    "streams-concurrent-by-stream|lab-streams --mode concurrent --order stream-by-stream --timeline RESULTS/concurrent-by-stream-timeline.svg"
    "streams-concurrent-by-stream-32-queues|CUDA_DEVICE_MAX_CONNECTIONS=32 lab-streams --mode concurrent --order stream-by-stream --timeline RESULTS/concurrent-by-stream-32-timeline.svg"
    "streams-concurrent-132-blocks|lab-streams --mode concurrent --blocks-per-kernel 132 --steps 200000 --timeline RESULTS/concurrent-132-blocks-timeline.svg"
    "pinned|lab-pinned --timeline RESULTS/pinned-timeline.svg --plot RESULTS/bandwidth.svg"
    "mapped|lab-mapped"
    "mapped-as-printed|lab-mapped --as-printed"
    "mapped-write-combined|lab-mapped --write-combined --count 2"
    "memory-default|lab-memory --plot RESULTS/coalescing.svg"
    "memory-indexing-awkward|lab-memory --mode indexing --grid 70 3 2 --block 7 5 3"
    "memory-coalescing-awkward|lab-memory --mode coalescing --notes-threads 768 --buffer-bytes 100000003"
    "memory-banks-awkward|lab-memory --mode banks --steps 999 --transpose 1000 3001"
    "memory-registers-ptxas|lab-memory --mode registers --ptxas --rounds 257"
)

# On two or more GPUs: the German products and the French pipeline spread over all of them.
multi_gpu_labs=(
    "devices-mmm|lab-streams --devices GPUS --timeline RESULTS/devices-mmm-timeline.svg"
    "devices-mmm-4096|lab-streams --devices GPUS --size 4096"
    "devices-mmm-awkward|lab-streams --devices GPUS --size 1000 --count 5 --block-size 32"
    "devices-chunked|lab-streams --devices GPUS --mode chunked --timeline RESULTS/devices-chunked-timeline.svg"
    "devices-chunked-1GiB|lab-streams --devices GPUS --mode chunked --elements 268435456"
    "devices-chunked-awkward|lab-streams --devices GPUS --mode chunked --elements 1000003 --steps 37"
)

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv | tee "$results/gpu.txt"
gpus=$(nvidia-smi -L | grep -c '^GPU ')
rows=()
passed=0
failed=0

# Runs one experiment ("label|command"): its log, and its row with the verdict and the first time.
run_lab() {
    local label=${1%%|*} settings=() command
    read -r -a command <<<"${1#*|}"
    command=("${command[@]//RESULTS/$results}")
    command=("${command[@]//GPUS/$gpus}")
    while [[ ${command[0]} == *=* ]]; do settings+=("${command[0]}"); command=("${command[@]:1}"); done
    env "${settings[@]}" "$bundle/bin/${command[0]}" "${command[@]:1}" >"$results/$label.log" 2>&1
    local rc=$? verdict
    local key
    key=$(grep -m 1 -oE '(GPU|host) time in ms: [0-9.]+' "$results/$label.log" | sed -E 's/ time in ms: / /; s/$/ ms/')
    if [[ $rc == 0 ]] && grep -q 'Result = PASS' "$results/$label.log"; then
        verdict=PASS; passed=$((passed + 1))
    else
        verdict=FAIL; failed=$((failed + 1)); tail -n 5 "$results/$label.log"
    fi
    rows+=("$label|$verdict|${key:-}")
}

if [[ ${MULTI_GPU_ONLY:-0} == 1 ]]; then labs=(); tests=(); else tests=("$bundle"/tests/*); fi

for test in "${tests[@]}"; do
    name=$(basename "$test")
    # GPU_TEST_ARGS: more arguments for every test executable, e.g. "--skip sanitize".
    # shellcheck disable=SC2086
    "$test" --include-ignored --test-threads=1 ${GPU_TEST_ARGS:-} >"$results/$name.log" 2>&1
    rc=$?
    summary=$(grep -E '^test result:' "$results/$name.log" | tail -n 1)
    ok=$(sed -E 's/.* ([0-9]+) passed.*/\1/' <<<"$summary")
    bad=$(sed -E 's/.* ([0-9]+) failed.*/\1/' <<<"$summary")
    if [[ $rc == 0 && -n $summary ]]; then verdict=PASS; passed=$((passed + 1)); else verdict=FAIL; failed=$((failed + 1)); fi
    rows+=("$name|$verdict|${ok:-?} tests passed, ${bad:-?} failed")
    [[ $verdict == FAIL ]] && grep -E 'panicked|FAILED|failed' "$results/$name.log" | head -n 20
done

for entry in "${labs[@]}"; do
    run_lab "$entry"
done

if ((gpus >= 2)); then
    for entry in "${multi_gpu_labs[@]}"; do
        run_lab "$entry"
    done
else
    for entry in "${multi_gpu_labs[@]}"; do
        rows+=("${entry%%|*}|not run|needs 2 GPUs, this machine has $gpus")
    done
fi
# Asking for one GPU more than there are is a one-line error.
"$bundle/bin/lab-streams" --devices $((gpus + 1)) >"$results/devices-too-many.log" 2>&1
if [[ $? == 1 ]] && grep -q "^lab-streams: error: --devices $((gpus + 1)): this machine has $gpus GPU" "$results/devices-too-many.log"; then
    passed=$((passed + 1)); rows+=("devices-too-many|PASS|one-line error")
else
    failed=$((failed + 1)); rows+=("devices-too-many|FAIL|$(head -c 60 "$results/devices-too-many.log")")
fi

if [[ ${RUN_BENCHES:-0} == 1 ]]; then
    for bench in "$bundle"/benches/*; do
        CRITERION_HOME=/tmp/criterion "$bench" --bench >"$results/bench-$(basename "$bench").log" 2>&1 ||
            echo "benchmark $(basename "$bench") failed"
    done
fi

echo
printf '| %-40s | %-7s | %-40s |\n' "test or lab" verdict "key number"
printf '|%s|%s|%s|\n' "$(printf -- '-%.0s' {1..42})" "$(printf -- '-%.0s' {1..9})" "$(printf -- '-%.0s' {1..42})"
for row in "${rows[@]}"; do
    IFS='|' read -r name verdict key <<<"$row"
    printf '| %-40s | %-7s | %-40s |\n' "$name" "$verdict" "$key"
done
echo "gpu: $passed passed, $failed failed"
[[ $failed == 0 ]]

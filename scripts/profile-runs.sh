#!/usr/bin/env bash
# Runs on a GPU machine, from the repository root, with what scripts/gpu-bundle.sh built: every lab
# under --profile (nvprof's summary from CUPTI, the slides' tables, each timed window against CUPTI),
# the chronograms from CUPTI's records, one Perfetto trace, and --counters (Nsight Compute) for the
# lessons about hardware. One log per run in RESULTS (first argument, else gpu-bundle/profile): what
# results/<gpu>/profile/ holds and the READMEs quote.
#
#   bash gpu-bundle/profile-runs.sh [RESULTS]
set -uo pipefail
bundle=$(cd "$(dirname "$0")" && pwd)
results=${1:-$bundle/profile}
mkdir -p "$results"
B=$bundle/bin
nvidia-smi --query-gpu=name,driver_version --format=csv >"$results/gpu.txt"

# name|command, RESULTS standing for the results folder
runs=(
    "p-simpson|lab-simpson --profile"
    "p-mmm|lab-mmm --profile"
    "p-ladder|lab-mmm --ladder --profile"
    "p-streams|lab-streams --profile --timeline RESULTS/streams.svg --trace RESULTS/streams.json"
    "p-streams-4096|lab-streams --size 4096 --repetitions 1 --profile"
    "p-chunked|lab-streams --mode chunked --profile --timeline RESULTS/chunked.svg"
    "p-fifteen|lab-streams --mode fifteen --profile --timeline RESULTS/fifteen.svg"
    "p-overlap|lab-streams --mode overlap --profile"
    "p-concurrent|lab-streams --mode concurrent --profile"
    "p-pinned|lab-pinned --profile --timeline RESULTS/pinned.svg"
    "p-mapped|lab-mapped --profile"
    "p-tracer|lab-constant-tracer --output RESULTS/tracer.png --profile"
    "p-dynamic|lab-dynamic-parallel --profile"
    "p-memory|lab-memory --profile"
    "c-banks|lab-memory --mode banks --repetitions 1 --counters"
    "c-coalescing|lab-memory --mode coalescing --repetitions 1 --counters"
    "c-registers|lab-memory --mode registers --repetitions 1 --counters"
    "c-ladder|lab-mmm --ladder --repetitions 1 --counters"
)
failed=0
for entry in "${runs[@]}"; do
    name=${entry%%|*}
    read -r -a command <<<"${entry#*|}"
    command=("${command[@]//RESULTS/$results}")
    rm -f "$results/$name.log"
    if ! "$B/${command[0]}" "${command[@]:1}" >"$results/$name.log" 2>&1; then
        failed=$((failed + 1))
        echo "$name failed: $(tail -n 1 "$results/$name.log")"
    fi
done
echo "profile runs: ${#runs[@]}, failed: $failed (logs in $results)"
((failed == 0))

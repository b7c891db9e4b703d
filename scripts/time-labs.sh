#!/usr/bin/env bash
# Every lab's default run (what `cargo run -p lab-x` does), in the release and the dev profile, timed
# from outside (wall time, process start to exit) and split by the lab itself into setup, GPU,
# verification and output (LAB_PHASES=1, see common/src/phases.rs). Ends with one table.
#
#   bash scripts/time-labs.sh          # on a machine with Rust and a GPU: builds both profiles first
#   bash gpu-bundle/time-labs.sh       # on the GPU machine, with what scripts/gpu-bundle.sh built
#
# Each lab runs in a fresh empty folder, so default output files (tracer.png) never meet an old one.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if [[ -d $here/bin && -d $here/bin-dev ]]; then
    release=$here/bin
    dev=$here/bin-dev
else
    root=$(cd "$here/.." && pwd)
    (cd "$root" && cargo build --release --workspace --bins --locked && cargo build --workspace --bins --locked) || exit 1
    release=$root/target/release
    dev=$root/target/debug
fi
labs=(lab-simpson lab-mmm lab-streams lab-pinned lab-mapped lab-constant-tracer lab-dynamic-parallel lab-memory)

# "phases: setup 1.0 ms, GPU 2.0 ms, verification 3.0 ms, output 4.0 ms, total 10.0 ms" -> "1.0 2.0 3.0 4.0"
phases_of() {
    sed -nE 's/^phases: setup ([0-9.]+) ms, GPU ([0-9.]+) ms, verification ([0-9.]+) ms, output ([0-9.]+) ms, .*/\1 \2 \3 \4/p' "$1"
}

seconds() { awk -v ms="$1" 'BEGIN { printf "%.2f", ms / 1000 }'; }

rows=()
slow=0
for profile in release dev; do
    bin=${!profile}
    for lab in "${labs[@]}"; do
        folder=$(mktemp -d)
        start=$EPOCHREALTIME
        (cd "$folder" && LAB_PHASES=1 "$bin/$lab" >stdout.txt 2>stderr.txt)
        rc=$?
        wall=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }')
        read -r setup gpu verify output <<<"$(phases_of "$folder/stderr.txt")"
        if [[ $rc == 0 ]] && grep -q 'Result = PASS' "$folder/stdout.txt"; then verdict=PASS; else verdict="FAIL ($rc)"; fi
        awk -v w="$wall" 'BEGIN { exit !(w > 5) }' && slow=$((slow + 1))
        rows+=("| $lab | $profile | $wall | $(seconds "${setup:-0}") | $(seconds "${gpu:-0}") | $(seconds "${verify:-0}") | $(seconds "${output:-0}") | $verdict |")
        [[ $verdict == PASS ]] || tail -n 3 "$folder/stderr.txt"
        rm -rf "$folder"
    done
done

echo
nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | sed 's/^/GPU: /'
echo "| lab | profile | wall s | setup s | GPU s | verification s | output s | verdict |"
echo "|-----|---------|--------|---------|-------|----------------|----------|---------|"
printf '%s\n' "${rows[@]}"
echo "default runs over 5 s: $slow"

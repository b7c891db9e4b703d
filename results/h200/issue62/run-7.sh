#!/usr/bin/env bash
# Issue 62, run 7 (one H200): our own solution of every week on the corners of the week's legal case
# space (results/h200/issue62/corners/: the largest sizes each field allows, the smallest, the
# thinnest shapes; each file's lines as the lab's --cases parser accepts them). The labs: the release
# bundle of .gpu98, with lab-mmm and lab-constant-tracer of .gpu99 (the tracer's sampled timed
# renders). Each check has a time limit of its own; logs into $OUT.
set -u
work=$(mktemp -d)
tar -C "$work" -xzf .gpu98/bundle.tgz
tar -C "$work" -xzf .gpu99/bundle.tgz
bin=$work/gpu-bundle/bin
cp "$work/b/bin/lab-mmm" "$work/b/bin/lab-constant-tracer" "$bin/"
# (the corner files have since moved to each lab's tests/corners*.txt)
corners=results/h200/issue62/corners
nvidia-smi -L > "$OUT/gpu.txt"
check() {
    local name=$1 limit=$2; shift 2
    start=$(date +%s%N)
    timeout "$limit" "$@" > "$OUT/$name.log" 2>&1
    code=$?
    echo "exit $code, wall $(( ($(date +%s%N) - start) / 1000000 )) ms" >> "$OUT/$name.log"
    echo "$name: $(grep -E '^(Solution|all|lab-[a-z-]+: error)' "$OUT/$name.log" | head -2 | tr '\n' ' ') $(tail -n 1 "$OUT/$name.log")"
}
check 01-simpson 40 "$bin/lab-simpson" --kernel-source kernels/cuda/simpson.cu --check --cases $corners/01-simpson.txt
check 03-mmm-tiled 110 "$bin/lab-mmm" --kernel tiled --kernel-source kernels/cuda/mmm.cu --check --cases $corners/03-mmm-tiled.txt
check 04-constant-tracer 60 "$bin/lab-constant-tracer" --kernel-source kernels/cuda/tracer.cu --check --cases $corners/04-constant-tracer.txt
check 07-dynamic-parallelism 60 "$bin/lab-dynamic-parallel" --kernel-source kernels/cuda/adaptive_simpson.cu --check --cases $corners/07-dynamic-parallelism.txt
check 05-streams 90 "$bin/lab-streams" --program-source reference/weeks/pipeline.cu --check --cases $corners/05-streams.txt
check 05-mmm-streamed 60 "$bin/lab-streams" --program mmm-streamed --program-source reference/weeks/mmm_streamed.cu --check --cases $corners/mmm-streamed.txt
check 06-pinned-mapped 40 "$bin/lab-mapped" --program-source reference/weeks/zero_copy.cu --check --cases $corners/06-pinned-mapped.txt
